//! Mutation fuzzing of every input reader, in `cargo test` (proptest, stable
//! Rust). Seeds are the project's fixtures (trace files of all nine formats,
//! DiskSim files, built-in disk specs, example run configs); mutations flip
//! bytes, truncate, splice lines and replace numbers with hostile ones (4e9,
//! 2^31, nan, -1, 1e308, ...). Every input must give Ok or an Err: a panic
//! fails the test with the input (shrunk), and so does any single allocation
//! above `MAX_ALLOC_BYTES` (a counting allocator watches each thread).
//!
//! Short by default (`FUZZ_CASES`, default 64 per target; `make test` runs
//! 20,000, under a minute in all); a release run raises it: `FUZZ_CASES=200000 cargo test -p
//! disksched-core --release --test fuzz` (docs/fuzzing.md).

use disksched_core::disk::{builtin, disksim, DiskModel};
use disksched_core::trace::{self, TraceFormat};
use disksched_core::{SimConfig, Simulation};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Largest single allocation an input may cause (the disk limits allow about
/// 80 MB for a 10-million-cylinder seek curve).
const MAX_ALLOC_BYTES: usize = 256 << 20;
/// Above this the allocator refuses (the process aborts, failing the run)
/// rather than exhaust the machine.
const REFUSE_ALLOC_BYTES: usize = 4 << 30;

struct Watch;
thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}
unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size());
        if l.size() > REFUSE_ALLOC_BYTES {
            return std::ptr::null_mut();
        }
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size());
        if l.size() > REFUSE_ALLOC_BYTES {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        note(new);
        if new > REFUSE_ALLOC_BYTES {
            return std::ptr::null_mut();
        }
        System.realloc(p, l, new)
    }
}
fn note(n: usize) {
    let _ = LARGEST.try_with(|c| c.set(c.get().max(n)));
}
#[global_allocator]
static GLOBAL: Watch = Watch;

