//! DiskSim's validate trace: `R|W tag blkno bcount access_us think_us`.
//!
//! Measured on a real drive with one request outstanding: `access_us` is the
//! drive's access time (issue to completion) and `think_us` the delay from
//! this completion to the next issue. The tag (Hit/Miss/Doub/Trip, the
//! drive's buffer action) is statistics only and not kept. Replay is
//! closed-loop on `think_ns`; `time_ns` is the issue time on the measured
//! drive, the running sum of the previous requests' access + think times.

use super::{field_err, parse_decimal, parse_u32, parse_u64, split_fields, LineParser, LineResult, TraceRecord};
use std::collections::VecDeque;
use std::io::Write;

#[derive(Default)]
pub(crate) struct Parser {
    next_issue_ns: u64,
}

impl LineParser for Parser {
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult {
        let (f, n) = split_fields::<6>(line.split_ascii_whitespace());
        if n != 6 {
            return Err(format!("found {n} fields, expected 6: R|W tag blkno bcount access_us think_us"));
        }
        let is_write = match f[0] {
            "R" | "r" => false,
            "W" | "w" => true,
            _ => return Err(field_err(1, "op", f[0], "R or W")),
        };
        if !f[1].bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(field_err(2, "tag", f[1], "a buffer-action word such as Hit or Miss"));
        }
        let lbn = parse_u64(f[2], 3, "blkno", "a block number")?;
        let blocks = parse_u32(f[3], 4, "bcount", "a block count")?;
        if blocks == 0 {
            return Err(field_err(4, "bcount", f[3], "a positive block count"));
        }
        let access_ns = parse_decimal(f[4], 3).ok_or_else(|| field_err(5, "access_us", f[4], "a non-negative time in us"))?;
        let think_ns = parse_decimal(f[5], 3).ok_or_else(|| field_err(6, "think_us", f[5], "a non-negative time in us"))?;
        let time_ns = self.next_issue_ns;
        self.next_issue_ns = time_ns.saturating_add(access_ns).saturating_add(think_ns);
        out.push_back(TraceRecord { time_ns, device: 0, lbn, blocks, is_write, response_ns: Some(access_ns), think_ns: Some(think_ns) });
        Ok(())
    }
}

pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = split_fields::<6>(line.split_ascii_whitespace());
    n == 6
        && matches!(f[0], "R" | "W")
        && f[1].bytes().all(|b| b.is_ascii_alphabetic())
        && f[2].parse::<u64>().is_ok()
        && f[3].parse::<u32>().is_ok()
        && parse_decimal(f[4], 3).is_some()
        && parse_decimal(f[5], 3).is_some()
}

/// `None` when the record lacks the measured times a validate line needs.
/// The tag is written as `Miss` (unknown; DiskSim only counts tags).
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> Option<std::io::Result<()>> {
    let (access, think) = (r.response_ns?, r.think_ns?);
    Some(writeln!(
        w,
        "{} Miss {:10} {:3} {:12}.{:03} {:12}.{:03}",
        if r.is_write { 'W' } else { 'R' },
        r.lbn,
        r.blocks,
        access / 1000,
        access % 1000,
        think / 1000,
        think % 1000
    ))
}
