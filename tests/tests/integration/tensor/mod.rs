//! The tensor itself: how it prints, its views, and its methods.

mod methods;
mod print;
mod views;
