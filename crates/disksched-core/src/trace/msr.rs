//! SNIA MSR Cambridge block traces:
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! Timestamp is a Windows filetime (100 ns ticks since 1601); times are made
//! relative to the first record, so a trace starts at 0. Offset and Size are
//! bytes; Type is `Read` or `Write` (any case); ResponseTime is in 100 ns
//! ticks. Device = DiskNumber; Hostname is not kept.

use super::{byte_range_to_blocks, csv_fields, field_err, parse_u32, parse_u64, CsvHeader, LineParser, LineResult, TraceRecord, BLOCK_BYTES};
use std::collections::VecDeque;
use std::io::Write;

const TICK_NS: u64 = 100;

#[derive(Default)]
pub(crate) struct Parser {
    header: CsvHeader,
    first_ticks: Option<u64>,
}

impl LineParser for Parser {
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult {
        if self.header.is_header(line) {
            return Ok(());
        }
        let (f, n) = csv_fields::<7>(line);
        if n != 7 {
            return Err(format!("found {n} comma-separated fields, expected 7: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"));
        }
        let ticks = parse_u64(f[0], 1, "Timestamp", "a Windows filetime in 100 ns ticks")?;
        let device = parse_u32(f[2], 3, "DiskNumber", "a disk number")?;
        let is_write = if f[3].eq_ignore_ascii_case("write") {
            true
        } else if f[3].eq_ignore_ascii_case("read") {
            false
        } else {
            return Err(field_err(4, "Type", f[3], "Read or Write"));
        };
        let offset = parse_u64(f[4], 5, "Offset", "a byte offset")?;
        let size = parse_u64(f[5], 6, "Size", "a byte count")?;
        let (lbn, blocks) = byte_range_to_blocks(offset, size).ok_or_else(|| field_err(6, "Size", f[5], "a positive byte count below 2 TiB"))?;
        let response = parse_u64(f[6], 7, "ResponseTime", "a time in 100 ns ticks")?;
        let base = *self.first_ticks.get_or_insert(ticks);
        let rel = ticks.checked_sub(base).ok_or_else(|| {
            field_err(1, "Timestamp", f[0], &format!("a time not before the first record's ({base})"))
        })?;
        out.push_back(TraceRecord {
            time_ns: rel.saturating_mul(TICK_NS),
            device,
            lbn,
            blocks,
            is_write,
            response_ns: Some(response.saturating_mul(TICK_NS)),
            think_ns: None,
        });
        Ok(())
    }
}

pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = csv_fields::<7>(line);
    n == 7
        && f[0].parse::<u64>().is_ok()
        && (f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write"))
        && f[4].parse::<u64>().is_ok()
        && f[5].parse::<u64>().is_ok()
}

/// Timestamp = time in 100 ns ticks from 0 (the reader makes times relative,
/// so this round-trips); Hostname `disksched`; ResponseTime 0 when unknown.
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        w,
        "{},disksched,{},{},{},{},{}",
        r.time_ns / TICK_NS,
        r.device,
        if r.is_write { "Write" } else { "Read" },
        r.lbn * BLOCK_BYTES,
        r.blocks as u64 * BLOCK_BYTES,
        r.response_ns.unwrap_or(0) / TICK_NS
    )
}
