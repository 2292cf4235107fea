//! Alibaba cloud block traces: `device_id,opcode,offset,length,timestamp`.
//!
//! offset and length in bytes, opcode `R` or `W` (any case), timestamp in
//! microseconds since the Unix epoch; `time_ns` keeps it absolute (the
//! format's own clock) so traces of several devices can be merged.

use super::{byte_range_to_blocks, csv_fields, field_err, parse_u32, parse_u64, CsvHeader, LineParser, LineResult, TraceRecord, BLOCK_BYTES};
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
            return Err(format!("found {n} comma-separated fields, expected 5: device_id,opcode,offset,length,timestamp"));
        }
        let device = parse_u32(f[0], 1, "device_id", "a device number")?;
        let is_write = match f[1] {
            "W" | "w" => true,
            "R" | "r" => false,
            _ => return Err(field_err(2, "opcode", f[1], "R or W")),
        };
        let offset = parse_u64(f[2], 3, "offset", "a byte offset")?;
        let len = parse_u64(f[3], 4, "length", "a byte count")?;
        let (lbn, blocks) = byte_range_to_blocks(offset, len).ok_or_else(|| field_err(4, "length", f[3], "a positive byte count below 2 TiB"))?;
        let us = parse_u64(f[4], 5, "timestamp", "microseconds since the epoch")?;
        let time_ns = us.checked_mul(1000).ok_or_else(|| field_err(5, "timestamp", f[4], "microseconds since the epoch"))?;
        out.push_back(TraceRecord { time_ns, device, lbn, blocks, is_write, response_ns: None, think_ns: None });
        Ok(())
    }
}

pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = csv_fields::<5>(line);
    n == 5
        && f[0].parse::<u32>().is_ok()
        && matches!(f[1], "R" | "W" | "r" | "w")
        && f[2].parse::<u64>().is_ok()
        && f[3].parse::<u64>().is_ok()
        && f[4].parse::<u64>().is_ok()
}

/// timestamp in whole microseconds (sub-us truncated).
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        w,
        "{},{},{},{},{}",
        r.device,
        if r.is_write { 'W' } else { 'R' },
        r.lbn * BLOCK_BYTES,
        r.blocks as u64 * BLOCK_BYTES,
        r.time_ns / 1000
    )
}
