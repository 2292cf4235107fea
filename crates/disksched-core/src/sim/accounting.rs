//! Request accounting: every request is accounted for, and each queue level
//! proves its own counts at the end of a run.

use crate::error::{Error, Result};
use serde::Serialize;

/// A queue's counters, as GEOM_SCHED exports them: requests that entered,
/// requests in flight below it (count, bytes, writes; the peak over the run,
/// since all are done at the end) and requests done.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct QueueCounters {
    /// Requests (pieces) that entered the queue, bypassing it or not.
    pub requests: u64,
    /// Requests whose service at the disk finished.
    pub done: u64,
    /// Requests sent below the queue and not yet done.
    pub in_flight: u64,
    /// Their bytes.
    pub in_flight_bytes: u64,
    /// How many of them are writes.
    pub in_flight_writes: u64,
    /// Peak of `in_flight` over the run.
    pub max_in_flight: u64,
    /// Peak of `in_flight_bytes` over the run.
    pub max_in_flight_bytes: u64,
    /// Peak of `in_flight_writes` over the run.
    pub max_in_flight_writes: u64,
}

impl QueueCounters {
    /// A request went below the queue.
    #[inline]
    pub(crate) fn sent(&mut self, bytes: u64, write: bool) {
        self.in_flight += 1;
        self.in_flight_bytes += bytes;
        self.in_flight_writes += write as u64;
        self.max_in_flight = self.max_in_flight.max(self.in_flight);
        self.max_in_flight_bytes = self.max_in_flight_bytes.max(self.in_flight_bytes);
        self.max_in_flight_writes = self.max_in_flight_writes.max(self.in_flight_writes);
    }
    /// A request sent below finished at the disk.
    #[inline]
    pub(crate) fn finished(&mut self, bytes: u64, write: bool) {
        self.in_flight -= 1;
        self.in_flight_bytes -= bytes;
        self.in_flight_writes -= write as u64;
        self.done += 1;
    }
    /// Entered and not yet done (queued here or in flight below).
    #[inline]
    pub(crate) fn outstanding(&self) -> u64 {
        self.requests - self.done
    }
    /// All `pieces` passed through and nothing is left in flight.
    fn balanced(&self, pieces: u64) -> bool {
        self.requests == pieces && self.done == pieces && self.in_flight == 0 && self.in_flight_bytes == 0
    }
}

/// Request accounting, checked at the end of every run.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    /// The workload's requests.
    pub arrived: u64,
    /// Pieces they became (one per disk touched; = arrived on one disk).
    pub pieces: u64,
    /// Pieces the host queue sent below it (dispatched or bypassed).
    pub host_dispatched: u64,
    /// Pieces a drive took into service.
    pub drive_dispatched: u64,
    /// The workload's requests completed (with their last piece).
    pub completed: u64,
    /// The host queue's counters.
    pub host_queue: QueueCounters,
    /// With a controller level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller_queue: Option<QueueCounters>,
    /// Every disk's command queue together (in flight: in service at a drive).
    pub disk_queue: QueueCounters,
    /// Range requests placed by the drive, and those that had to overlap a
    /// concurrent range write's blocks (every acceptable start was claimed).
    pub range_placed: u64,
    /// See `range_placed`.
    pub range_overlaps: u64,
}

impl Counters {
    /// The conservation check: inserted = dispatched = completed at every
    /// level, nothing left queued (`queued`), live (`live`) or half-joined
    /// (`open_splits`), each piece completed once (`done_once`), and the
    /// metrics saw every completion (`measured`).
    pub(crate) fn check(&self, queued: u64, live: usize, open_splits: bool, done_once: u64, measured: u64) -> Result<()> {
        let p = self.pieces;
        if !self.host_queue.balanced(p) || !self.controller_queue.as_ref().is_none_or(|q| q.balanced(p)) || !self.disk_queue.balanced(p) {
            return Err(Error::Invariant(format!("queue counters: host {:?} controller {:?} disk {:?}",
                self.host_queue, self.controller_queue, self.disk_queue)));
        }
        if self.arrived != self.completed || queued != 0 || live != 0 || self.host_dispatched != p
            || self.drive_dispatched != p || measured != self.completed || open_splits
        {
            return Err(Error::Invariant(format!(
                "request conservation: arrived {} pieces {} host-dispatched {} drive-dispatched {} completed {} still queued {} live {}",
                self.arrived, p, self.host_dispatched, self.drive_dispatched, self.completed, queued, live)));
        }
        if done_once != p {
            return Err(Error::Invariant("some request never completed".into()));
        }
        Ok(())
    }
}

