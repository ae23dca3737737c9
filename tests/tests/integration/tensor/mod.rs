//! The tensor itself: how it is created and prints, its views, and its methods.

mod creation;
mod methods;
mod print;
mod views;
