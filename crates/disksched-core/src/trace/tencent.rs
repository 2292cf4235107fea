//! Tencent CBS block traces: `Timestamp,Offset,Size,IOType,VolumeID`.
//!
//! Timestamp in whole seconds since the Unix epoch (kept absolute), Offset
//! and Size in 512-byte sectors, IOType 0 = read, 1 = write, VolumeID
//! becomes the device.

use super::{csv_fields, field_err, parse_u32, parse_u64, CsvHeader, LineParser, LineResult, TraceRecord};
use std::collections::VecDeque;
use std::io::Write;

#[derive(Default)]
pub(crate) struct Parser {
    header: CsvHeader,
}

impl LineParser for Parser {
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult {
        if self.header.is_header(line) {
            return Ok(());
        }
        let (f, n) = csv_fields::<5>(line);
        if n != 5 {
            return Err(format!("found {n} comma-separated fields, expected 5: Timestamp,Offset,Size,IOType,VolumeID"));
        }
        let s = parse_u64(f[0], 1, "Timestamp", "seconds since the epoch")?;
        let time_ns = s.checked_mul(1_000_000_000).ok_or_else(|| field_err(1, "Timestamp", f[0], "seconds since the epoch"))?;
        let lbn = parse_u64(f[1], 2, "Offset", "a 512-byte sector number")?;
        let blocks = parse_u32(f[2], 3, "Size", "a count of 512-byte sectors")?;
        if blocks == 0 {
            return Err(field_err(3, "Size", f[2], "a positive count of 512-byte sectors"));
        }
        let is_write = match f[3] {
            "1" => true,
            "0" => false,
            _ => return Err(field_err(4, "IOType", f[3], "0 (read) or 1 (write)")),
        };
        let device = parse_u32(f[4], 5, "VolumeID", "a volume number")?;
        out.push_back(TraceRecord { time_ns, device, lbn, blocks, is_write, response_ns: None, think_ns: None });
        Ok(())
    }
}

pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = csv_fields::<5>(line);
    n == 5
        && f[0].parse::<u64>().is_ok()
        && f[1].parse::<u64>().is_ok()
        && f[2].parse::<u32>().is_ok()
        && matches!(f[3], "0" | "1")
        && f[4].parse::<u32>().is_ok()
}

/// Timestamp in whole seconds (sub-second truncated).
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "{},{},{},{},{}", r.time_ns / 1_000_000_000, r.lbn, r.blocks, if r.is_write { 1 } else { 0 }, r.device)
}
