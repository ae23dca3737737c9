//! Every loader against hostile files: a seeded mutator of our own (stable Rust, no fuzzing engine) damages the
//! DynamicsNetwork's valid weights (safetensors, read and memory-mapped; `.pt` zip, read and memory-mapped; `.pt`
//! legacy) and loads each result into the network; a `.pt` that both zip loaders load gives both the same values. For each input: no panic, a time bound, an allocation bound, and after an error the network's
//! tensors exactly as before. A deterministic sweep also writes a huge length (2^60, 2^32 - 1, -1…) at every
//! offset of the small zoo files.
//!
//! CI runs 10^4 mutated inputs per format. The long run, with its figures in RELIABILITY.md:
//!
//! ```text
//! NN_FUZZ_INPUTS=1000000 cargo test --workspace --release --test integration -- io::fuzz --nocapture
//! ```
//! `NN_FUZZ_SEED` picks another sequence; `NN_FUZZ_FORMATS=SafeTensorsMmap,PtZip` runs only those formats. A failing input is written to `target/fuzz-failures/` and named in the
//! panic message.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use integration_tests::fixture;
use nn::io::PtOptions;
use nn::prelude::*;
use nn::{Result, StateDict};
use reference::efficientzero::{DynamicsConfig, DynamicsNetwork};

/// The system allocator, counting the bytes live now and the most live since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so `System`'s guarantees
// hold; the counters are plain atomics touched only after `System` returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is (the caller upholds `alloc`'s contract).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as is: `ptr` came from this allocator (hence `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A small, seeded generator (splitmix64): the same seed gives the same inputs on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// An offset, most often near the start (where headers and pickles are).
    fn offset(&mut self, len: usize) -> usize {
        if self.below(2) == 0 {
            self.below(len.min(4096))
        } else {
            self.below(len)
        }
    }
}

/// Lengths and counts that hostile files claim.
const HUGE: [u64; 8] = [
    1 << 60,
    u64::MAX,
    (1 << 63) - 1,
    1 << 32,
    u32::MAX as u64,
    (1 << 31) - 1,
    1 << 40,
    0xffff_fffe,
];

/// One to four damages: bit flips, byte stores, truncation, a splice from elsewhere (or from `donor`), a
/// huge integer written over 4 or 8 bytes, inserted or deleted bytes, a digit of a text header made large.
fn mutate(rng: &mut Rng, valid: &[u8], donor: &[u8]) -> Vec<u8> {
    let mut data = valid.to_vec();
    for _ in 0..1 + rng.below(4) {
        if data.is_empty() {
            break;
        }
        let len = data.len();
        match rng.below(8) {
            0 => {
                let at = rng.offset(len);
                data[at] ^= 1 << rng.below(8);
            }
            1 => {
                let at = rng.offset(len);
                data[at] = [0, 0xff, 0x7f, 0x80, rng.next() as u8][rng.below(5)];
            }
            2 => data.truncate(rng.below(len)),
            3 => {
                let source = if rng.below(2) == 0 { valid } else { donor };
                let from = rng.below(source.len());
                let n = rng.below(256).min(source.len() - from);
                let at = rng.offset(len);
                let end = (at + n).min(len);
                data[at..end].copy_from_slice(&source[from..from + (end - at)]);
            }
            4 => {
                let value = HUGE[rng.below(HUGE.len())];
                let width = if rng.below(2) == 0 { 4 } else { 8 };
                let at = rng.offset(len.saturating_sub(width));
                let bytes = value.to_le_bytes();
                let end = (at + width).min(len);
                data[at..end].copy_from_slice(&bytes[..end - at]);
            }
            5 => {
                let at = rng.offset(len);
                let n = 1 + rng.below(64);
                let insert: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                data.splice(at..at, insert);
            }
            6 => {
                let at = rng.offset(len);
                let end = (at + 1 + rng.below(64)).min(len);
                data.drain(at..end);
            }
            _ => {
                // A number in a text header (safetensors' JSON, a zip's names) made huge.
                let digits: Vec<usize> = (0..len.min(4096)).filter(|&i| data[i].is_ascii_digit()).collect();
                if !digits.is_empty() {
                    let at = digits[rng.below(digits.len())];
                    data.splice(at..at, b"99999999999999999".iter().copied());
                }
            }
        }
    }
    data
}

/// A network's tensors as bytes, to compare before and after a refused load.
fn snapshot(net: &DynamicsNetwork) -> Vec<(String, Vec<u8>)> {
    let sd = net.state_dict();
    sd.iter().map(|(k, t)| (k.clone(), t.to_bytes().unwrap())).collect()
}

