//! `kind = "fio"`: the jobs of a fio job file, so that one file can be
//! simulated (`disksched run`) and run for real against `disksched serve`
//! (`fio --ioengine=nbd --uri=... job.fio`: options given on fio's command
//! line are global options of the file).
//!
//! Read: `[global]` and job sections, `key=value` lines and `#`/`;`
//! comments. The options that shape the I/O are taken: rw / readwrite
//! (read, write, randread, randwrite, rw = readwrite, randrw), rwmixread,
//! bs, iodepth, numjobs, size, offset, runtime, number_ios, randrepeat,
//! randseed. Any other option is an error naming it, its file and line (the
//! simulation would otherwise silently differ from the real run).
//!
//! As fio does (defaults: rw = read, bs = 4k, iodepth = 1, numjobs = 1,
//! offset = 0, size = the device from `offset` on, rwmixread = 50): each job
//! keeps `iodepth` requests outstanding, issuing the next the moment one
//! completes; random offsets are uniform over [offset, offset + size) in
//! `bs` units; sequential jobs go from `offset` up, reads and writes each
//! from their own position (fio's per-direction `last_pos`); a job issues
//! `number_ios` requests, else `size / bs` (one pass of its region), and
//! stops issuing at `runtime` (s, or with a unit: ms, s, m, h). Every clone
//! of `numjobs` starts at the same `offset`. Random offsets follow fio's
//! random map: no `bs` block of the region is drawn twice until every one
//! has been (a pass), each draw uniform over the blocks not yet drawn (a
//! sparse Fisher-Yates shuffle: memory grows with the draws of a pass, not
//! the region). fio's own generator picks another order, so the offsets
//! are the same in distribution, not one by one; the simulation is
//! repeatable whatever `randrepeat` says; `randseed` seeds the jobs'
//! offsets (else the run's seed does).

use super::{Generator, IoSpec, SimRng};
use crate::error::{Error, Result};
use crate::host::Class;
use crate::schema::{Param, Ty};
use crate::time::{SimTime, NS_PER_S};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `kind = "fio"` keys.
pub const PARAMS: &[Param] = &[Param::other("job", Ty::Str, "required",
    "fio job file (relative paths: from the config file's directory); options: rw, readwrite, rwmixread, bs, iodepth, numjobs, size, offset, runtime, number_ios, randrepeat, randseed")];

/// Job file options taken; every other one is refused by name.
pub const OPTIONS: &[&str] = &["rw", "readwrite", "rwmixread", "bs", "iodepth", "numjobs", "size", "offset", "runtime", "number_ios", "randrepeat", "randseed"];