/// Seqs marked done: every seq below `below` (a multiple of 64), then a bit
/// per seq, so memory follows the spread of the seqs in flight rather than
/// the length of the run.
#[derive(Default)]
pub(crate) struct DoneSet {
    below: u64,
    bits: std::collections::VecDeque<u64>,
    /// Seqs marked.
    pub(crate) count: u64,
}

impl DoneSet {
    /// Mark `seq` done; false if it already was.
    pub(crate) fn insert(&mut self, seq: u64) -> bool {
        let Some(off) = seq.checked_sub(self.below) else { return false };
        let (word, bit) = ((off / 64) as usize, 1u64 << (off % 64));
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        if self.bits[word] & bit != 0 {
            return false;
        }
        self.bits[word] |= bit;
        self.count += 1;
        while self.bits.front() == Some(&u64::MAX) {
            self.bits.pop_front();
            self.below += 64;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_set_rejects_a_second_completion_in_any_order() {
        let mut d = DoneSet::default();
        // 0..200 in a scrambled order, each once.
        let order: Vec<u64> = (0..200u64).map(|i| (i * 37) % 200).collect();
        for &s in &order {
            assert!(d.insert(s), "{s} first time");
        }
        assert_eq!(d.count, 200);
        for &s in &order {
            assert!(!d.insert(s), "{s} second time");
        }
        // The fully done prefix is folded into `below`: 3 whole words of 64.
        assert_eq!(d.below, 192);
        assert!(d.insert(250) && !d.insert(250) && d.insert(200));
    }

    #[test]
    fn queue_counters_keep_the_peak_and_balance_when_all_are_done() {
        let mut q = QueueCounters::default();
        q.requests = 3;
        q.sent(4096, false);
        q.sent(512, true);
        q.finished(4096, false);
        q.sent(1024, true);
        assert_eq!((q.max_in_flight, q.max_in_flight_bytes, q.max_in_flight_writes), (2, 4096 + 512, 2));
        assert_eq!(q.outstanding(), 2);
        assert!(!q.balanced(3));
        q.finished(512, true);
        q.finished(1024, true);
        assert!(q.balanced(3) && !q.balanced(4));
    }

    /// Counters of a finished run of `n` requests on one disk, no controller: everything balanced.
    fn balanced_run(n: u64) -> Counters {
        let q = QueueCounters { requests: n, done: n, ..Default::default() };
        Counters { arrived: n, pieces: n, host_dispatched: n, drive_dispatched: n, completed: n,
                   host_queue: q.clone(), disk_queue: q, ..Default::default() }
    }

    #[test]
    fn the_conservation_check_fails_each_way_a_request_can_go_missing() {
        let n = 10;
        assert!(balanced_run(n).check(0, 0, false, n, n).is_ok());
        // Each case breaks one thing a run with a lost or doubled request would show.
        let cases: Vec<(&str, Counters, (u64, usize, bool, u64, u64))> = vec![
            ("one never completed", Counters { completed: n - 1, ..balanced_run(n) }, (0, 0, false, n, n - 1)),
            ("one still queued", balanced_run(n), (1, 0, false, n, n)),
            ("one still live", balanced_run(n), (0, 1, false, n, n)),
            ("a split half-joined", balanced_run(n), (0, 0, true, n, n)),
            ("one completed twice, another never", balanced_run(n), (0, 0, false, n - 1, n)),
            ("the metrics missed one", balanced_run(n), (0, 0, false, n, n - 1)),
            ("the host sent one twice", Counters { host_dispatched: n + 1, ..balanced_run(n) }, (0, 0, false, n, n)),
            ("a drive never took one", Counters { drive_dispatched: n - 1, ..balanced_run(n) }, (0, 0, false, n, n)),
            ("the host queue still holds one", Counters { host_queue: QueueCounters { requests: n, done: n - 1, in_flight: 1,
                ..Default::default() }, ..balanced_run(n) }, (0, 0, false, n, n)),
            ("the disk queue lost one", Counters { disk_queue: QueueCounters { requests: n, done: n - 1, ..Default::default() },
                ..balanced_run(n) }, (0, 0, false, n, n)),
            ("the controller queue lost one", Counters { controller_queue: Some(QueueCounters { requests: n, done: n - 1,
                ..Default::default() }), ..balanced_run(n) }, (0, 0, false, n, n)),
        ];
        for (what, c, (queued, live, open, done_once, measured)) in cases {
            assert!(c.check(queued, live, open, done_once, measured).is_err(), "{what}: not caught");
        }
    }
}
