//! blkparse's default text output (Linux blktrace):
//! `maj,min cpu seq sec.nsec pid action rwbs sector + blocks [process]`.
//!
//! A record is a `D` event (issued to the driver): its time (seconds since
//! the trace start) is the arrival, `sector + blocks` its 512-byte range,
//! rwbs `R`/`W` the direction (discards, flushes and other data-less
//! requests are skipped). The matching `C` event (completed, same device
//! and sector) supplies `response_ns` = C time - D time. Records are
//! emitted in D order; a D waits for its C at most `MAX_WAIT_NS` of trace
//! time or `MAX_PENDING` later issues, then goes out with no response time,
//! so memory stays bounded. Other actions (Q, G, I, M, P, U, m, ...) are
//! ignored, as are the per-CPU and total summaries blkparse prints at the end.
//! Device = the kernel's dev_t encoding, `major << 20 | minor`.

use super::{field_err, parse_decimal, parse_u32, parse_u64, split_fields, LineParser, LineResult, TraceRecord};
use std::collections::{HashMap, VecDeque};

/// Longest a D waits for its C (the block layer's default request timeout).
pub const MAX_WAIT_NS: u64 = 30_000_000_000;
/// Most D events held back waiting for completions.
pub const MAX_PENDING: usize = 65_536;

struct Pending {
    rec: TraceRecord,
    done: bool,
}

#[derive(Default)]
pub(crate) struct Parser {
    summary: bool,
    /// Issued requests in D order; `first_seq` is the sequence number of the front.
    pending: VecDeque<Pending>,
    first_seq: u64,
    /// (device, sector) -> sequence numbers of its pending D events, oldest first.
    by_key: HashMap<(u32, u64), VecDeque<u64>>,
}

fn parse_dev(s: &str) -> Option<u32> {
    let (maj, min) = s.split_once(',')?;
    let (maj, min): (u32, u32) = (maj.parse().ok()?, min.parse().ok()?);
    (maj < (1 << 12) && min < (1 << 20)).then_some(maj << 20 | min)
}

impl Parser {
    /// Emit the front while it is complete or has waited too long.
    fn drain(&mut self, now_ns: u64, out: &mut VecDeque<TraceRecord>, all: bool) {
        while let Some(front) = self.pending.front() {
            let expired = all
                || self.pending.len() > MAX_PENDING
                || now_ns.saturating_sub(front.rec.time_ns) > MAX_WAIT_NS;
            if !(front.done || expired) {
                break;
            }
            let p = self.pending.pop_front().expect("front exists");
            if !p.done {
                let key = (p.rec.device, p.rec.lbn);
                if let Some(q) = self.by_key.get_mut(&key) {
                    q.retain(|&s| s != self.first_seq);
                    if q.is_empty() {
                        self.by_key.remove(&key);
                    }
                }
            }
            self.first_seq += 1;
            out.push_back(p.rec);
        }
    }
}

impl LineParser for Parser {
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult {
        if self.summary {
            return Ok(());
        }
        let (f, n) = split_fields::<11>(line.split_ascii_whitespace());
        let Some(device) = parse_dev(f[0]) else {
            if line.starts_with("CPU") || line.starts_with("Total") {
                self.summary = true;
                return Ok(());
            }
            return Err(field_err(1, "device", f[0], "major,minor (a blkparse event line: maj,min cpu seq time pid action rwbs ...)"));
        };
        if n < 6 {
            return Err(format!("found {n} fields, expected at least 6: maj,min cpu seq time pid action"));
        }
        let action = f[5];
        if action != "D" && action != "C" {
            return Ok(());
        }
        if n < 10 || f[8] != "+" {
            // Data-less events (flushes, SCSI packet commands) have no range.
            return Ok(());
        }
        let time_ns = parse_decimal(f[3], 9).ok_or_else(|| field_err(4, "time", f[3], "seconds since the trace start"))?;
        let is_write = if f[6].contains('W') {
            true
        } else if f[6].contains('R') {
            false
        } else {
            return Ok(()); // discard (D) or none (N)
        };
        let sector = parse_u64(f[7], 8, "sector", "a 512-byte sector number")?;
        let blocks = parse_u32(f[9], 10, "blocks", "a count of 512-byte sectors")?;
        if action == "D" {
            if blocks == 0 {
                return Ok(());
            }
            let seq = self.first_seq + self.pending.len() as u64;
            self.pending.push_back(Pending {
                rec: TraceRecord { time_ns, device, lbn: sector, blocks, is_write, response_ns: None, think_ns: None },
                done: false,
            });
            self.by_key.entry((device, sector)).or_default().push_back(seq);
        } else if let Some(q) = self.by_key.get_mut(&(device, sector)) {
            let seq = q.pop_front().expect("queues are never left empty");
            if q.is_empty() {
                self.by_key.remove(&(device, sector));
            }
            let p = &mut self.pending[(seq - self.first_seq) as usize];
            p.rec.response_ns = Some(time_ns.saturating_sub(p.rec.time_ns));
            p.done = true;
        }
        self.drain(time_ns, out, false);
        Ok(())
    }

    fn finish(&mut self, out: &mut VecDeque<TraceRecord>) {
        self.drain(u64::MAX, out, true);
    }
}

/// `maj,min cpu seq time pid action ...`.
pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = split_fields::<7>(line.split_ascii_whitespace());
    n >= 7
        && parse_dev(f[0]).is_some()
        && f[1].parse::<u32>().is_ok()
        && f[2].parse::<u64>().is_ok()
        && f[3].contains('.')
        && parse_decimal(f[3], 9).is_some()
        && f[5].len() <= 2
        && f[5].bytes().all(|b| b.is_ascii_alphabetic())
}
