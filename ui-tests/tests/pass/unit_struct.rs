use nn::prelude::*;

#[derive(Module)]
#[module(name = "Nothing")]
struct Empty;

pub fn main() {
    assert_eq!(Empty.to_string(), "Nothing()");
    assert!(Empty.state_dict().is_empty());
    assert!(<Empty as StaticKeys>::KEYS.is_empty());
}
