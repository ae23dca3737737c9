//! [`Ctxt`]: collects every error of a derive so they are all reported at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// Errors gathered while reading a struct. [`Ctxt::check`] must be called before it is dropped.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// A context with no errors yet.
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error at the span of `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// An error from syn (such as a failed parse).
    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt::check was already called")
            .push(error);
    }

    /// All errors, or `Ok` when there are none.
    pub fn check(self) -> Result<(), Vec<syn::Error>> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt::check was already called");
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to call Ctxt::check");
        }
    }
}
