//! DiskSim's ascii trace: `time_ms devno blkno bcount flags`, whitespace
//! separated. Time is the arrival in ms since the trace start (decimal),
//! blkno and bcount are 512-byte blocks, flags bit 0 set = read (DiskSim's
//! `B_READ`); the other flag bits are not used.

use super::{field_err, parse_decimal, parse_u32, parse_u64, split_fields, LineParser, LineResult, TraceRecord};
use std::collections::VecDeque;
use std::io::Write;

pub(crate) struct Parser;

const EXPECT_FIELDS: &str = "5 fields: time_ms devno blkno bcount flags";

impl LineParser for Parser {
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult {
        let (f, n) = split_fields::<5>(line.split_ascii_whitespace());
        if n != 5 {
            return Err(format!("found {n} fields, expected {EXPECT_FIELDS}"));
        }
        let time_ns = parse_decimal(f[0], 6).ok_or_else(|| field_err(1, "time_ms", f[0], "a non-negative time in ms"))?;
        let device = parse_u32(f[1], 2, "devno", "a device number")?;
        let lbn = parse_u64(f[2], 3, "blkno", "a block number")?;
        let blocks = parse_u32(f[3], 4, "bcount", "a block count")?;
        if blocks == 0 {
            return Err(field_err(4, "bcount", f[3], "a positive block count"));
        }
        let flags = parse_u32(f[4], 5, "flags", "an integer flag word")?;
        out.push_back(TraceRecord { time_ns, device, lbn, blocks, is_write: flags & 1 == 0, response_ns: None, think_ns: None });
        Ok(())
    }
}

/// Five whitespace fields: a decimal, then four integers.
pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = split_fields::<5>(line.split_ascii_whitespace());
    n == 5 && parse_decimal(f[0], 6).is_some() && f[1..].iter().all(|t| t.parse::<u64>().is_ok())
}

/// `time_ms` with 6 decimals (ns, exact), flags 1 = read, 0 = write.
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        w,
        "{}.{:06}\t{}\t{}\t{}\t{}",
        r.time_ns / 1_000_000,
        r.time_ns % 1_000_000,
        r.device,
        r.lbn,
        r.blocks,
        if r.is_write { 0 } else { 1 }
    )
}
