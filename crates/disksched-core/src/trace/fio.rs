//! fio iolog, versions 2 and 3 (what `write_iolog` records and
//! `read_iolog` replays).
//!
//! The first line is `fio version 2 iolog` or `fio version 3 iolog`. Then:
//! - v2: `filename action` (add, open, close) or `filename action offset length`
//!   (read, write, trim, sync, datasync), and `filename wait usec [0]`: a
//!   pause of `usec` before the next I/O. A v2 log has no clock, so `time_ns`
//!   is the sum of the waits so far (every wait counted, including the
//!   < 100 us ones fio's replay ignores).
//! - v3: the same lines each led by a timestamp in microseconds since the
//!   start of the run. fio's documentation gives no unit; logs written by
//!   fio 3.33 (`write_iolog`, `rate_iops=50`) step by 20000 per I/O and end
//!   near 10^6 after a 1 s run, so it is microseconds.
//!
//! offset and length are bytes. Devices are numbered 0, 1, ... by the order
//! in which filenames first appear. Only reads and writes become records;
//! file actions, trim, sync and datasync carry no data transfer and are
//! skipped (not counted as bad).

use super::{byte_range_to_blocks, field_err, parse_u64, split_fields, LineParser, LineResult, TraceRecord, BLOCK_BYTES};
use std::collections::{HashMap, VecDeque};
use std::io::Write;

#[derive(Default)]
pub(crate) struct Parser {
    /// 2 or 3 once the header is read.
    version: u8,
    devices: HashMap<String, u32>,
    /// v2: accumulated waits.
    waited_ns: u64,
}

impl Parser {
    fn device(&mut self, name: &str) -> u32 {
        if let Some(&d) = self.devices.get(name) {
            return d;
        }
        let d = self.devices.len() as u32;
        self.devices.insert(name.to_string(), d);
        d
    }
}

impl LineParser for Parser {
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult {
        if self.version == 0 {
            self.version = match line {
                "fio version 2 iolog" => 2,
                "fio version 3 iolog" => 3,
                _ => return Err(format!("header {line:?}: expected \"fio version 2 iolog\" or \"fio version 3 iolog\"")),
            };
            return Ok(());
        }
        let (f, n) = split_fields::<6>(line.split_ascii_whitespace());
        // Field numbers as the user sees them: v3 has the timestamp first.
        let (k, time_ns) = if self.version == 3 {
            let us = parse_u64(f[0], 1, "timestamp", "microseconds since the start")?;
            (1, us.checked_mul(1000).ok_or_else(|| field_err(1, "timestamp", f[0], "microseconds since the start"))?)
        } else {
            (0, self.waited_ns)
        };
        let want = "filename action [offset length]";
        let lead = if k == 1 { "timestamp " } else { "" };
        if n < k + 2 || n > k + 4 {
            return Err(format!("found {n} fields, expected {lead}{want}"));
        }
        let (name, action) = (f[k], f[k + 1]);
        match action {
            "add" | "open" | "close" => {
                self.device(name);
                Ok(())
            }
            "wait" if self.version == 2 => {
                if n < 3 {
                    return Err(format!("found {n} fields, expected filename wait usec"));
                }
                let us = parse_u64(f[2], 3, "offset", "a wait in microseconds")?;
                self.waited_ns = self.waited_ns.saturating_add(us.saturating_mul(1000));
                Ok(())
            }
            "read" | "write" | "trim" | "sync" | "datasync" => {
                if n != k + 4 {
                    return Err(format!("found {n} fields, expected {lead}filename {action} offset length"));
                }
                let offset = parse_u64(f[k + 2], k + 3, "offset", "a byte offset")?;
                let len = parse_u64(f[k + 3], k + 4, "length", "a byte count")?;
                let device = self.device(name);
                if !matches!(action, "read" | "write") {
                    return Ok(());
                }
                let (lbn, blocks) = byte_range_to_blocks(offset, len)
                    .ok_or_else(|| field_err(k + 4, "length", f[k + 3], "a positive byte count below 2 TiB"))?;
                out.push_back(TraceRecord { time_ns, device, lbn, blocks, is_write: action == "write", response_ns: None, think_ns: None });
                Ok(())
            }
            _ => Err(field_err(
                k + 2,
                "action",
                action,
                if self.version == 2 {
                    "add, open, close, read, write, trim, sync, datasync or wait"
                } else {
                    "add, open, close, read, write, trim, sync or datasync"
                },
            )),
        }
    }
}

/// Only the header identifies fio (detection checks it first).
pub(crate) fn sniff(line: &str) -> bool {
    line.starts_with("fio version")
}

/// A version 3 I/O line, `timestamp_us dev<N> read|write offset length`;
/// sub-us times are truncated. `TraceWriter` adds header and file lines.
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        w,
        "{} dev{} {} {} {}",
        r.time_ns / 1000,
        r.device,
        if r.is_write { "write" } else { "read" },
        r.lbn * BLOCK_BYTES,
        r.blocks as u64 * BLOCK_BYTES
    )
}

/// `add` and `open` for a device's file before its first I/O.
pub(crate) fn write_file_lines(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    let us = r.time_ns / 1000;
    writeln!(w, "{us} dev{} add", r.device)?;
    writeln!(w, "{us} dev{} open", r.device)
}
