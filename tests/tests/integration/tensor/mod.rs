//! The tensor itself: how it prints.

mod print;