fn cases() -> u32 {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A scratch directory per target (seek files are looked up beside a model).
fn scratch_dir(target: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("disksched-fuzz-{}-{target}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const HOSTILE: &[&str] = &["4e9", "2147483648", "4294967294", "4294967295", "300000000", "nan", "NaN", "inf", "-1",
    "1e308", "-1e308", "0", "18446744073709551615", "9223372036854775808", "1e-308", "0.5", "65536", "1e15"];

#[derive(Clone, Debug)]
enum Mutation {
    /// XOR a byte.
    Flip(usize, u8),
    /// Cut the input here.
    Truncate(usize),
    /// Replace the n-th number with a hostile one.
    Number(usize, usize),
    /// Duplicate the n-th line.
    DupLine(usize),
    /// Delete the n-th line.
    DelLine(usize),
    /// Insert bytes.
    Insert(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(p, b)| Mutation::Flip(p, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 0..HOSTILE.len()).prop_map(|(n, h)| Mutation::Number(n, h)),
        (any::<usize>(), 0..HOSTILE.len()).prop_map(|(n, h)| Mutation::Number(n, h)),
        (any::<usize>(), 0..HOSTILE.len()).prop_map(|(n, h)| Mutation::Number(n, h)),
        any::<usize>().prop_map(Mutation::DupLine),
        any::<usize>().prop_map(Mutation::DelLine),
        (any::<usize>(), prop::collection::vec(prop_oneof![Just(b'['), Just(b'{'), Just(b','), Just(b'\n'), Just(b'"'), Just(b'='), any::<u8>()], 1..8))
            .prop_map(|(p, b)| Mutation::Insert(p, b)),
    ]
}

/// Byte ranges of the numbers in `s` (digits, with sign, point and exponent).
fn numbers(s: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i].is_ascii_digit() && (i == 0 || !s[i - 1].is_ascii_alphanumeric()) {
            let start = if i > 0 && s[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < s.len() && (s[j].is_ascii_digit() || s[j] == b'.' || s[j] == b'e' || s[j] == b'E'
                || ((s[j] == b'-' || s[j] == b'+') && (s[j - 1] == b'e' || s[j - 1] == b'E'))) {
                j += 1;
            }
            out.push((start, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

fn apply(seed: &[u8], ms: &[Mutation]) -> Vec<u8> {
    let mut s = seed.to_vec();
    for m in ms {
        let len = s.len().max(1);
        match m {
            Mutation::Flip(p, b) => {
                if !s.is_empty() {
                    let i = p % s.len();
                    s[i] ^= b;
                }
            }
            Mutation::Truncate(p) => s.truncate(p % len),
            Mutation::Number(n, h) => {
                let nums = numbers(&s);
                if !nums.is_empty() {
                    let (a, b) = nums[n % nums.len()];
                    s.splice(a..b, HOSTILE[*h].bytes());
                }
            }
            Mutation::DupLine(n) | Mutation::DelLine(n) => {
                let mut lines: Vec<Vec<u8>> = s.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let k = n % lines.len();
                if matches!(m, Mutation::DupLine(_)) {
                    let l = lines[k].clone();
                    lines.insert(k, l);
                } else {
                    lines.remove(k);
                }
                s = lines.join(&b'\n');
            }
            Mutation::Insert(p, b) => {
                let i = p % (s.len() + 1);
                s.splice(i..i, b.iter().copied());
            }
        }
    }
    s
}

/// Fuzz `target` with mutations of `seeds`; returns the number of inputs tried.
fn fuzz(name: &str, seeds: Vec<Vec<u8>>, target: impl Fn(&[u8]) -> Result<(), String>) -> u32 {
    assert!(!seeds.is_empty(), "{name}: no seeds");
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    let tried = Cell::new(0u32);
    let strategy = (0..seeds.len(), prop::collection::vec(mutation(), 0..6));
    let result = runner.run(&strategy, |(k, ms)| {
        tried.set(tried.get() + 1);
        let input = apply(&seeds[k], &ms);
        LARGEST.with(|c| c.set(0));
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&input)));
        let largest = LARGEST.with(|c| c.get());
        let shown = String::from_utf8_lossy(&input[..input.len().min(2000)]).into_owned();
        match outcome {
            Err(p) => {
                let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                Err(TestCaseError::fail(format!("{name}: panic `{msg}` on input (seed {k}, {ms:?}):\n{shown}")))
            }
            Ok(Err(e)) => Err(TestCaseError::fail(format!("{name}: {e} on input (seed {k}, {ms:?}):\n{shown}"))),
            Ok(Ok(())) if largest > MAX_ALLOC_BYTES => Err(TestCaseError::fail(format!(
                "{name}: one allocation of {largest} bytes (bound {MAX_ALLOC_BYTES}) on input (seed {k}, {ms:?}):\n{shown}"))),
            Ok(Ok(())) => Ok(()),
        }
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!("fuzz {name}: {} inputs", tried.get());
    tried.get()
}

/// An error must be one line (the project's error contract).
fn one_line_err(e: impl std::fmt::Display) -> Result<(), String> {
    let s = e.to_string();
    if s.contains('\n') || s.is_empty() {
        return Err(format!("error is not one non-empty line: {s:?}"));
    }
    Ok(())
}

/// Every record of a trace, or the first error; a bounded number of records
/// (a mutation cannot make a 1 KB file yield more than a few thousand).
fn read_trace(path: &Path, format: Option<TraceFormat>) -> Result<(), String> {
    match trace::open(path, format, false) {
        Err(e) => one_line_err(e),
        Ok(r) => {
            for (i, rec) in r.enumerate() {
                if i > 1_000_000 {
                    return Err("more than a million records from a small file".into());
                }
                if let Err(e) = rec {
                    return one_line_err(e);
                }
            }
            Ok(())
        }
    }
}

fn trace_target(format: TraceFormat, file: &str) {
    let seed = std::fs::read(fixtures().join("traces").join(file)).unwrap();
    let dir = scratch_dir(&format!("trace-{file}"));
    let path = dir.join(file);
    fuzz(&format!("trace {format:?}"), vec![seed], |bytes| {
        std::fs::write(&path, bytes).unwrap();
        read_trace(&path, Some(format))?;
        // Detection too.
        read_trace(&path, None)
    });
}

#[test]
fn fuzz_trace_disksim_ascii() {
    trace_target(TraceFormat::DisksimAscii, "disksim_ascii.trace");
}
#[test]
fn fuzz_trace_disksim_validate() {
    trace_target(TraceFormat::DisksimValidate, "disksim_validate.trace");
}
#[test]
fn fuzz_trace_hpl() {
    trace_target(TraceFormat::Hpl, "hpl_small.srt");
}
#[test]
fn fuzz_trace_msr() {
    trace_target(TraceFormat::Msr, "msr.csv");
}
#[test]
fn fuzz_trace_spc() {
    trace_target(TraceFormat::Spc, "spc.csv");
}
#[test]
fn fuzz_trace_blkparse() {
    trace_target(TraceFormat::Blkparse, "blkparse.txt");
}
#[test]
fn fuzz_trace_fio() {
    trace_target(TraceFormat::Fio, "fio_v3.log");
    trace_target(TraceFormat::Fio, "fio_v2.log");
}
#[test]
fn fuzz_trace_alibaba() {
    trace_target(TraceFormat::Alibaba, "alibaba.csv");
}
#[test]
fn fuzz_trace_tencent() {
    trace_target(TraceFormat::Tencent, "tencent.csv");
}

const HPL_MECH: &str = "Mechanical Model = dm_mech_g1 {
      Access time type = trackSwitchPlusRotation,
      Seek type = hpl,
      HPL seek equation values = [ 300, 3.75, 0.33, 7.69, 0.0059, -1 ],
      Head switch time = 0.8,
      Rotation speed (in rpms) = 5400
   }";

/// DiskSim seeds: the DEC RZ26 validate model (with a cut seek file beside
/// it), a small zoned drive inside a disksim_disk with a bus, and a small g4 drive.
fn disksim_seeds() -> Vec<Vec<u8>> {
    let rz26 = std::fs::read(fixtures().join("fuzz/dec_rz26_validate.model")).unwrap();
    let g1 = format!("disksim_disk d {{
   Number of buffer segments = 4,
   Segment size (in blks) = 64,
   Enable caching in buffer = 1,
   Model = dm_disk tiny {{
   Number of data surfaces = 2,
   Number of cylinders = 100,
   Block count = 10000,
   Layout Model = dm_layout_g1 {{
      LBN-to-PBN mapping scheme = 1,
      Sparing scheme used = 3,
      Zones = [ dm_layout_g1_zone {{
         First cylinder number = 0,
         Last cylinder number = 49,
         Blocks per track = 51,
         Skew for track switch = 3,
         Skew for cylinder switch = 5,
         Number of spares = 1,
         slips = [ 7, 300 ],
         defects = [ 20, 50 ]
      }}, dm_layout_g1_zone {{
         First cylinder number = 50,
         Last cylinder number = 99,
         Blocks per track = 41,
         Skew for track switch = 0.1,
         Skew for cylinder switch = 0.2,
         Number of spares = 1
      }} ]
   }},
   {HPL_MECH}
}} }}
disksim_bus b {{ Read block transfer time = 0.02, Write block transfer time = 0.02 }}
");
    let g4 = format!("dm_disk tiny4 {{
   Number of data surfaces = 2,
   Number of cylinders = 10,
   Block count = 1900,
   Layout Model = dm_layout_g4 {{
      TP = [ 0, 99, 100 ],
      IDX = [ [ 0, 0, 0.0, 100, 1, 0.1, 1000, 10, TRACK, 0, 0,
                1000, 0, 0.0, 100, 1, 0.1, 1000, 10, TRACK, 0, 1 ],
              [ 0, 0, 0.0, 2000, 10, 0.0, 2000, 10, IDX, 0 ] ],
      Slips = [ 5, 10, 1500, 90 ],
      Remaps = [ ]
   }},
   {HPL_MECH}
}}
");
    vec![rz26, g1.into_bytes(), g4.into_bytes()]
}

#[test]
fn fuzz_disksim_parser() {
    fuzz("disksim parser", disksim_seeds(), |bytes| {
        match std::str::from_utf8(bytes) {
            Ok(text) => match disksim::parse_str(text, Path::new("fuzz.parv")) {
                Ok(_) => Ok(()),
                Err(e) => one_line_err(e),
            },
            Err(_) => Ok(()),
        }
    });
}

#[test]
fn fuzz_disksim_import() {
    let dir = scratch_dir("disksim");
    std::fs::copy(fixtures().join("fuzz/dec_rz26_validate.seek"), dir.join("dec_rz26_validate.seek")).unwrap();
    let path = dir.join("fuzz.model");
    fuzz("disksim import", disksim_seeds(), |bytes| {
        std::fs::write(&path, bytes).unwrap();
        match disksim::import(&path, None, None) {
            Ok(spec) => match DiskModel::new(spec) {
                Ok(_) => Ok(()),
                Err(e) => one_line_err(e),
            },
            Err(e) => one_line_err(e),
        }
    });
    // The seek file is an input too.
    let seek = std::fs::read(fixtures().join("fuzz/dec_rz26_validate.seek")).unwrap();
    let model = std::fs::read(fixtures().join("fuzz/dec_rz26_validate.model")).unwrap();
    std::fs::write(&path, model).unwrap();
    fuzz("disksim seek file", vec![seek], |bytes| {
        std::fs::write(dir.join("dec_rz26_validate.seek"), bytes).unwrap();
        match disksim::import(&path, None, None) {
            Ok(spec) => DiskModel::new(spec).map(|_| ()).or_else(one_line_err),
            Err(e) => one_line_err(e),
        }
    });
}

#[test]
fn fuzz_spec_loader() {
    let seeds = ["hp_c2247a", "dec_rz26", "st41601n", "hp_c2490a"].iter()
        .map(|n| builtin::BUILTIN.iter().find(|b| b.0 == *n).unwrap().1.as_bytes().to_vec()).collect();
    let dir = scratch_dir("spec");
    let path = dir.join("fuzz.toml");
    fuzz("spec loader", seeds, |bytes| {
        std::fs::write(&path, bytes).unwrap();
        match builtin::resolve(path.to_str().unwrap(), None) {
            Ok(spec) => DiskModel::new(spec).map(|_| ()).or_else(one_line_err),
            Err(e) => one_line_err(e),
        }
    });
}

#[test]
fn fuzz_run_config_loader() {
    let ex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&ex).unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| std::fs::read(p).unwrap()).collect();
    seeds.sort();
    seeds.extend(corpus_configs().into_iter().map(|(_, text)| text.into_bytes()));
    let dir = scratch_dir("config");
    let path = dir.join("fuzz.toml");
    fuzz("run config", seeds, |bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else { return Ok(()) };
        match SimConfig::from_toml(text, path.to_str().unwrap()) {
            Ok(cfg) => match Simulation::new(&cfg) {
                Ok(_) => Ok(()),
                Err(e) => one_line_err(e),
            },
            Err(e) => one_line_err(e),
        }
    });
}