#[derive(Clone, Copy, Debug)]
enum Format {
    SafeTensors,
    PtZip,
    PtLegacy,
    /// safetensors through the memory-mapped loader.
    SafeTensorsMmap,
    /// `.pt` zip through the memory-mapped loader, each input also loaded by the reading loader: where both
    /// load, the values must be the same.
    PtZipMmap,
}

impl Format {
    fn load(self, net: &mut DynamicsNetwork, path: &Path) -> Result<()> {
        match self {
            Format::SafeTensors => net.load_safetensors(path, true).map(drop),
            // SAFETY: the harness writes the input before the load and no other file than after it returns; the
            // network has no load hooks, so no mapped tensor outlives the call.
            Format::SafeTensorsMmap => unsafe { net.load_safetensors_mmap(path, true) }.map(drop),
            Format::PtZip | Format::PtLegacy => net.load_pt(path, true).map(drop),
            // SAFETY: as above.
            Format::PtZipMmap => unsafe { net.load_pt_mmap(path, true, &PtOptions::new()) }.map(drop),
        }
    }
}

/// What one run found, for the report.
#[derive(Default, Debug)]
struct Tally {
    inputs: usize,
    loaded: usize,
    refused: usize,
    slowest: Duration,
    most_allocated: usize,
    /// `PtZipMmap`: inputs the mapped loader loaded and the reading one refused (damage inside a storage, whose
    /// CRC-32 only the reading loader checks), and the other way round.
    only_mapped: usize,
    only_read: usize,
}

/// The per-input bounds: a second of loading, and 64 MiB beyond eight times the input's size.
const TIME_BOUND: Duration = Duration::from_secs(1);

fn allocation_bound(input_len: usize) -> usize {
    (64 << 20) + 8 * input_len
}

struct Harness {
    net: DynamicsNetwork,
    before: Vec<(String, Vec<u8>)>,
    valid: StateDict,
    scratch: PathBuf,
}

impl Harness {
    fn new(scratch: PathBuf) -> Harness {
        let config = DynamicsConfig::from_file(&fixture("dynamics_small/config.json")).unwrap();
        let mut net = DynamicsNetwork::new(config).unwrap();
        net.load_safetensors(fixture("dynamics_small/weights.safetensors"), true)
            .unwrap();
        let valid = net.state_dict().deep_copy().unwrap();
        Harness {
            before: snapshot(&net),
            net,
            valid,
            scratch,
        }
    }

    /// Loads one input, checking every bound; panics (after saving the input) when one fails.
    fn run(&mut self, format: Format, input: &[u8], tally: &mut Tally) {
        // A new file each time: ext4 flushes a file rewritten in place to the disk when it is closed.
        std::fs::remove_file(&self.scratch).ok();
        std::fs::write(&self.scratch, input).unwrap();
        let baseline = LIVE.load(Ordering::Relaxed);
        PEAK.store(baseline, Ordering::Relaxed);
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            format.load(&mut self.net, &self.scratch)
        }));
        let elapsed = start.elapsed();
        let allocated = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
        let problem = match &outcome {
            Err(_) => Some("panicked".to_owned()),
            Ok(_) if elapsed > TIME_BOUND => Some(format!("took {elapsed:?}")),
            Ok(_) if allocated > allocation_bound(input.len()) => Some(format!("allocated {allocated} bytes")),
            Ok(Err(_)) if snapshot(&self.net) != self.before => Some("changed the module, then failed".to_owned()),
            _ => None,
        };
        if let Some(problem) = problem {
            let saved = save_failure(format, tally.inputs, input);
            panic!("{format:?} input {} {problem}: saved as {saved}", tally.inputs);
        }
        tally.inputs += 1;
        tally.slowest = tally.slowest.max(elapsed);
        tally.most_allocated = tally.most_allocated.max(allocated);
        let mapped = match outcome {
            Ok(Ok(())) => {
                tally.loaded += 1;
                let got = snapshot(&self.net);
                // A damage inside the data loads other values: put the valid ones back.
                self.net.load_state_dict(&self.valid, true, false).unwrap();
                Some(got)
            }
            _ => {
                tally.refused += 1;
                None
            }
        };
        if let Format::PtZipMmap = format {
            let read = self.net.load_pt(&self.scratch, true).map(|_| snapshot(&self.net));
            self.net.load_state_dict(&self.valid, true, false).unwrap();
            match (mapped, read) {
                (Some(mapped), Ok(read)) if mapped != read => {
                    let saved = save_failure(format, tally.inputs, input);
                    panic!(
                        "{format:?} input {}: mapped and read loads differ: saved as {saved}",
                        tally.inputs
                    )
                }
                (Some(_), Err(_)) => tally.only_mapped += 1,
                (None, Ok(_)) => tally.only_read += 1,
                _ => {}
            }
        }
    }
}