/// Largest `bs`, bytes: the most one request may carry (65,536 blocks of 512 bytes).
const MAX_BS_BYTES: u64 = 32 << 20;
/// Largest `iodepth` and `numjobs`.
const MAX_IODEPTH: u64 = 1024;
const MAX_NUMJOBS: u64 = 1024;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "fio"`: the jobs of a fio job file (see the module doc).
pub struct FioConfig {
    /// The job file.
    pub job: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    ReadWrite,
    RandRw,
}

/// One job section's options as written (global ones merged in).
#[derive(Clone, Default)]
struct Options {
    /// (value, line) of each option given.
    set: Vec<(&'static str, String, usize)>,
}

impl Options {
    fn get(&self, k: &str) -> Option<(&str, usize)> {
        // readwrite is rw's other name; the last one given wins.
        fn alias(o: &str) -> &str {
            if o == "readwrite" { "rw" } else { o }
        }
        self.set.iter().rev().find(|(o, _, _)| alias(o) == alias(k)).map(|(_, v, l)| (v.as_str(), *l))
    }
}

/// A job as the generator runs it.
struct Job {
    pattern: Pattern,
    rwmixread_pct: u32,
    bs_blocks: u64,
    first_block: u64,
    region_blocks: u64,
    runtime: Option<SimTime>,
    ios: u64,
    seed: Option<u64>,
    issued: u64,
    /// Next sequential block: reads, writes.
    next: [u64; 2],
    rng: SimRng,
    /// The random map: slots drawn this pass, and the shuffle's moved entries (slot index -> slot).
    drawn: u64,
    moved: HashMap<u64, u64>,
}

impl Job {
    /// A slot not yet drawn this pass, uniformly (step `drawn` of a Fisher-Yates shuffle of the slots).
    fn draw(&mut self, slots: u64) -> u64 {
        if self.drawn == slots {
            self.drawn = 0;
            self.moved.clear();
        }
        let d = self.drawn;
        let i = self.rng.gen_range(d..slots);
        let picked = self.moved.get(&i).copied().unwrap_or(i);
        let at_d = self.moved.remove(&d).unwrap_or(d);
        if i != d {
            self.moved.insert(i, at_d);
        }
        self.drawn += 1;
        picked
    }
}

/// The fio job-file generator.
pub struct FioJobs {
    jobs: Vec<Job>,
    /// Job of each client (a job's `iodepth` slots are its clients).
    client_job: Vec<u32>,
}

impl FioJobs {
    /// The jobs of `cfg.job` (relative to `base_dir`) on a disk of `capacity` blocks of `sector_bytes`.
    pub fn new(cfg: &FioConfig, capacity: u64, sector_bytes: u32, base_dir: Option<&Path>) -> Result<FioJobs> {
        let mut path = PathBuf::from(&cfg.job);
        if let (true, Some(base)) = (path.is_relative(), base_dir) {
            path = base.join(path);
        }
        let text = crate::budget::read_text_file_utf8(&path, "fio job file").map_err(|e| match e {
            Error::File { path, msg } if !msg.starts_with("larger") => Error::File { path, msg: format!("cannot read the fio job file: {msg}") },
            e => e,
        })?;
        Self::parse(&text, &path.display().to_string(), capacity, sector_bytes)
    }

    /// The jobs of job-file text `text` (named `file` in messages).
    pub fn parse(text: &str, file: &str, capacity: u64, sector_bytes: u32) -> Result<FioJobs> {
        let perr = |line: usize, msg: String| Error::Parse { path: file.to_string(), line, msg };
        let mut global = Options::default();
        let mut sections: Vec<(String, usize, Options)> = Vec::new();
        let mut in_global = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                continue;
            }
            if let Some(name) = l.strip_prefix('[') {
                let name = name.strip_suffix(']').ok_or_else(|| perr(line, format!("'{l}': expected a section header [name]")))?.trim();
                in_global = name == "global";
                if !in_global {
                    // A job takes the global options given before it.
                    sections.push((name.to_string(), line, global.clone()));
                }
                continue;
            }
            let (key, value) = match l.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (l, ""),
            };
            let Some(&known) = OPTIONS.iter().find(|&&o| o == key) else {
                return Err(perr(line, format!("fio option '{key}' is not simulated; kind = \"fio\" takes {} (give environment options such as ioengine on fio's command line)", OPTIONS.join(", "))));
            };
            if value.is_empty() {
                return Err(perr(line, format!("fio option '{key}' needs a value (key=value)")));
            }
            let target = match (in_global, sections.last_mut()) {
                (false, Some((_, _, o))) => o,
                (true, _) => &mut global,
                (false, None) => return Err(perr(line, format!("option '{key}' before any section; expected [global] or [jobname] first"))),
            };
            target.set.push((known, value.to_string(), line));
        }
        if sections.is_empty() {
            return Err(Error::File { path: file.to_string(), msg: "no job section; expected at least one [jobname]".into() });
        }
        let sector = sector_bytes as u64;
        let capacity_bytes = capacity * sector;
        let mut jobs = Vec::new();
        let mut client_job = Vec::new();
        for (name, sec_line, o) in &sections {
            let bad = |k: &str, v: &str, l: usize, expected: String| perr(l, format!("[{name}] {k}={v}: expected {expected}"));
            let pattern = match o.get("rw") {
                None => Pattern::Read,
                Some((v, l)) => match v {
                    "read" => Pattern::Read,
                    "write" => Pattern::Write,
                    "randread" => Pattern::RandRead,
                    "randwrite" => Pattern::RandWrite,
                    "rw" | "readwrite" => Pattern::ReadWrite,
                    "randrw" => Pattern::RandRw,
                    _ => return Err(bad("rw", v, l, "read, write, randread, randwrite, rw, readwrite or randrw".into())),
                },
            };
            let int = |k: &str, lo: u64, hi: u64, default: u64| -> Result<u64> {
                match o.get(k) {
                    None => Ok(default),
                    Some((v, l)) => v.parse::<u64>().ok().filter(|n| (lo..=hi).contains(n)).ok_or_else(|| bad(k, v, l, format!("a whole number in {lo}..{hi}"))),
                }
            };
            let bytes = |k: &str, default: u64, pct_of: u64| -> Result<u64> {
                match o.get(k) {
                    None => Ok(default),
                    Some((v, l)) => parse_bytes(v, pct_of).ok_or_else(|| bad(k, v, l, "bytes: a number with an optional unit (k, m, g, t; powers of 1024) or a percentage of the device".into())),
                }
            };
            let rwmixread_pct = int("rwmixread", 0, 100, 50)? as u32;
            let bs = bytes("bs", 4096, capacity_bytes)?;
            if bs == 0 || bs % sector != 0 || bs > MAX_BS_BYTES {
                let (v, l) = o.get("bs").unwrap_or(("4k", *sec_line));
                return Err(bad("bs", v, l, format!("a whole number of {sector}-byte blocks, at most {MAX_BS_BYTES} bytes")));
            }
            let iodepth = int("iodepth", 1, MAX_IODEPTH, 1)? as u32;
            let numjobs = int("numjobs", 1, MAX_NUMJOBS, 1)?;
            let offset = bytes("offset", 0, capacity_bytes)?;
            if offset % sector != 0 || offset >= capacity_bytes {
                let (v, l) = o.get("offset").unwrap();
                return Err(bad("offset", v, l, format!("a whole number of {sector}-byte blocks inside the device's {capacity_bytes} bytes")));
            }
            let size = bytes("size", capacity_bytes - offset, capacity_bytes)?;
            if size < bs || offset + size > capacity_bytes {
                let (v, l) = o.get("size").unwrap_or(("(the device)", *sec_line));
                return Err(bad("size", v, l, format!("at least bs ({bs} bytes) and, from offset {offset}, within the device's {capacity_bytes} bytes")));
            }
            let runtime = match o.get("runtime") {
                None => None,
                Some((v, l)) => Some(SimTime(parse_seconds_ns(v).filter(|&ns| ns > 0).ok_or_else(|| bad("runtime", v, l, "a positive time: seconds, or a number with us, ms, s, m or h".into()))?)),
            };
            let number_ios = int("number_ios", 1, u64::MAX, 0)?;
            let _ = match o.get("randrepeat") {
                None => true,
                Some((v, l)) => parse_bool(v).ok_or_else(|| bad("randrepeat", v, l, "0, 1, true or false".into()))?,
            };
            let seed = match o.get("randseed") {
                None => None,
                Some((v, l)) => Some(v.parse::<u64>().map_err(|_| bad("randseed", v, l, "a whole number".into()))?),
            };
            let bs_blocks = bs / sector;
            let region_blocks = size / sector / bs_blocks * bs_blocks;
            let ios = if number_ios > 0 { number_ios } else { size / bs };
            for clone in 0..numjobs {
                let j = jobs.len() as u32;
                client_job.extend(std::iter::repeat_n(j, iodepth as usize));
                jobs.push(Job {
                    pattern, rwmixread_pct, bs_blocks, first_block: offset / sector, region_blocks, runtime, ios,
                    seed: seed.map(|s| s.wrapping_add(clone)), issued: 0, next: [offset / sector; 2], rng: SimRng::seed_from_u64(0), drawn: 0, moved: HashMap::new(),
                });
            }
        }
        if client_job.len() > 1_000_000 {
            return Err(Error::File { path: file.to_string(), msg: format!("{} requests outstanding in all (iodepth x numjobs); expected at most 1,000,000", client_job.len()) });
        }
        Ok(FioJobs { jobs, client_job })
    }
}

/// Bytes: `4096`, `4k`, `128KiB`, `1g`, `50%` (of `whole`). fio's default kb_base is 1024.
fn parse_bytes(v: &str, whole: u64) -> Option<u64> {
    let v = v.trim();
    if let Some(p) = v.strip_suffix('%') {
        let pct: f64 = p.trim().parse().ok().filter(|p: &f64| (0.0..=100.0).contains(p))?;
        return Some((whole as f64 * pct / 100.0) as u64);
    }
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// A time in ns: seconds by default, or with a unit (us, ms, s, m, h).
fn parse_seconds_ns(v: &str) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let ns_per = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => NS_PER_S,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "m" | "min" => 60 * NS_PER_S,
        "h" => 3600 * NS_PER_S,
        _ => return None,
    };
    n.checked_mul(ns_per)
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    }
}

impl Generator for FioJobs {
    /// A job is one process: its `iodepth` slots are one flow.
    fn flow(&self, client: u32) -> u32 {
        self.client_job[client as usize]
    }
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        for j in &mut self.jobs {
            j.rng = SimRng::seed_from_u64(j.seed.unwrap_or_else(|| rng.gen()));
        }
        let mut slot = vec![0u64; self.jobs.len()];
        let mut first = Vec::new();
        for (c, &j) in self.client_job.iter().enumerate() {
            // A job with fewer I/Os than slots starts only as many.
            if slot[j as usize] < self.jobs[j as usize].ios {
                first.push((SimTime::ZERO, c as u32));
            }
            slot[j as usize] += 1;
        }
        first
    }
    fn arrive(&mut self, _now: SimTime, client: u32, _rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let j = &mut self.jobs[self.client_job[client as usize] as usize];
        let is_write = match j.pattern {
            Pattern::Read | Pattern::RandRead => false,
            Pattern::Write | Pattern::RandWrite => true,
            Pattern::ReadWrite | Pattern::RandRw => j.rng.gen_range(0..100) >= j.rwmixread_pct,
        };
        let slots = j.region_blocks / j.bs_blocks;
        let lbn = match j.pattern {
            Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw => j.first_block + j.draw(slots) * j.bs_blocks,
            _ => {
                let next = &mut j.next[is_write as usize];
                if *next + j.bs_blocks > j.first_block + j.region_blocks {
                    *next = j.first_block;
                }
                let lbn = *next;
                *next += j.bs_blocks;
                lbn
            }
        };
        j.issued += 1;
        let io = IoSpec { lbn, blocks: j.bs_blocks as u32, is_write, class: Class::BestEffort, deadline: None, range: None, flow: None };
        Some((io, None))
    }
    /// The slot is refilled at once, until the job has issued its I/Os or its runtime has passed.
    fn completed(&mut self, now: SimTime, client: u32, _rng: &mut SimRng) -> Option<SimTime> {
        let j = &self.jobs[self.client_job[client as usize] as usize];
        let over = j.issued >= j.ios || j.runtime.is_some_and(|r| now >= r);
        (!over).then_some(now)
    }
    fn clients(&self) -> u32 {
        self.client_job.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_fios() {
        assert_eq!(parse_bytes("4k", 0), Some(4096));
        assert_eq!(parse_bytes("128KiB", 0), Some(131_072));
        assert_eq!(parse_bytes("1g", 0), Some(1 << 30));
        assert_eq!(parse_bytes("512", 0), Some(512));
        assert_eq!(parse_bytes("50%", 1000), Some(500));
        assert_eq!(parse_bytes("4q", 0), None);
        assert_eq!(parse_seconds_ns("15"), Some(15 * NS_PER_S));
        assert_eq!(parse_seconds_ns("250ms"), Some(250_000_000));
        assert_eq!(parse_seconds_ns("2m"), Some(120 * NS_PER_S));
    }

    #[test]
    fn random_offsets_cover_the_region_once_per_pass() {
        // 64 KB at offset 1 MB in 4 KB blocks: 16 slots; 48 I/Os are three passes, each a permutation.
        let mut g = FioJobs::parse("[a]\nrw=randread\nbs=4k\noffset=1m\nsize=64k\nnumber_ios=48\n", "j.fio", 1 << 20, 512).unwrap();
        let mut rng = SimRng::seed_from_u64(1);
        assert_eq!(g.start(&mut rng).len(), 1);
        let mut lbns = Vec::new();
        for k in 0..48 {
            let (io, _) = g.arrive(SimTime::ZERO, 0, &mut rng).unwrap();
            lbns.push(io.lbn);
            assert_eq!(g.completed(SimTime::ZERO, 0, &mut rng).is_some(), k < 47, "the job ends after number_ios");
        }
        let expected: Vec<u64> = (0..16).map(|s| 2048 + 8 * s).collect();
        for pass in lbns.chunks(16) {
            let mut p = pass.to_vec();
            p.sort_unstable();
            assert_eq!(p, expected);
        }
        assert_ne!(lbns[..16], lbns[16..32], "passes are drawn afresh");
    }

    #[test]
    fn unknown_options_are_named_with_their_line() {
        let e = FioJobs::parse("[global]\nbs=4k\n\n[a]\nrw=randread\ndirect=1\n", "j.fio", 1 << 20, 512).err().unwrap().to_string();
        assert!(e.starts_with("j.fio:6: fio option 'direct' is not simulated"), "{e}");
        let e = FioJobs::parse("[a]\nrw=randwalk\n", "j.fio", 1 << 20, 512).err().unwrap().to_string();
        assert!(e.starts_with("j.fio:2: [a] rw=randwalk: expected read, write"), "{e}");
        let e = FioJobs::parse("[a]\nbs=1000\n", "j.fio", 1 << 20, 512).err().unwrap().to_string();
        assert!(e.contains("bs=1000: expected a whole number of 512-byte blocks"), "{e}");
    }
}
