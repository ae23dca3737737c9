//! Matrix products: nn's `matmul` (on `matrixmultiply`, its rows split over nn's pool from 16M multiply-adds)
//! next to the `gemm` crate (which takes a rayon parallelism argument), on 1 and 2 threads, f32, row-major.
//! Issue 19 asked for this comparison before choosing; nn's figures include allocating the output (from
//! nn's buffer pool), `gemm`'s write into a preallocated one.
//!
//! `cargo bench -p nn --bench gemm`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use nn::{DType, Tensor};

fn bench(c: &mut Criterion) {
    // The model's linear layers' sizes, an LSTM-sized one, and two square products.
    let shapes = [(256, 36, 16), (256, 64, 128), (512, 512, 512), (1024, 1024, 1024)];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut g = c.benchmark_group("f32 matmul");
    g.sample_size(20);
    for (m, k, n) in shapes {
        let a = Tensor::randn([m, k], DType::F32);
        let b = Tensor::randn([k, n], DType::F32);
        let (av, bv) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
        let mut cv = vec![0.0f32; m * n];
        for threads in [1, 2] {
            nn::set_num_threads(threads);
            g.bench_function(format!("{m}x{k}x{n}, nn matmul, {threads} thread(s)"), |bench| {
                bench.iter(|| black_box(a.matmul(&b).unwrap()))
            });
            let parallelism = match threads {
                1 => gemm::Parallelism::None,
                t => gemm::Parallelism::Rayon(t),
            };
            g.bench_function(format!("{m}x{k}x{n}, gemm 0.18, {threads} thread(s)"), |bench| {
                pool.install(|| {
                    bench.iter(|| {
                        let (dst, lhs, rhs) = (cv.as_mut_ptr(), av.as_ptr(), bv.as_ptr());
                        let (m, n, k) = (m, n, k);
                        // SAFETY: `lhs` points to m·k, `rhs` to k·n and `dst` to m·n live f32s, row-major: the
                        // strides given (column stride 1, row stride k, n and n) keep every access inside them;
                        // `read_dst` is false, so `dst`'s values are never read, only written.
                        unsafe {
                            gemm::gemm(
                                m,
                                n,
                                k,
                                dst,
                                1,
                                n as isize,
                                false,
                                lhs,
                                1,
                                k as isize,
                                rhs,
                                1,
                                n as isize,
                                0.0,
                                1.0,
                                false,
                                false,
                                false,
                                parallelism,
                            )
                        }
                    });
                    black_box(&cv);
                })
            });
        }
    }
    nn::set_num_threads(0);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
