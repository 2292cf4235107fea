//! Per-request records as columns, kept for the run or streamed to a sink
//! in chunks (`with_record_sink`).

use crate::host::Request;
use std::cell::RefCell;

/// Per-request records as columns (times in ns).
#[derive(Clone, Debug, Default)]
pub struct Records {
    /// The workload's request number (arrival order; shared by the pieces of a split request).
    pub seq: Vec<u64>,
    /// The client that issued it.
    pub client: Vec<u32>,
    /// Where the request went: its array address (for a range request, the start the drive chose).
    pub lbn: Vec<u64>,
    /// Length, blocks.
    pub blocks: Vec<u32>,
    /// The disk that served it (the last to finish, if split).
    pub disk: Vec<u32>,
    /// Class: 0 best-effort, 1 real-time, 2 background.
    pub class: Vec<u8>,
    /// A write.
    pub is_write: Vec<bool>,
    /// Arrival at the host.
    pub arrival_ns: Vec<u64>,
    /// Left the host queue (for the controller's; = `issued_ns` without a controller level).
    pub host_dispatched_ns: Vec<u64>,
    /// Sent to the disk.
    pub issued_ns: Vec<u64>,
    /// The drive began serving it.
    pub started_ns: Vec<u64>,
    /// Completion reported.
    pub done_ns: Vec<u64>,
    /// Seek (or head switch) time.
    pub seek_ns: Vec<u64>,
    /// Rotational wait.
    pub rotation_ns: Vec<u64>,
    /// Media transfer.
    pub transfer_ns: Vec<u64>,
    /// Time it waited for the drive to finish a destage (earlier write-back data).
    pub destage_wait_ns: Vec<u64>,
    /// A write-back write: its own destage's seek + rotation + media transfer, after it was reported.
    pub destage_ns: Vec<u64>,
}

impl Records {
    pub(super) fn push(&mut self, r: &Request) {
        self.seq.push(r.logical);
        self.client.push(r.client);
        self.lbn.push(r.lbn);
        self.blocks.push(r.blocks);
        self.disk.push(r.disk);
        self.class.push(r.class as u8);
        self.is_write.push(r.is_write);
        self.arrival_ns.push(r.arrival.0);
        self.host_dispatched_ns.push(r.host_dispatched.0);
        self.issued_ns.push(r.issued.0);
        self.started_ns.push(r.started.0);
        self.done_ns.push(r.service.done.0);
        self.seek_ns.push(r.service.seek_ns);
        self.rotation_ns.push(r.service.rotation_ns);
        self.transfer_ns.push(r.service.transfer_ns);
        self.destage_wait_ns.push(r.service.destage_wait_ns);
        self.destage_ns.push(r.service.destage_seek_ns + r.service.destage_rotation_ns + r.service.destage_transfer_ns);
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.seq.len()
    }
    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }
}

/// Where streamed records go: each full chunk, in completion order.
pub type RecordSink = Box<dyn FnMut(Records)>;

thread_local! {
    /// The sink of runs built and run on this thread, with its chunk size in rows.
    static RECORD_SINK: RefCell<Option<(usize, RecordSink)>> = const { RefCell::new(None) };
}

/// Call `f` (which builds and runs simulations on this thread) with per-request
/// records streamed: every `chunk_rows` completed requests go to `sink` instead of
/// accumulating, so memory stays flat at any run length (the CLI's
/// `records.parquet`); a run's `records` then hold only the last partial chunk.
pub fn with_record_sink<R>(chunk_rows: usize, sink: RecordSink, f: impl FnOnce() -> R) -> R {
    crate::scoped::with(&RECORD_SINK, (chunk_rows.max(1), sink), f)
}

/// Rows per chunk of the sink installed on this thread (0: none, records accumulate).
pub(super) fn sink_chunk_rows() -> usize {
    RECORD_SINK.with(|s| s.borrow().as_ref().map_or(0, |(n, _)| *n))
}

/// Hand a full chunk to this thread's sink.
pub(super) fn send_chunk(chunk: Records) {
    RECORD_SINK.with(|s| {
        if let Some((_, sink)) = s.borrow_mut().as_mut() {
            sink(chunk)
        }
    });
}
