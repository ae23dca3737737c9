//! The tensor itself: how it is created and prints, its views, its methods, its arithmetic and its bool masks.

mod arithmetic;
mod creation;
mod einsum;
mod indexing;
mod masks;
mod methods;
mod print;
mod promotion;
mod views;
