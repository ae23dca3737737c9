//! PyTorch's random streams: the same seed, the same numbers.

mod init;
mod streams;
