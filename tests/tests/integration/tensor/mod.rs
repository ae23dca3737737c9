//! The tensor itself: how it is created and prints, its views, its methods and its bool masks.

mod creation;
mod einsum;
mod indexing;
mod masks;
mod methods;
mod print;
mod promotion;
mod views;
