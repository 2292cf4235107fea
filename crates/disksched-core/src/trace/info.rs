//! `trace info`: what a trace contains, in one streaming pass with bounded
//! memory: format, devices, duration, request count, read/write mix, size and
//! inter-arrival distributions (HDR histograms, 3 significant digits; means
//! and maxima exact), footprint, sequentiality and bad lines skipped.
//!
//! Footprint = the number of distinct 512-byte blocks (per device) that at
//! least one request touched. It is kept exactly, as a set of disjoint block
//! extents, while the trace has at most `MAX_EXTENTS` separate extents; past
//! that the extents are rounded out to coarse regions (a power-of-two number
//! of blocks, doubled until the set is small again), and the footprint becomes
//! an upper bound, reported with `footprint_exact = false` and the region
//! size. Memory therefore stays bounded whatever the trace.
//!
//! Sequentiality = the share of requests that start exactly where the
//! previous request of the same device ended, among requests that have a
//! previous one on their device. Inter-arrival gaps are between consecutive
//! records in file order (all devices); a record earlier than its
//! predecessor counts as a gap of 0 and as `out_of_order`.

use super::{open, TraceFormat, BLOCK_BYTES};
use crate::error::Result;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Distinct extents kept before the footprint set is coarsened (about
/// 40 bytes each in the B-tree: ~10 MB).
pub const MAX_EXTENTS: usize = 1 << 18;

/// A distribution: exact mean and max, percentiles from an HDR histogram
/// (values below 2048 units exact, larger ones within 0.1 %).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Spread {
    /// Mean (exact).
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value (exact).
    pub max: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
/// A device and how many requests the trace has for it.
pub struct DeviceCount {
    /// Device number.
    pub device: u32,
    /// Its requests.
    pub requests: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
/// What a trace contains (see the module doc).
pub struct TraceInfo {
    /// The trace file.
    pub path: String,
    /// Its format's name.
    pub format: String,
    /// Records read.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// reads / requests (0 for an empty trace).
    pub read_fraction: f64,
    /// Devices in ascending order with their request counts.
    pub devices: Vec<DeviceCount>,
    /// Latest minus earliest arrival, ms.
    pub duration_ms: f64,
    /// Earliest arrival, ns (0 for an empty trace).
    pub first_time_ns: u64,
    /// Latest arrival, ns.
    pub last_time_ns: u64,
    /// Request sizes, KB.
    pub size_kb: Spread,
    /// Data read, KB.
    pub read_kb: f64,
    /// Data written, KB.
    pub written_kb: f64,
    /// Gaps between consecutive arrivals (file order), ms.
    pub interarrival_ms: Spread,
    /// Records that arrive earlier than the record before them.
    pub out_of_order: u64,
    /// Distinct blocks touched, summed over devices (see the module doc).
    pub footprint_blocks: u64,
    /// `footprint_blocks` in KB.
    pub footprint_kb: f64,
    /// The footprint is exact (else an upper bound).
    pub footprint_exact: bool,
    /// 1 when exact, else the region size the extents were rounded out to.
    pub footprint_granularity_blocks: u64,
    /// Requests that start where the previous request of their device ended.
    pub sequential_requests: u64,
    /// `sequential_requests` over the requests with a predecessor on their device (0 when none).
    pub sequential_fraction: f64,
    /// Malformed lines skipped (only when skipping is asked for).
    pub bad_lines_skipped: u64,
}

/// Coarsest region: 2^48 blocks (128 PiB), beyond any device's size.
const MAX_GRANULARITY: u64 = 1 << 48;

/// Distinct blocks touched, as disjoint extents `(device, start) -> end`.
struct Footprint {
    extents: BTreeMap<(u32, u64), u64>,
    blocks: u64,
    granularity: u64,
}

impl Footprint {
    fn new() -> Footprint {
        Footprint { extents: BTreeMap::new(), blocks: 0, granularity: 1 }
    }

    fn add(&mut self, device: u32, lbn: u64, blocks: u64) {
        let g = self.granularity;
        let mut lo = lbn / g * g;
        let mut hi = (lbn.saturating_add(blocks)).div_ceil(g).saturating_mul(g);
        // Merge with an extent that starts before and reaches us...
        if let Some((&(d, s), &e)) = self.extents.range(..=(device, lo)).next_back() {
            if d == device && e >= lo {
                if e >= hi {
                    return;
                }
                lo = s;
                hi = hi.max(e);
                self.extents.remove(&(d, s));
                self.blocks -= e - s;
            }
        }
        // ...and with every extent that starts inside the new one.
        while let Some((&(d, s), &e)) = self.extents.range((device, lo)..).next() {
            if d != device || s > hi {
                break;
            }
            hi = hi.max(e);
            self.extents.remove(&(d, s));
            self.blocks -= e - s;
        }
        self.extents.insert((device, lo), hi);
        self.blocks += hi - lo;
        if self.extents.len() > MAX_EXTENTS {
            self.coarsen();
        }
    }

    /// Double the region size until at most half the extent budget is used.
    /// Extents of different devices never merge, so with more devices than
    /// the budget coarsening stops at `MAX_GRANULARITY` (one extent a device).
    fn coarsen(&mut self) {
        while self.extents.len() > MAX_EXTENTS / 2 && self.granularity < MAX_GRANULARITY {
            self.granularity *= 2;
            let old = std::mem::take(&mut self.extents);
            self.blocks = 0;
            for ((d, s), e) in old {
                self.add(d, s, e - s);
            }
        }
    }
}

/// The histograms auto-resize (memory grows with log(max), not the count);
/// a value too large even for that is clamped.
fn record(h: &mut Histogram<u64>, v: u64) {
    if h.record(v).is_err() {
        h.saturating_record(v);
    }
}

fn spread(h: &Histogram<u64>, sum: u128, max: u64, n: u64, scale: f64) -> Spread {
    if n == 0 {
        return Spread::default();
    }
    Spread {
        mean: sum as f64 / n as f64 * scale,
        p50: h.value_at_quantile(0.5) as f64 * scale,
        p90: h.value_at_quantile(0.9) as f64 * scale,
        p99: h.value_at_quantile(0.99) as f64 * scale,
        max: max as f64 * scale,
    }
}

/// Read the whole trace once and summarise it. A malformed line is an error
/// (file:line) unless `skip_bad_lines`.
pub fn info(path: impl AsRef<Path>, format: Option<TraceFormat>, skip_bad_lines: bool) -> Result<TraceInfo> {
    let mut reader = open(path.as_ref(), format, skip_bad_lines)?;
    let mut sizes = Histogram::<u64>::new(3).expect("valid sigfig");
    let mut gaps = Histogram::<u64>::new(3).expect("valid sigfig");
    let (mut size_sum, mut size_max, mut gap_sum, mut gap_max, mut n_gaps) = (0u128, 0u64, 0u128, 0u64, 0u64);
    let (mut requests, mut reads, mut read_blocks, mut written_blocks) = (0u64, 0u64, 0u128, 0u128);
    let (mut first, mut last, mut min_t, mut max_t, mut out_of_order) = (None::<u64>, 0u64, u64::MAX, 0u64, 0u64);
    let mut devices: BTreeMap<u32, u64> = BTreeMap::new();
    // Per device: where its previous request ended.
    let mut prev_end: HashMap<u32, u64> = HashMap::new();
    let (mut sequential, mut with_prev) = (0u64, 0u64);
    let mut footprint = Footprint::new();
    for rec in reader.by_ref() {
        let r = rec?;
        requests += 1;
        let b = r.blocks as u64;
        if r.is_write {
            written_blocks += b as u128;
        } else {
            reads += 1;
            read_blocks += b as u128;
        }
        *devices.entry(r.device).or_default() += 1;
        record(&mut sizes, b);
        size_sum += b as u128;
        size_max = size_max.max(b);
        if first.is_some() {
            if r.time_ns < last {
                out_of_order += 1;
            }
            let gap = r.time_ns.saturating_sub(last);
            record(&mut gaps, gap);
            gap_sum += gap as u128;
            gap_max = gap_max.max(gap);
            n_gaps += 1;
        }
        first.get_or_insert(r.time_ns);
        last = r.time_ns;
        min_t = min_t.min(r.time_ns);
        max_t = max_t.max(r.time_ns);
        if let Some(e) = prev_end.insert(r.device, r.lbn.saturating_add(b)) {
            with_prev += 1;
            sequential += (e == r.lbn) as u64;
        }
        footprint.add(r.device, r.lbn, b);
    }
    let kb = BLOCK_BYTES as f64 / 1024.0;
    let empty = requests == 0;
    Ok(TraceInfo {
        path: reader.path().to_string(),
        format: reader.format().name().to_string(),
        requests,
        reads,
        writes: requests - reads,
        read_fraction: if empty { 0.0 } else { reads as f64 / requests as f64 },
        devices: devices.into_iter().map(|(device, requests)| DeviceCount { device, requests }).collect(),
        duration_ms: if empty { 0.0 } else { (max_t - min_t) as f64 / 1e6 },
        first_time_ns: if empty { 0 } else { min_t },
        last_time_ns: max_t,
        size_kb: spread(&sizes, size_sum, size_max, requests, kb),
        read_kb: read_blocks as f64 * kb,
        written_kb: written_blocks as f64 * kb,
        interarrival_ms: spread(&gaps, gap_sum, gap_max, n_gaps, 1e-6),
        out_of_order,
        footprint_blocks: footprint.blocks,
        footprint_kb: footprint.blocks as f64 * kb,
        footprint_exact: footprint.granularity == 1,
        footprint_granularity_blocks: footprint.granularity,
        sequential_requests: sequential,
        sequential_fraction: if with_prev == 0 { 0.0 } else { sequential as f64 / with_prev as f64 },
        bad_lines_skipped: reader.bad_lines_skipped(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprint_merges_overlaps_and_neighbours() {
        let mut f = Footprint::new();
        f.add(0, 10, 5); // 10..15
        f.add(0, 20, 5); // 20..25
        f.add(0, 12, 10); // 12..22 joins both: 10..25
        assert_eq!((f.blocks, f.extents.len()), (15, 1));
        f.add(0, 25, 1); // adjacent: 10..26
        f.add(1, 10, 5); // another device counts separately
        f.add(0, 11, 2); // inside
        assert_eq!((f.blocks, f.extents.len()), (21, 2));
    }

    #[test]
    fn footprint_coarsens_past_the_budget_as_an_upper_bound() {
        let mut f = Footprint::new();
        // Every other block: MAX_EXTENTS + 1 one-block extents.
        let n = MAX_EXTENTS as u64 + 1;
        for i in 0..n {
            f.add(0, 2 * i, 1);
        }
        assert!(f.granularity > 1 && f.extents.len() <= MAX_EXTENTS / 2);
        assert!(f.blocks >= n && f.blocks <= 2 * n + f.granularity, "{} for {n} true", f.blocks);
    }
}