/// Writes a failing input to `target/fuzz-failures/`, returning where.
fn save_failure(format: Format, index: usize, input: &[u8]) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join(format!("{format:?}-{index}.bin"));
    std::fs::write(&saved, input).unwrap();
    saved.display().to_string()
}

fn inputs() -> usize {
    std::env::var("NN_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// Whether `NN_FUZZ_FORMATS` (names as `Format`'s, separated by commas; all when unset) includes `format`.
fn chosen(format: Format) -> bool {
    std::env::var("NN_FUZZ_FORMATS").map_or(true, |list| {
        list.split(',').any(|name| name.trim() == format!("{format:?}"))
    })
}

fn seed() -> u64 {
    std::env::var("NN_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed)
}

#[test]
fn every_loader_survives_hostile_files() {
    integration_tests::in_own_process(|| {
        let scratch = std::env::temp_dir().join(format!("nn-fuzz-{}", std::process::id()));
        let mut harness = Harness::new(scratch.clone());
        let n = inputs();
        for (format, valid, donor) in [
            (
                Format::SafeTensors,
                "dynamics_small/weights.safetensors",
                "zoo/weights.safetensors",
            ),
            (Format::PtZip, "dynamics_small/weights.pt", "zoo/weights.pt"),
            (
                Format::PtLegacy,
                "dynamics_small/weights_legacy.pt",
                "zoo/weights_legacy.pt",
            ),
            (
                Format::SafeTensorsMmap,
                "dynamics_small/weights.safetensors",
                "zoo/weights.safetensors",
            ),
            (Format::PtZipMmap, "dynamics_small/weights.pt", "zoo/weights.pt"),
        ] {
            if !chosen(format) {
                continue;
            }
            let valid = std::fs::read(fixture(valid)).unwrap();
            let donor = std::fs::read(fixture(donor)).unwrap();
            let mut rng = Rng(seed() ^ format as u64);
            let mut tally = Tally::default();
            let start = Instant::now();
            harness.run(format, &valid, &mut tally);
            assert_eq!(tally.loaded, 1, "{format:?}: the valid file itself");
            for _ in 0..n {
                let input = mutate(&mut rng, &valid, &donor);
                harness.run(format, &input, &mut tally);
            }
            println!(
                "{format:?}: {} inputs in {:.1?} ({} loaded, {} refused), slowest {:?}, most allocated {} KiB{}",
                tally.inputs,
                start.elapsed(),
                tally.loaded,
                tally.refused,
                tally.slowest,
                tally.most_allocated >> 10,
                match format {
                    Format::PtZipMmap => format!(
                        "; loaded only mapped {}, only read {}",
                        tally.only_mapped, tally.only_read
                    ),
                    _ => String::new(),
                }
            );
            assert!(
                tally.refused > n / 2,
                "{format:?}: most damaged files should be refused: {tally:?}"
            );
        }
        std::fs::remove_file(scratch).ok();
    });
}

#[test]
fn a_huge_length_at_every_offset_is_refused_before_allocating() {
    integration_tests::in_own_process(|| {
        let scratch = std::env::temp_dir().join(format!("nn-fuzz-sweep-{}", std::process::id()));
        let mut harness = Harness::new(scratch.clone());
        // The zoo's files are small enough to try every offset; loaded into the DynamicsNetwork they are refused
        // for their keys at the latest, so each input exercises the parser, the bounds and the all-or-nothing load.
        for (format, file) in [
            (Format::SafeTensors, "zoo/weights.safetensors"),
            (Format::PtZip, "zoo/weights.pt"),
            (Format::PtLegacy, "zoo/weights_legacy.pt"),
            (Format::SafeTensorsMmap, "zoo/weights.safetensors"),
            (Format::PtZipMmap, "zoo/weights.pt"),
        ] {
            if !chosen(format) {
                continue;
            }
            let valid = std::fs::read(fixture(file)).unwrap();
            let mut tally = Tally::default();
            for at in 0..valid.len() {
                for value in [1u64 << 60, u64::MAX, u32::MAX as u64] {
                    let mut input = valid.clone();
                    let bytes = value.to_le_bytes();
                    let end = (at + 8).min(input.len());
                    input[at..end].copy_from_slice(&bytes[..end - at]);
                    harness.run(format, &input, &mut tally);
                }
            }
            assert_eq!(tally.loaded, 0, "{format:?}: {tally:?}");
            println!("{format:?} sweep: {tally:?}");
        }
        std::fs::remove_file(scratch).ok();
    });
}
