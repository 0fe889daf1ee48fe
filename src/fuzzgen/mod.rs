//! Random SysY programs for differential testing, and the differential check itself.
//!
//! `generate(seed)` writes a valid, deterministic SysY program whose meaning is the same when a C
//! compiler reads it (with `-fwrapv` and float literals made single precision, see
//! `suite::runner::sysy_as_c`): no division by zero or `INT_MIN / -1`, no out-of-bounds
//! index, bounded loops and recursion, no float that overflows or turns into an out-of-range
//! int, and no expression whose value depends on C's unspecified evaluation order. The programs
//! aim at what breaks optimizers: many live values, nested loops with invariant code, array walks
//! in 1-3 dimensions, calls with side effects on globals and arrays, recursion, many mixed
//! parameters, short-circuit conditions with side effects, `break`/`continue`, partial array
//! arguments, shadowing, const arrays, and division by constants and variables.
//!
//! `input(seed)` is the program's standard input (numbers read by `main`, so that some values are
//! unknown to the optimizer).
//!
//! `Profile::Programs` (`programs.rs`) writes programs shaped like ordinary ones instead (loop
//! nests over arrays, small recursive helpers, boolean logic, accumulators reduced modulo a
//! constant), well defined even without `-fwrapv`; `scripts/bench_generated.sh` measures them
//! against gcc. `sysyc gen` (`cli`) writes programs of either profile with their expected output.
//!
//! `diff` runs one program through the host C compiler (the oracle) and through sysyc in several
//! modes, and reports the first disagreement.

pub mod cli;
pub mod diff;
mod gen;
mod programs;

pub use gen::{generate, input};

/// Which generator writes a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Stress shapes for the optimizer: `generate` and `input`.
    Fuzz,
    /// Shapes of ordinary programs, sized for benchmarking (10^6..10^8 executed instructions).
    Programs,
}

impl std::str::FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Profile, String> {
        match s {
            "fuzz" => Ok(Profile::Fuzz),
            "programs" => Ok(Profile::Programs),
            _ => Err(format!("unknown profile `{s}` (fuzz or programs)")),
        }
    }
}

/// The program of `seed` in `profile` and its standard input.
pub fn generate_profile(profile: Profile, seed: u64) -> (String, String) {
    match profile {
        Profile::Fuzz => (generate(seed), input(seed)),
        Profile::Programs => programs::generate(seed),
    }
}

/// splitmix64: small, fast, and the same sequence on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5379_5379_c0de_f00d)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// An index chosen by `weights`.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut x = self.below(total.max(1) as u64) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}
