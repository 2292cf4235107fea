//! Time series of a run in fixed windows: per client, and the host
//! scheduler's and the freeblock tasks' own rows.

use crate::host::{Class, Request};
use crate::time::NS_PER_MS;

/// Time series in fixed windows: per client, throughput and deadline misses
/// (one row per client and window, dense from window 0 to the last window
/// with a completion; the client's class is that of its first request), and
/// the host scheduler's own samples (`Scheduler::timeline`).
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Window length, ms.
    pub window_ms: f64,
    /// Client of the row.
    pub client: Vec<u32>,
    /// The client's class (of its first request).
    pub class: Vec<&'static str>,
    /// Window index: the window starts at `window x window_ms`.
    pub window: Vec<u64>,
    /// Bytes of the client's requests completed in the window.
    pub bytes: Vec<u64>,
    /// The client's requests completed in the window.
    pub requests: Vec<u64>,
    /// Requests that carried a deadline, and those that completed after it.
    pub deadline_requests: Vec<u64>,
    /// Of those, completed after their deadline.
    pub missed: Vec<u64>,
    /// Host scheduler samples (`Scheduler::timeline`): time, ns.
    pub sample_ns: Vec<u64>,
    /// Host scheduler samples: name.
    pub sample_name: Vec<String>,
    /// Host scheduler samples: value.
    pub sample_value: Vec<f64>,
    /// Freeblock tasks' progress per window (`add_tasks`): the task's name.
    pub task: Vec<String>,
    /// Window index of the task row.
    pub task_window: Vec<u64>,
    /// Background blocks the task moved in the window (all disks).
    pub task_blocks: Vec<u64>,
    /// Background blocks the task had moved by the window's end, in all passes.
    pub task_done: Vec<u64>,
    /// Bytes of the window's blocks.
    pub task_bytes: Vec<u64>,
}

impl Series {
    /// Add each task's blocks moved per window (`windows[t][w]`), a row per
    /// task and window up to the later of the clients' and the tasks' last window.
    pub fn add_tasks(&mut self, names: &[String], windows: &[Vec<u64>], sector_bytes: u64) {
        let n = windows.iter().map(Vec::len).chain(self.window.iter().map(|&w| w as usize + 1)).max().unwrap_or(0);
        for (name, w) in names.iter().zip(windows) {
            let mut done = 0;
            for k in 0..n {
                let b = w.get(k).copied().unwrap_or(0);
                done += b;
                self.task.push(name.clone());
                self.task_window.push(k as u64);
                self.task_blocks.push(b);
                self.task_done.push(done);
                self.task_bytes.push(b * sector_bytes);
            }
        }
    }
}

/// Most rows (clients x windows) a series may hold: about 250 MB of output.
/// A window far smaller than the run (or a vast number of clients) would
/// otherwise allocate gigabytes for a handful of requests.
pub const MAX_SERIES_ROWS: u64 = 4_000_000;

/// Per client: class and, per window, [bytes, requests, deadline requests, missed].
pub(super) struct SeriesAcc {
    pub(super) window_ns: u64,
    clients: std::collections::BTreeMap<u32, (Class, Vec<[u64; 4]>)>,
    /// Set when a completion would take the series past `MAX_SERIES_ROWS`:
    /// (clients, windows, time ns); the series is then dropped.
    pub(super) too_large: Option<(u64, u64, u64)>,
}

impl SeriesAcc {
    pub(super) fn new(window_ns: u64) -> SeriesAcc {
        SeriesAcc { window_ns: window_ns.max(1), clients: Default::default(), too_large: None }
    }

    pub(super) fn add(&mut self, r: &Request, bytes: u64) {
        if self.too_large.is_some() {
            return;
        }
        let w = r.service.done.0 / self.window_ns;
        let clients = self.clients.len() as u64 + !self.clients.contains_key(&r.client) as u64;
        let windows = self.clients.values().map(|(_, v)| v.len() as u64).max().unwrap_or(0).max(w + 1);
        if clients.saturating_mul(windows) > MAX_SERIES_ROWS {
            self.too_large = Some((clients, windows, r.service.done.0));
            self.clients.clear();
            return;
        }
        let w = w as usize;
        let (_, windows) = self.clients.entry(r.client).or_insert((r.class, Vec::new()));
        if windows.len() <= w {
            windows.resize(w + 1, [0; 4]);
        }
        let missed = r.deadline.is_some_and(|d| r.service.done > d);
        let cell = &mut windows[w];
        cell[0] += bytes;
        cell[1] += 1;
        cell[2] += r.deadline.is_some() as u64;
        cell[3] += missed as u64;
    }

    pub(super) fn finish(self) -> Series {
        let n = self.clients.values().map(|(_, w)| w.len()).max().unwrap_or(0);
        let mut s = Series { window_ms: self.window_ns as f64 / NS_PER_MS as f64, ..Default::default() };
        for (client, (class, windows)) in self.clients {
            for w in 0..n {
                let cell = windows.get(w).copied().unwrap_or([0; 4]);
                s.client.push(client);
                s.class.push(class.name());
                s.window.push(w as u64);
                s.bytes.push(cell[0]);
                s.requests.push(cell[1]);
                s.deadline_requests.push(cell[2]);
                s.missed.push(cell[3]);
            }
        }
        s
    }
}
