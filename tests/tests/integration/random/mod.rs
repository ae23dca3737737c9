//! PyTorch's random streams: the same seed, the same numbers.

mod distributions;
mod dropout;
mod init;
mod streams;
