//! Run metrics: response-time histograms (HDR), service-time breakdown,
//! queue lengths, and optional per-request records.

use crate::host::{Class, Request};
use crate::time::{SimTime, NS_PER_MS, NS_PER_S};
use hdrhistogram::Histogram;
use serde::Serialize;

mod records;
mod series;

pub use records::{with_record_sink, RecordSink, Records};
pub use series::{Series, MAX_SERIES_ROWS};
use series::SeriesAcc;

/// Distribution summary, ms.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Distribution {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest value, exact (the mean and percentiles come from a histogram
    /// of `PERCENTILE_SIGNIFICANT_DIGITS` digits: within 0.1 %).
    pub max: f64,
}

/// Significant decimal digits of the response-time histograms: the mean and
/// percentiles are within 1/1024 (0.1 %) of the exact values; values above
/// one hour count as one hour there (the maximum is kept exactly).
pub const PERCENTILE_SIGNIFICANT_DIGITS: u8 = 3;

impl Distribution {
    fn of(h: &Histogram<u64>, exact_max_ns: u64) -> Distribution {
        // A histogram percentile is its bucket's highest value: never above the exact maximum.
        let ms = |v: u64| v.min(exact_max_ns) as f64 / NS_PER_MS as f64;
        if h.is_empty() {
            return Distribution::default();
        }
        Distribution {
            mean: h.mean() / NS_PER_MS as f64,
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(exact_max_ns),
        }
    }
}

fn response_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600 * NS_PER_S, PERCENTILE_SIGNIFICANT_DIGITS).expect("valid histogram bounds")
}

/// One class's measured requests (`Summary::classes`).
#[derive(Clone, Debug, Serialize)]
pub struct ClassSummary {
    /// Measured requests of the class.
    pub requests: u64,
    /// Arrival at the host to completion.
    pub host_response_ms: Distribution,
    /// Requests that carried a deadline, and those that completed after it.
    pub deadline_requests: u64,
    /// Of those, completed after their deadline.
    pub deadline_misses: u64,
}

/// Requests that waited far longer than the rest (`Summary::starvation`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Starvation {
    /// The longest host response (arrival to completion), exact, ms.
    pub longest_wait_ms: f64,
    /// Ten times the mean host response, ms.
    pub threshold_ms: f64,
    /// Measured requests whose host response exceeded the threshold (from the histogram: within 0.1 % of it).
    pub waited_over_10x_mean: u64,
}

/// Per class, accumulated as requests complete (the histogram made at the class's first request).
#[derive(Default)]
struct ClassAcc {
    host_response: Option<Box<Histogram<u64>>>,
    max_ns: u64,
    deadline_requests: u64,
    deadline_misses: u64,
}

/// Time-weighted queue length.
#[derive(Clone, Debug, Default)]
struct QueueGauge {
    len: u64,
    max: u64,
    area: u128,
    since: u64,
}

impl QueueGauge {
    fn set(&mut self, now: SimTime, len: u64) {
        if len == self.len {
            return; // the same length on: its area is counted when it next changes, or at the end
        }
        self.area += self.len as u128 * (now.0 - self.since) as u128;
        self.since = now.0;
        self.len = len;
        self.max = self.max.max(len);
    }
    fn mean(&self, end: SimTime) -> f64 {
        let area = self.area + self.len as u128 * (end.0.saturating_sub(self.since)) as u128;
        if end.0 == 0 { 0.0 } else { area as f64 / end.0 as f64 }
    }
}

/// Accumulates a run's statistics as requests complete.
pub struct Metrics {
    /// (The host response's histogram is the sum of the classes': `host_response`.)
    disk_response: Histogram<u64>,
    /// Exact largest host and disk responses, ns (the histograms round).
    host_max_ns: u64,
    disk_max_ns: u64,
    /// Per class (`Class as usize`).
    classes: [ClassAcc; 3],
    warmup: u64,
    /// Requests completed, warm-up included.
    pub completed: u64,
    measured: u64,
    reads: u64,
    writes: u64,
    blocks: u64,
    seek_ns: u128,
    rotation_ns: u128,
    transfer_ns: u128,
    overhead_ns: u128,
    bus_ns: u128,
    service_ns: u128,
    destage_wait_ns: u128,
    destage_ns: [u128; 3],
    destages: u64,
    first_measured_arrival: Option<SimTime>,
    last_done: SimTime,
    host_queue: QueueGauge,
    controller_queue: Option<QueueGauge>,
    disk_queue: QueueGauge,
    /// Per-request records, when kept (only the last partial chunk when streamed).
    pub records: Option<Records>,
    /// Rows per streamed chunk (`with_record_sink`); 0: records accumulate.
    record_chunk_rows: usize,
    sector_bytes: u64,
    series: Option<SeriesAcc>,
    deadline_requests: u64,
    deadline_misses: u64,
}

