//! SPC / UMass trace repository format: `ASU,LBA,Size,Opcode,Timestamp[,...]`.
//!
//! ASU (application storage unit) becomes the device; LBA is in 512-byte
//! blocks; Size in bytes (rounded up to whole blocks); Opcode `r` or `w` in
//! any case; Timestamp in seconds since the trace start (decimal). Extra
//! trailing fields (some traces carry more) are ignored.

use super::{byte_range_to_blocks, csv_fields, field_err, parse_decimal, parse_u32, parse_u64, CsvHeader, LineParser, LineResult, TraceRecord, BLOCK_BYTES};
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
        if n < 5 {
            return Err(format!("found {n} comma-separated fields, expected at least 5: ASU,LBA,Size,Opcode,Timestamp"));
        }
        let device = parse_u32(f[0], 1, "ASU", "an application storage unit number")?;
        let lbn = parse_u64(f[1], 2, "LBA", "a 512-byte block number")?;
        let size = parse_u64(f[2], 3, "Size", "a byte count")?;
        let (_, blocks) = byte_range_to_blocks(0, size).ok_or_else(|| field_err(3, "Size", f[2], "a positive byte count below 2 TiB"))?;
        let is_write = match f[3] {
            "w" | "W" => true,
            "r" | "R" => false,
            _ => return Err(field_err(4, "Opcode", f[3], "r or w")),
        };
        let time_ns = parse_decimal(f[4], 9).ok_or_else(|| field_err(5, "Timestamp", f[4], "a non-negative time in seconds"))?;
        out.push_back(TraceRecord { time_ns, device, lbn, blocks, is_write, response_ns: None, think_ns: None });
        Ok(())
    }
}

pub(crate) fn sniff(line: &str) -> bool {
    let (f, n) = csv_fields::<5>(line);
    n >= 5
        && f[0].parse::<u32>().is_ok()
        && f[1].parse::<u64>().is_ok()
        && f[2].parse::<u64>().is_ok()
        && matches!(f[3], "r" | "w" | "R" | "W")
        && parse_decimal(f[4], 9).is_some()
}

/// Timestamp in seconds with 9 decimals (ns, exact); opcode `r`/`w`.
pub(crate) fn write(r: &TraceRecord, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        w,
        "{},{},{},{},{}.{:09}",
        r.device,
        r.lbn,
        r.blocks as u64 * BLOCK_BYTES,
        if r.is_write { 'w' } else { 'r' },
        r.time_ns / 1_000_000_000,
        r.time_ns % 1_000_000_000
    )
}
