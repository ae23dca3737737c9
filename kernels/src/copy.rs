//! A device-to-device copy of 4-byte words: buffers are allocated in whole words, so it serves every dtype.

use cubecl::prelude::*;

use crate::GpuBuffer;
use crate::launch::{arg, cube_count, cube_dim, vector_size};

#[cube(launch_unchecked)]
fn copy_kernel<N: Size>(input: &[Vector<u32, N>], output: &mut [Vector<u32, N>]) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS];
    }
}

/// Copies the first `words` 4-byte words of `src` into `dst`, both on one device and allocated with at least
/// that many words.
pub(crate) fn copy_words(src: &GpuBuffer, dst: &GpuBuffer, words: usize) {
    let vector = vector_size(words, words);
    // SAFETY: both buffers are allocated with at least `words` u32 words (callers pass the word count of
    // their common allocation), and the kernel writes
    // only indices below the output's length in vectors.
    unsafe {
        copy_kernel::launch_unchecked(
            src.device().client(),
            cube_count(src, words / vector),
            cube_dim(),
            vector,
            arg(src, words),
            arg(dst, words),
        )
    }
}