#[derive(Clone, Debug, Serialize)]
/// A run's statistics over the measured requests (times in ms).
pub struct Summary {
    /// Requests measured (completed after the warm-up).
    pub requests: u64,
    /// Measured reads.
    pub reads: u64,
    /// Measured writes.
    pub writes: u64,
    /// Simulated time at the end of the run, ms.
    pub sim_time_ms: f64,
    /// Measured requests per second, over first measured arrival to last completion.
    pub iops: f64,
    /// Measured data per second (10^6 bytes), over the same span.
    pub mb_per_s: f64,
    /// Arrival at the host to completion.
    pub host_response_ms: Distribution,
    /// Issue to the disk to completion.
    pub disk_response_ms: Distribution,
    /// Per class that had measured requests (best-effort, real-time, background).
    pub classes: std::collections::BTreeMap<&'static str, ClassSummary>,
    /// The longest wait and the requests that waited more than ten times the mean.
    pub starvation: Starvation,
    /// Significant digits of the histograms the means and percentiles come from (3: within 0.1 %).
    pub percentile_significant_digits: u8,
    /// Mean seek (or head switch) time, ms.
    pub mean_seek_ms: f64,
    /// Mean rotational wait, ms.
    pub mean_rotation_ms: f64,
    /// Mean media transfer, ms.
    pub mean_transfer_ms: f64,
    /// Mean command overhead, ms.
    pub mean_overhead_ms: f64,
    /// Bus phases not overlapped by the media (data, reselect, status).
    pub mean_bus_ms: f64,
    /// Waiting for the drive to finish a destage (write-back data of earlier writes).
    pub mean_destage_wait_ms: f64,
    /// Start of service at the drive to completion: overhead + destage wait +
    /// seek + rotation + transfer + bus (each request's parts add up to it,
    /// except a read taken over from a running read-ahead, whose transfer counts from its start).
    pub mean_service_ms: f64,
    /// Write-back destages, done after their writes were reported and charged
    /// to none of the figures above: how many, and their mean seek, rotation
    /// (with waits for data) and media transfer, per destage.
    pub destages: u64,
    /// Mean destage seek, ms.
    pub mean_destage_seek_ms: f64,
    /// Mean destage rotation, ms.
    pub mean_destage_rotation_ms: f64,
    /// Mean destage media transfer, ms.
    pub mean_destage_transfer_ms: f64,
    /// Time-weighted mean length of the host queue over the run.
    pub mean_host_queue: f64,
    /// Longest the host queue was.
    pub max_host_queue: u64,
    /// With a controller level: its queue (waiting there, not yet at a disk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_controller_queue: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Longest the controller queue was.
    pub max_controller_queue: Option<u64>,
    /// Time-weighted mean of the requests outstanding at the disks over the run.
    pub mean_disk_queue: f64,
    /// Most requests outstanding at the disks.
    pub max_disk_queue: u64,
    /// Requests that carried a deadline, and those that completed after it.
    pub deadline_requests: u64,
    /// Of those, completed after their deadline.
    pub deadline_misses: u64,
}

impl Metrics {
    /// Empty metrics: the first `warmup` requests (by arrival number) are not measured; `records` keeps per-request records.
    pub fn new(warmup: u64, records: bool, sector_bytes: u32) -> Metrics {
        Metrics {
            disk_response: response_histogram(),
            host_max_ns: 0,
            disk_max_ns: 0,
            classes: Default::default(),
            warmup,
            completed: 0,
            measured: 0,
            reads: 0,
            writes: 0,
            blocks: 0,
            seek_ns: 0,
            rotation_ns: 0,
            transfer_ns: 0,
            overhead_ns: 0,
            bus_ns: 0,
            service_ns: 0,
            destage_wait_ns: 0,
            destage_ns: [0; 3],
            destages: 0,
            first_measured_arrival: None,
            last_done: SimTime::ZERO,
            host_queue: QueueGauge::default(),
            controller_queue: None,
            disk_queue: QueueGauge::default(),
            records: records.then(Records::default),
            record_chunk_rows: if records { records::sink_chunk_rows() } else { 0 },
            sector_bytes: sector_bytes as u64,
            series: None,
            deadline_requests: 0,
            deadline_misses: 0,
        }
    }

    /// Keep time series in windows of `window_ns` (see `Series`).
    pub fn keep_series(&mut self, window_ns: u64) {
        self.series = Some(SeriesAcc::new(window_ns));
    }

