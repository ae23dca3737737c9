//! The derive's compile tests live in `tests/`: `fail/` (each misuse, with the error it must give) and
//! `pass/` (every supported shape of struct).
