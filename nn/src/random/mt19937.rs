//! PyTorch's Mersenne twister (`at::mt19937`, `aten/src/ATen/core/MT19937RNGEngine.h`): MT19937 seeded from the
//! low 32 bits of a 64-bit seed, with the bookkeeping (`left`, `next`) PyTorch's generator state records.

/// Words of the twister's state.
pub(crate) const STATE_WORDS: usize = 624;
/// The twist's middle word.
const MIDDLE: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// The engine and the fields of PyTorch's `mt19937_data_pod`, as `get_rng_state` stores them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mt19937 {
    /// The seed the engine was built from (all 64 bits; the state uses the low 32).
    pub(crate) seed: u64,
    /// Draws left before the next twist, plus one.
    pub(crate) left: i32,
    /// Whether the state was seeded (always, for a state PyTorch accepts).
    pub(crate) seeded: bool,
    /// The state word the next draw tempers.
    pub(crate) next: u32,
    /// The state.
    pub(crate) state: [u32; STATE_WORDS],
}

impl Mt19937 {
    /// The engine PyTorch builds from `seed` (`init_with_uint32`).
    pub(crate) fn new(seed: u64) -> Mt19937 {
        let mut state = [0u32; STATE_WORDS];
        state[0] = seed as u32;
        for j in 1..STATE_WORDS {
            let previous = state[j - 1];
            state[j] = 1_812_433_253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(j as u32);
        }
        Mt19937 {
            seed,
            left: 1,
            seeded: true,
            next: 0,
            state,
        }
    }

    /// Whether PyTorch's `is_valid` accepts this state (seeded, `left` in `1..=624`, `next` at most 624).
    pub(crate) fn is_valid(&self) -> bool {
        self.seeded && self.left > 0 && self.left as usize <= STATE_WORDS && self.next as usize <= STATE_WORDS
    }

    /// The next 32 random bits.
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.twist();
        }
        let mut y = self.state[self.next as usize];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// The next state (`next_state`), which resets `left` to 624 and `next` to 0.
    fn twist(&mut self) {
        let twist =
            |u: u32, v: u32| (((u & UPPER_MASK) | (v & LOWER_MASK)) >> 1) ^ if v & 1 == 1 { MATRIX_A } else { 0 };
        let s = &mut self.state;
        for i in 0..STATE_WORDS - MIDDLE {
            s[i] = s[i + MIDDLE] ^ twist(s[i], s[i + 1]);
        }
        for i in STATE_WORDS - MIDDLE..STATE_WORDS - 1 {
            s[i] = s[i + MIDDLE - STATE_WORDS] ^ twist(s[i], s[i + 1]);
        }
        s[STATE_WORDS - 1] = s[MIDDLE - 1] ^ twist(s[STATE_WORDS - 1], s[0]);
        self.left = STATE_WORDS as i32;
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Mt19937;

    /// The reference MT19937's outputs for seed 5489 (C++'s `std::mt19937` default): the first, and the
    /// 10,000th, which the C++ standard fixes at 4123659995.
    #[test]
    fn draws_the_reference_twister_stream() {
        let mut engine = Mt19937::new(5489);
        assert_eq!(engine.next_u32(), 3_499_211_612);
        let mut engine = Mt19937::new(5489);
        let last = (0..10_000).map(|_| engine.next_u32()).last();
        assert_eq!(last, Some(4_123_659_995));
    }
}