    /// A series outgrew `MAX_SERIES_ROWS` (checked before every event: the
    /// run stops as soon as it happens; `series_error` says how).
    #[inline]
    pub fn series_over(&self) -> bool {
        self.series.as_ref().is_some_and(|s| s.too_large.is_some())
    }

    /// The error of a series that outgrew `MAX_SERIES_ROWS`.
    pub fn series_error(&self) -> Option<crate::error::Error> {
        let (clients, windows, t_ns) = self.series.as_ref()?.too_large?;
        Some(self.series_too_large(clients, windows, t_ns))
    }

    #[cold]
    fn series_too_large(&self, clients: u64, windows: u64, t_ns: u64) -> crate::error::Error {
        let window_ns = self.series.as_ref().map_or(0, |s| s.window_ns);
        crate::error::config_err(
            "run.series_window_ms",
            format!("{} ms windows would need {clients} clients x {windows} windows by t = {:.3} s, more than {MAX_SERIES_ROWS} series rows; \
                     choose a larger window", window_ns as f64 / NS_PER_MS as f64, t_ns as f64 / 1e9),
        )
    }

    /// The time series kept, with the host scheduler's `samples`; an error
    /// when it outgrew `MAX_SERIES_ROWS`.
    pub fn take_series(&mut self, samples: Vec<(SimTime, String, f64)>) -> crate::error::Result<Option<Series>> {
        if let Some(e) = self.series_error() {
            return Err(e);
        }
        let Some(acc) = self.series.take() else { return Ok(None) };
        let mut s = acc.finish();
        for (t, name, v) in samples {
            s.sample_ns.push(t.0);
            s.sample_name.push(name);
            s.sample_value.push(v);
        }
        Ok(Some(s))
    }

    /// Measure a controller queue too (see `controller_queue`).
    pub fn keep_controller_queue(&mut self) {
        self.controller_queue = Some(QueueGauge::default());
    }

    /// The host queue holds `len` requests from `now` on.
    pub fn host_queue(&mut self, now: SimTime, len: usize) {
        self.host_queue.set(now, len as u64);
    }
    /// The controller queue holds `len` requests from `now` on (ignored unless kept).
    pub fn controller_queue(&mut self, now: SimTime, len: usize) {
        if let Some(g) = &mut self.controller_queue {
            g.set(now, len as u64);
        }
    }
    /// `len` requests are outstanding at the disks from `now` on.
    pub fn disk_queue(&mut self, now: SimTime, len: u32) {
        self.disk_queue.set(now, len as u64);
    }

    /// Count request `r`'s completion (measured unless it is in the warm-up).
    pub fn completed(&mut self, r: &Request) {
        self.completed += 1;
        if let Some(rec) = &mut self.records {
            rec.push(r);
            if self.record_chunk_rows > 0 && rec.len() >= self.record_chunk_rows {
                records::send_chunk(std::mem::take(rec));
            }
        }
        if let Some(s) = &mut self.series {
            s.add(r, r.blocks as u64 * self.sector_bytes);
        }
        if r.logical < self.warmup {
            return;
        }
        if let Some(d) = r.deadline {
            self.deadline_requests += 1;
            self.deadline_misses += (r.service.done > d) as u64;
        }
        let done = r.service.done;
        self.measured += 1;
        self.first_measured_arrival = Some(self.first_measured_arrival.map_or(r.arrival, |a| a.min(r.arrival)));
        self.last_done = self.last_done.max(done);
        let host_ns = (done.0 - r.arrival.0).max(1);
        let disk_ns = (done.0 - r.issued.0).max(1);
        self.disk_response.saturating_record(disk_ns);
        self.host_max_ns = self.host_max_ns.max(host_ns);
        self.disk_max_ns = self.disk_max_ns.max(disk_ns);
        let c = &mut self.classes[r.class as usize];
        c.host_response.get_or_insert_with(|| Box::new(response_histogram())).saturating_record(host_ns);
        c.max_ns = c.max_ns.max(host_ns);
        if let Some(d) = r.deadline {
            c.deadline_requests += 1;
            c.deadline_misses += (done > d) as u64;
        }
        if r.is_write { self.writes += 1 } else { self.reads += 1 }
        self.blocks += r.blocks as u64;
        self.seek_ns += r.service.seek_ns as u128;
        self.rotation_ns += r.service.rotation_ns as u128;
        self.transfer_ns += r.service.transfer_ns as u128;
        self.overhead_ns += r.service.overhead_ns as u128;
        self.bus_ns += r.service.bus_wait_ns as u128;
        self.service_ns += r.service.done.0.saturating_sub(r.started.0) as u128;
        self.destage_wait_ns += r.service.destage_wait_ns as u128;
        let d = [r.service.destage_seek_ns, r.service.destage_rotation_ns, r.service.destage_transfer_ns];
        if d.iter().any(|&x| x > 0) {
            self.destages += 1;
            for (sum, x) in self.destage_ns.iter_mut().zip(d) {
                *sum += x as u128;
            }
        }
    }