/// The corpus of run configs that found crashes (`tests/fixtures/fuzz/configs`, issue 36): (file name, text).
fn corpus_configs() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(fixtures().join("fuzz/configs")).unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap())).collect();
    out.sort();
    out
}

/// Every corpus config run to its end (not only built, as the mutation
/// target does: its crashes were in the run): Ok or a one-line error, no
/// panic, no allocation above `MAX_ALLOC_BYTES`, within seconds. The
/// plug-in config needs the binding; here it is an unknown plug-in.
#[test]
fn fuzz_corpus_runs_end_with_ok_or_one_line() {
    let dir = scratch_dir("corpus");
    let corpus = corpus_configs();
    assert!(corpus.len() >= 5, "{corpus:?}");
    for (name, text) in corpus {
        let path = dir.join(&name);
        let started = std::time::Instant::now();
        LARGEST.with(|c| c.set(0));
        let outcome = catch_unwind(AssertUnwindSafe(|| match SimConfig::from_toml(&text, path.to_str().unwrap()) {
            Ok(cfg) => match Simulation::new(&cfg) {
                Ok(sim) => sim.run(&mut |_, _| true).map(|_| ()).or_else(one_line_err),
                Err(e) => one_line_err(e),
            },
            Err(e) => one_line_err(e),
        }));
        let largest = LARGEST.with(|c| c.get());
        assert!(matches!(outcome, Ok(Ok(()))), "{name}: {outcome:?}");
        assert!(largest <= MAX_ALLOC_BYTES, "{name}: one allocation of {largest} bytes");
        assert!(started.elapsed().as_secs() < 30, "{name}: {:?}", started.elapsed());
    }
}

#[test]
fn the_harness_reports_panics_errors_and_big_allocations() {
    let seeds = vec![b"1 2 3".to_vec()];
    for (what, target) in [
        ("panic", Box::new(|_: &[u8]| -> Result<(), String> { panic!("boom") }) as Box<dyn Fn(&[u8]) -> Result<(), String>>),
        ("error", Box::new(|_: &[u8]| Err("two\nlines".to_string()))),
        ("allocation", Box::new(|_: &[u8]| { let v = vec![1u8; MAX_ALLOC_BYTES + 1]; std::hint::black_box(&v); Ok(()) })),
    ] {
        let r = catch_unwind(AssertUnwindSafe(|| fuzz(what, seeds.clone(), target)));
        let msg = r.expect_err(what).downcast::<String>().map(|s| *s).unwrap_or_default();
        assert!(msg.contains(what) || msg.contains("boom") || msg.contains("lines"), "{what}: {msg}");
    }
}
