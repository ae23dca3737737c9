//! Every draw against PyTorch 2.5.1's (`tests/fixtures/generate/random_streams.py`), bit for bit: each seed
//! and size (1 to 40 and 1,000, both sides of the 16-element boundary of PyTorch's normal fill), each float
//! dtype; the cached second normal carried between draws; the generator's state in PyTorch's layout.

use integration_tests::{bit_equal, short};
use nn::random::Generator;
use nn::{DType, StateDict, Tensor};

const SEEDS: [u64; 5] = [0, 1, 7, 1234, (1 << 40) + 5];
const FLOATS: [DType; 4] = [DType::F64, DType::F32, DType::F16, DType::BF16];

fn fixture() -> StateDict {
    integration_tests::tensors("random/streams.safetensors")
}

/// A draw from a generator.
type Draw = Box<dyn Fn(&mut Generator) -> Tensor>;

/// Each draw of `n` elements, named as the fixture names it.
fn draws(n: usize) -> Vec<(String, Draw)> {
    let mut out: Vec<(String, Draw)> = Vec::new();
    for dtype in FLOATS {
        let d = short(dtype);
        out.push((
            format!("rand.{d}"),
            Box::new(move |g| Tensor::try_rand_with([n], dtype, g).unwrap()),
        ));
        out.push((
            format!("uniform.{d}"),
            Box::new(move |g| Tensor::try_uniform_with([n], -0.37, 1.5, dtype, g).unwrap()),
        ));
        out.push((
            format!("randn.{d}"),
            Box::new(move |g| Tensor::randn_with([n], dtype, g)),
        ));
        out.push((
            format!("normal.{d}"),
            Box::new(move |g| Tensor::try_normal_with([n], 0.7, 0.3, dtype, g).unwrap()),
        ));
    }
    out.push((
        "randint.i64".into(),
        Box::new(move |g| Tensor::randint_with(-5, 17, [n], DType::I64, g).unwrap()),
    ));
    out.push((
        "randint_wide.i64".into(),
        Box::new(move |g| Tensor::randint_with(0, 1 << 40, [n], DType::I64, g).unwrap()),
    ));
    for dtype in [DType::F32, DType::I32, DType::U8] {
        out.push((
            format!("randint7.{}", short(dtype)),
            Box::new(move |g| Tensor::randint_with(0, 7, [n], dtype, g).unwrap()),
        ));
    }
    out.push((
        "randperm.i64".into(),
        Box::new(move |g| Tensor::randperm_with(n, DType::I64, g).unwrap()),
    ));
    out
}

#[test]
fn every_draw_is_pytorchs_bit_for_bit() {
    let f = fixture();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for seed in SEEDS {
        for n in (1..=40).chain([1000]) {
            for (name, draw) in draws(n) {
                let key = format!("{seed}.{n}.{name}");
                let got = draw(&mut Generator::new(seed));
                if !bit_equal(&got, &f[&key]) {
                    wrong.push(key);
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 5 * 41 * 22);
    assert!(
        wrong.is_empty(),
        "{} of {checked} draws differ from PyTorch's: {wrong:?}",
        wrong.len()
    );
}

/// `randn(3)` leaves the pair's second normal cached: the next draw starts with it, and the state records it.
#[test]
fn the_cached_normal_carries_between_draws_and_into_the_state() {
    let f = fixture();
    for seed in SEEDS {
        let mut g = Generator::new(seed);
        assert!(
            bit_equal(&g.get_state(), &f[&format!("{seed}.state")]),
            "seed {seed}: state"
        );
        let parts = [
            Tensor::randn_with([3], DType::F64, &mut g),
            Tensor::randn_with([5], DType::F64, &mut g),
            Tensor::try_rand_with([2], DType::F64, &mut g).unwrap(),
        ];
        let mix: Vec<f64> = parts.iter().flat_map(|t| t.to_vec::<f64>().unwrap()).collect();
        assert_eq!(
            mix,
            f[&format!("{seed}.mix")].to_vec::<f64>().unwrap(),
            "seed {seed}: mix"
        );

        let mut g = Generator::new(seed);
        Tensor::randn_with([3], DType::F64, &mut g);
        let cached = &f[&format!("{seed}.state_cached")];
        assert!(
            bit_equal(&g.get_state(), cached),
            "seed {seed}: state with a cached normal"
        );
        // PyTorch's state restores here: the next draws are the ones after randn(3).
        let mut restored = Generator::new(99);
        restored.set_state(cached).unwrap();
        let next = Tensor::randn_with([5], DType::F64, &mut restored)
            .to_vec::<f64>()
            .unwrap();
        assert_eq!(next, mix[3..8].to_vec(), "seed {seed}: draws after a restored state");
    }
}

/// A state that is not one is PyTorch's error, and the generator stays as it was.
#[test]
fn a_bad_state_is_refused_and_changes_nothing() {
    let mut g = Generator::new(5);
    let before = g.clone();
    let short_state = Tensor::zeros([100], DType::U8);
    let e = g.set_state(&short_state).unwrap_err().to_string();
    assert!(e.contains("but found the input RNG state size to be 100"), "{e}");
    let e = g.set_state(&Tensor::zeros([5056], DType::F32)).unwrap_err().to_string();
    assert!(e.contains("RNG state must be a torch.ByteTensor"), "{e}");
    // A zeroed state of the right size is unseeded: PyTorch's "Invalid mt19937 state".
    let e = g.set_state(&Tensor::zeros([5056], DType::U8)).unwrap_err().to_string();
    assert!(e.contains("Invalid mt19937 state"), "{e}");
    assert_eq!(g, before);
}
