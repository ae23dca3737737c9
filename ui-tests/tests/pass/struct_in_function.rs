use nn::prelude::*;

fn build() -> usize {
    #[derive(Module)]
    struct Local {
        fc: Linear,
    }
    mod inner {
        #[derive(nn::Module)]
        pub struct Deeper {
            pub fc: nn::layers::Linear,
        }
    }
    let a = Local {
        fc: Linear::new(1, 1, true),
    };
    let b = inner::Deeper {
        fc: Linear::new(1, 1, true),
    };
    a.state_dict().len() + b.state_dict().len()
}

pub fn main() {
    assert_eq!(build(), 4);
}
