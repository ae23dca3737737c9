//! The tensor itself: how it prints, and its views.

mod print;
mod views;
