//! `nn::init` against PyTorch's formulas: `calculate_gain`'s table, the spread of the Kaiming and Xavier
//! initialisations (sample standard deviations of large tensors against `gain / √fan`), `trunc_normal_`'s
//! bounds and moments (against the truncated normal's closed forms), `orthogonal_`'s orthogonality for tall,
//! wide and convolution-shaped weights, and refusals.

use nn::init::{
    FanMode, calculate_gain, kaiming_normal_, kaiming_uniform_with, orthogonal_, trunc_normal_, xavier_normal_,
};
use nn::{DType, Tensor};

fn moments(t: &Tensor) -> (f64, f64) {
    let v = t.to_vec_f64().unwrap();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[test]
fn gains_are_pytorchs() {
    // torch.nn.init.calculate_gain in PyTorch 2.5.1.
    assert_eq!(calculate_gain("linear", None).unwrap(), 1.0);
    assert_eq!(calculate_gain("conv2d", None).unwrap(), 1.0);
    assert_eq!(calculate_gain("sigmoid", None).unwrap(), 1.0);
    assert_eq!(calculate_gain("tanh", None).unwrap(), 5.0 / 3.0);
    assert_eq!(calculate_gain("relu", None).unwrap(), std::f64::consts::SQRT_2);
    assert_eq!(
        calculate_gain("leaky_relu", None).unwrap(),
        (2.0f64 / (1.0 + 0.01 * 0.01)).sqrt()
    );
    assert_eq!(calculate_gain("leaky_relu", Some(0.2)).unwrap(), (2.0f64 / 1.04).sqrt());
    assert_eq!(calculate_gain("selu", None).unwrap(), 0.75);
    assert!(calculate_gain("gelu", None).is_err());
}

#[test]
fn kaiming_and_xavier_have_the_formula_spread() {
    integration_tests::in_own_process(|| {
        nn::manual_seed(3);
        let t = Tensor::zeros([256, 64, 3, 3], DType::F32); // fan_in 576, fan_out 2304
        kaiming_normal_(&t, 0.0, FanMode::FanIn, "relu").unwrap();
        let (mean, std) = moments(&t);
        let want = 2f64.sqrt() / 576f64.sqrt();
        assert!(
            mean.abs() < 0.01 * want && (std / want - 1.0).abs() < 0.01,
            "{mean} {std} vs {want}"
        );
        kaiming_normal_(&t, 0.0, FanMode::FanOut, "relu").unwrap();
        let want = 2f64.sqrt() / 2304f64.sqrt();
        assert!((moments(&t).1 / want - 1.0).abs() < 0.01);
        kaiming_uniform_with(&t, 0.2, FanMode::FanIn, "leaky_relu").unwrap();
        let bound = (2.0f64 / 1.04).sqrt() * (3.0 / 576.0f64).sqrt();
        let v = t.to_vec_f64().unwrap();
        assert!(v.iter().all(|x| x.abs() <= bound));
        assert!((moments(&t).1 / (bound / 3f64.sqrt()) - 1.0).abs() < 0.01);
        xavier_normal_(&t, 1.5).unwrap();
        let want = 1.5 * (2.0f64 / (576.0 + 2304.0)).sqrt();
        assert!((moments(&t).1 / want - 1.0).abs() < 0.01);
        // A zero-element tensor is a no-op (PyTorch warns); fewer than 2 dimensions have no fans.
        assert!(kaiming_normal_(&Tensor::zeros([0, 3], DType::F32), 0.0, FanMode::FanIn, "relu").is_ok());
        assert!(kaiming_normal_(&Tensor::zeros([5], DType::F32), 0.0, FanMode::FanIn, "relu").is_err());
    });
}

#[test]
fn trunc_normal_stays_in_bounds_with_the_truncated_moments() {
    integration_tests::in_own_process(|| {
        nn::manual_seed(4);
        let t = Tensor::zeros([200_000], DType::F64);
        trunc_normal_(&t, 0.0, 1.0, -2.0, 2.0).unwrap();
        let v = t.to_vec_f64().unwrap();
        assert!(v.iter().all(|x| (-2.0..=2.0).contains(x)));
        // The standard normal truncated to [-2, 2]: mean 0, std sqrt(1 - 2·2·φ(2) / (Φ(2) - Φ(-2))) = 0.87963.
        let (mean, std) = moments(&t);
        assert!(mean.abs() < 0.01 && (std - 0.879_626).abs() < 0.005, "{mean} {std}");
        // One-sided: N(1, 0.5²) on [1, 3] has mean 1 + 0.5·φ(0)/(Φ(4) - Φ(0)) = 1.39894.
        trunc_normal_(&t, 1.0, 0.5, 1.0, 3.0).unwrap();
        let (mean, _) = moments(&t);
        assert!((mean - 1.398_94).abs() < 0.005, "{mean}");
        assert!(trunc_normal_(&t, 0.0, 1.0, 2.0, -2.0).is_err());
        // Bounds no draw of f64 reaches: PyTorch's erfinv(1) = inf, clamped to the upper bound.
        trunc_normal_(&t, 0.0, 1.0, 40.0, 41.0).unwrap();
        assert!(t.to_vec_f64().unwrap().iter().all(|v| *v == 41.0));
    });
}

#[test]
fn orthogonal_gives_orthonormal_rows_or_columns() {
    integration_tests::in_own_process(|| {
        nn::manual_seed(5);
        for shape in [vec![7, 3], vec![3, 7], vec![6, 2, 3], vec![5, 5]] {
            let t = Tensor::zeros(shape.clone(), DType::F32);
            orthogonal_(&t, 2.0).unwrap();
            let rows = shape[0];
            let cols = t.numel() / rows;
            let v = t.to_vec_f64().unwrap();
            let (small, big) = (rows.min(cols), rows.max(cols));
            // Columns orthogonal (tall) or rows orthogonal (wide), each of norm gain.
            for a in 0..small {
                for b in 0..small {
                    let dot: f64 = (0..big)
                        .map(|k| {
                            if rows >= cols {
                                v[k * cols + a] * v[k * cols + b]
                            } else {
                                v[a * cols + k] * v[b * cols + k]
                            }
                        })
                        .sum();
                    let want = if a == b { 4.0 } else { 0.0 };
                    assert!((dot - want).abs() < 1e-5, "{shape:?}: ({a}, {b}) = {dot}");
                }
            }
        }
        assert!(orthogonal_(&Tensor::zeros([4], DType::F32), 1.0).is_err());
    });
}
