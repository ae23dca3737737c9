use nn::module::{ExtraRepr, ExtraState};
use nn::prelude::*;

#[derive(Module)]
#[module(name = "Vocabulary", extra_repr, extra_state)]
struct Vocab {
    #[module(skip)]
    words: Vec<String>,
}

impl ExtraRepr for Vocab {
    fn extra_repr(&self) -> String {
        format!("size={}", self.words.len())
    }
}

impl ExtraState for Vocab {
    fn get_extra_state(&self) -> Tensor {
        Tensor::scalar(self.words.len() as i64)
    }
    fn set_extra_state(&mut self, state: Tensor) -> nn::Result<()> {
        self.words.resize(state.item()? as usize, String::new());
        Ok(())
    }
}

pub fn main() {
    let v = Vocab {
        words: vec!["a".into()],
    };
    assert_eq!(v.to_string(), "Vocabulary(size=1)");
    assert_eq!(v.state_dict().keys().collect::<Vec<_>>(), ["_extra_state"]);
}
