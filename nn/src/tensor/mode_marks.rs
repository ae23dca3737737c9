//! The marks a handle (a tensor's, a parameter's, a hooks table) carries for the modules that keep their mode
//! on it: plain data here; [`crate::module::mode`] says who sets and reads which mark.

/// Sixty-four eval-mode marks: mark 0 is the mode of the module that owns the handle; mark `d` is the mode of
/// the module `d` levels above it, when that module has no `training` field. A set mark means eval mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ModeMarks(u64);

impl ModeMarks {
    /// No mark set: every module training.
    pub(crate) const NONE: ModeMarks = ModeMarks(0);

    /// How many levels the marks reach (mark `0` to `DEPTHS - 1`).
    pub(crate) const DEPTHS: usize = 64;

    /// Whether mark `depth` is set (eval mode); `false` past [`Self::DEPTHS`].
    pub(crate) fn eval_at(self, depth: usize) -> bool {
        depth < Self::DEPTHS && self.0 & (1 << depth) != 0
    }

    /// Sets mark `depth` for eval mode, clears it for training; nothing past [`Self::DEPTHS`].
    pub(crate) fn set_eval_at(&mut self, depth: usize, eval: bool) {
        if depth < Self::DEPTHS {
            let bit = 1u64 << depth;
            self.0 = if eval { self.0 | bit } else { self.0 & !bit };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ModeMarks;

    #[test]
    fn each_depth_keeps_its_own_mark() {
        let mut m = ModeMarks::NONE;
        m.set_eval_at(0, true);
        m.set_eval_at(3, true);
        assert!(m.eval_at(0) && m.eval_at(3) && !m.eval_at(1) && !m.eval_at(63));
        m.set_eval_at(0, false);
        assert!(!m.eval_at(0) && m.eval_at(3));
        m.set_eval_at(ModeMarks::DEPTHS, true);
        assert!(!m.eval_at(ModeMarks::DEPTHS));
        assert_eq!(m, {
            let mut n = ModeMarks::NONE;
            n.set_eval_at(3, true);
            n
        });
    }
}