    /// Each class that had measured requests, by name.
    fn class_summaries(&self) -> std::collections::BTreeMap<&'static str, ClassSummary> {
        [Class::BestEffort, Class::RealTime, Class::Background].into_iter()
            .filter_map(|class| {
                let c = &self.classes[class as usize];
                let h = c.host_response.as_ref()?;
                Some((class.name(), ClassSummary {
                    requests: h.len(),
                    host_response_ms: Distribution::of(h, c.max_ns),
                    deadline_requests: c.deadline_requests,
                    deadline_misses: c.deadline_misses,
                }))
            })
            .collect()
    }

    /// Every measured request's host response: the classes' histograms
    /// summed (each request is recorded once, in its class's; most runs
    /// have one class, whose histogram is borrowed).
    fn host_response(&self) -> std::borrow::Cow<'_, Histogram<u64>> {
        let mut recorded = self.classes.iter().filter_map(|c| c.host_response.as_deref());
        let Some(first) = recorded.next() else {
            return std::borrow::Cow::Owned(response_histogram());
        };
        let mut sum = std::borrow::Cow::Borrowed(first);
        for h in recorded {
            sum.to_mut().add(h).expect("histograms of the same bounds");
        }
        sum
    }

    /// The longest wait and how many waited more than ten times the mean.
    fn starvation(&self, host_response: &Histogram<u64>) -> Starvation {
        if host_response.is_empty() {
            return Starvation::default();
        }
        let threshold_ns = 10.0 * host_response.mean();
        let over = host_response.iter_recorded()
            .filter(|v| v.value_iterated_to() as f64 > threshold_ns)
            .map(|v| v.count_at_value())
            .sum();
        Starvation { longest_wait_ms: self.host_max_ns as f64 / NS_PER_MS as f64, threshold_ms: threshold_ns / NS_PER_MS as f64,
                     waited_over_10x_mean: over }
    }

    /// The statistics of a run that ended at `end`.
    pub fn summary(&self, end: SimTime) -> Summary {
        let n = self.measured.max(1) as f64;
        let mean_ms = |sum: u128| sum as f64 / n / NS_PER_MS as f64;
        let per_destage = |sum: u128| sum as f64 / self.destages.max(1) as f64 / NS_PER_MS as f64;
        let span_ns = self.last_done.0.saturating_sub(self.first_measured_arrival.map_or(0, |t| t.0));
        let span_s = span_ns as f64 / NS_PER_S as f64;
        let per_s = |x: f64| if span_s > 0.0 { x / span_s } else { 0.0 };
        let host_response = self.host_response();
        Summary {
            requests: self.measured,
            reads: self.reads,
            writes: self.writes,
            sim_time_ms: end.as_ms_f64(),
            iops: per_s(self.measured as f64),
            mb_per_s: per_s((self.blocks * self.sector_bytes) as f64 / 1e6),
            host_response_ms: Distribution::of(&host_response, self.host_max_ns),
            disk_response_ms: Distribution::of(&self.disk_response, self.disk_max_ns),
            classes: self.class_summaries(),
            starvation: self.starvation(&host_response),
            percentile_significant_digits: PERCENTILE_SIGNIFICANT_DIGITS,
            mean_seek_ms: mean_ms(self.seek_ns),
            mean_rotation_ms: mean_ms(self.rotation_ns),
            mean_transfer_ms: mean_ms(self.transfer_ns),
            mean_overhead_ms: mean_ms(self.overhead_ns),
            mean_bus_ms: mean_ms(self.bus_ns),
            mean_destage_wait_ms: mean_ms(self.destage_wait_ns),
            mean_service_ms: mean_ms(self.service_ns),
            destages: self.destages,
            mean_destage_seek_ms: per_destage(self.destage_ns[0]),
            mean_destage_rotation_ms: per_destage(self.destage_ns[1]),
            mean_destage_transfer_ms: per_destage(self.destage_ns[2]),
            mean_host_queue: self.host_queue.mean(end),
            max_host_queue: self.host_queue.max,
            mean_controller_queue: self.controller_queue.as_ref().map(|g| g.mean(end)),
            max_controller_queue: self.controller_queue.as_ref().map(|g| g.max),
            mean_disk_queue: self.disk_queue.mean(end),
            max_disk_queue: self.disk_queue.max,
            deadline_requests: self.deadline_requests,
            deadline_misses: self.deadline_misses,
        }
    }
}
