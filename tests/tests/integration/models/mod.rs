//! Whole models against PyTorch: the zoo, EfficientZero's DynamicsNetwork, the digits classifier.

mod digits;
mod efficientzero;
mod zoo;
