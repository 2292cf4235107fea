//! HP Labs I/O traces (`$$TR_IOREC`, e.g. DiskSim's `ajw.1week.srt`, the
//! 1992 HP-UX workstation trace of Ruemmler and Wilkes).
//!
//! A text header, then binary records. The header (`name = value;` lines
//! and a `disks = { N -> { ... } }` block) describes the machine and each
//! disk; it ends with the `};` closing `disks`, followed by a form feed.
//! We take each disk's `sectorsize` from it (256 bytes in ajw.1week.srt).
//!
//! Each record is 14 big-endian 32-bit words (56 bytes). Their meaning is
//! inferred from ajw.1week.srt (consistent over its 44519 records and with
//! its header; DiskSim's reader is not at hand):
//!
//! | field | meaning | evidence |
//! |---|---|---|
//! | 1 | record size in bytes, 56 | constant |
//! | 2 | record type, 0x00040001 = I/O | constant |
//! | 3, 4 | enqueue time: s, us since trace start | 0 .. 603064 s = one week; us < 10^6; non-decreasing (`.srt` = sorted) |
//! | 5 | queue wait, us (enqueue to start of service) | for the 4217 requests that arrive behind one other (field 14 = 2), field 5 is the time until that one completes (median difference 62 us); ~70 us when the disk is idle |
//! | 6 | response time, us (enqueue to completion) | always >= field 5; typically 10-20 ms |
//! | 7 | size, bytes | 1 KB .. 256 KB, multiples of 1 KB (the file-system fragment) |
//! | 8 | start sector on the whole disk, header `sectorsize` units | field 8 / (nspt * ntpc) = field 11 exactly; each section's records lie inside its header extent |
//! | 9 | dev_t: major << 24 \| minor, minor = disk << 8 \| section | majors 8 (block) and 7 (raw) = header `blockmajor` / `charactermajor`; sections 8, 14, 15 on disk 0 and 7 on disk 1, as listed in the header |
//! | 10 | always 4 | not used |
//! | 11 | cylinder | < `ncyl` |
//! | 12 | HP-UX buf flags; bit 0 = B_READ | swap reads vs. async (B_ASYNC-like bits) file-system writes |
//! | 13 | two 16-bit values, meaning unknown | not used |
//! | 14 | requests queued at the disk on arrival, including this one | 1 for an idle disk; 2 for the second of a back-to-back pair |
//!
//! A record becomes: `time_ns` = field 3 s + field 4 us; device = the disk
//! number from the minor (as the header numbers disks); `lbn`/`blocks` =
//! the byte range field 8 * sectorsize .. + field 7 in 512-byte blocks;
//! `response_ns` = field 6.

use super::{byte_range_to_blocks, TraceRecord};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read};

pub(crate) const MAGIC: &[u8] = b"$$TR_IOREC";
pub(crate) const RECORD_BYTES: usize = 56;
pub(crate) const IO_RECORD_TYPE: u32 = 0x0004_0001;
/// Headers are a few KB; refuse to scan a non-HPL file for megabytes.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Skippable record sizes when a record has an unexpected size word.
const MAX_RECORD_BYTES: u32 = 4096;

pub(crate) enum Step {
    Record,
    Eof,
}

pub(crate) enum HplError {
    Io(std::io::Error),
    /// `fatal`: the stream cannot be resynchronised, stop even when skipping.
    Bad { msg: String, fatal: bool },
}

impl From<std::io::Error> for HplError {
    fn from(e: std::io::Error) -> HplError {
        HplError::Io(e)
    }
}

fn bad(msg: String) -> HplError {
    HplError::Bad { msg, fatal: false }
}

pub(crate) struct HplState {
    /// Disk number -> sector size in bytes, from the header.
    sector_bytes: HashMap<u32, u64>,
    /// Bytes consumed so far (header included), for messages.
    offset: u64,
    rec: [u8; RECORD_BYTES],
}

impl HplState {
    /// Consume the text header up to and including the form feed after it.
    pub(crate) fn read_header(src: &mut impl BufRead) -> Result<HplState, HplError> {
        let mut line = Vec::new();
        let mut offset = 0u64;
        let mut depth: i32 = 0;
        let mut in_disks = false;
        let mut disk: Option<u32> = None;
        let mut sector_bytes = HashMap::new();
        let mut first = true;
        loop {
            line.clear();
            // Bounded read: a header line that never ends must not be read whole.
            let room = (MAX_HEADER_BYTES as u64 + 1).saturating_sub(offset);
            let n = (&mut *src).take(room).read_until(b'\n', &mut line)?;
            if n == 0 && room == 0 {
                return Err(HplError::Bad { msg: format!("no end of header within {MAX_HEADER_BYTES} bytes"), fatal: true });
            }
            if n == 0 {
                return Err(HplError::Bad { msg: "end of file inside the header (no closing `};` of `disks`)".into(), fatal: true });
            }
            offset += n as u64;
            if first {
                if !line.starts_with(MAGIC) {
                    return Err(HplError::Bad { msg: "missing `$$TR_IOREC` magic on the first line".into(), fatal: true });
                }
                first = false;
                continue;
            }
            if offset as usize > MAX_HEADER_BYTES {
                return Err(HplError::Bad { msg: format!("no end of header within {MAX_HEADER_BYTES} bytes"), fatal: true });
            }
            let text = String::from_utf8_lossy(&line);
            let t = text.trim();
            let key = t.split(|c: char| c == '=' || c.is_whitespace()).next().unwrap_or("");
            if depth == 0 && key == "disks" {
                in_disks = true;
            }
            if in_disks && depth == 1 {
                // `N -> {` opens disk N.
                if let Some((num, _)) = t.split_once("->") {
                    disk = num.trim().parse().ok();
                }
            }
            if in_disks && depth == 2 && key == "sectorsize" {
                if let (Some(d), Some(v)) = (disk, t.split_once('=').and_then(|(_, v)| v.trim().trim_end_matches([',', ';']).trim().parse::<u64>().ok())) {
                    if v == 0 {
                        return Err(HplError::Bad { msg: format!("disk {d}: sectorsize = 0"), fatal: true });
                    }
                    sector_bytes.insert(d, v);
                }
            }
            let mut quoted = false;
            for c in t.chars() {
                match c {
                    '"' => quoted = !quoted,
                    '{' if !quoted => depth += 1,
                    '}' if !quoted => depth -= 1,
                    _ => {}
                }
            }
            if in_disks && depth == 0 {
                break;
            }
        }
        // The header is closed by a form feed before the first record.
        if src.fill_buf()?.first() == Some(&0x0c) {
            src.consume(1);
            offset += 1;
        }
        if sector_bytes.is_empty() {
            return Err(HplError::Bad { msg: "no disk with a `sectorsize` in the `disks` block".into(), fatal: true });
        }
        Ok(HplState { sector_bytes, offset, rec: [0; RECORD_BYTES] })
    }

    /// Read one record into `out`.
    pub(crate) fn next_record(&mut self, src: &mut impl BufRead, out: &mut VecDeque<TraceRecord>) -> Result<Step, HplError> {
        let at = self.offset;
        let mut got = 0;
        while got < RECORD_BYTES {
            let n = src.read(&mut self.rec[got..])?;
            if n == 0 {
                break;
            }
            got += n;
        }
        self.offset += got as u64;
        if got == 0 {
            return Ok(Step::Eof);
        }
        if got < RECORD_BYTES {
            return Err(HplError::Bad { msg: format!("record at byte {at}: truncated, {got} of {RECORD_BYTES} bytes"), fatal: true });
        }
        let w = |i: usize| u32::from_be_bytes(self.rec[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        let ctx = |n: usize, name: &str, v: String, exp: &str| format!("record at byte {at}: field {n} ({name}) = {v}: expected {exp}");
        let size = w(0);
        if size as usize != RECORD_BYTES {
            // Skip a record of another plausible size; anything else means
            // we are no longer on a record boundary.
            let msg = ctx(1, "record size", size.to_string(), "56");
            if size as usize > RECORD_BYTES && size <= MAX_RECORD_BYTES && size % 4 == 0 {
                let extra = size as u64 - RECORD_BYTES as u64;
                let skipped = std::io::copy(&mut src.by_ref().take(extra), &mut std::io::sink())?;
                self.offset += skipped;
                return Err(HplError::Bad { msg, fatal: skipped < extra });
            }
            return Err(HplError::Bad { msg, fatal: true });
        }
        if w(1) != IO_RECORD_TYPE {
            return Err(bad(ctx(2, "record type", format!("{:#010x}", w(1)), "0x00040001 (I/O record)")));
        }
        let (sec, usec) = (w(2) as u64, w(3) as u64);
        if usec >= 1_000_000 {
            return Err(bad(ctx(4, "microseconds", usec.to_string(), "< 1000000")));
        }
        let (wait_us, resp_us) = (w(4), w(5));
        if wait_us > resp_us {
            return Err(bad(ctx(5, "queue wait us", wait_us.to_string(), &format!("at most the response time (field 6 = {resp_us})"))));
        }
        let bytes = w(6) as u64;
        let sector = w(7) as u64;
        let dev = w(8);
        let disk = (dev & 0x00ff_ffff) >> 8;
        let Some(&ss) = self.sector_bytes.get(&disk) else {
            return Err(bad(ctx(9, "device", format!("{dev:#010x}"), &format!("a disk the header describes (disk {disk} is not)"))));
        };
        let (lbn, blocks) = byte_range_to_blocks(sector * ss, bytes)
            .ok_or_else(|| bad(ctx(7, "bytes", bytes.to_string(), "a positive byte count")))?;
        out.push_back(TraceRecord {
            time_ns: sec * 1_000_000_000 + usec * 1000,
            device: disk,
            lbn,
            blocks,
            is_write: w(11) & 1 == 0,
            response_ns: Some(resp_us as u64 * 1000),
            think_ns: None,
        });
        Ok(Step::Record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    #[test]
    fn a_header_line_that_never_ends_is_refused_after_the_cap() {
        // An endless line: reading it whole would never return.
        let endless = MAGIC.chain(std::io::repeat(b'x'));
        let mut src = BufReader::new(endless);
        match HplState::read_header(&mut src) {
            Err(HplError::Bad { msg, fatal: true }) => assert!(msg.contains("no end of header"), "{msg}"),
            _ => panic!("expected the header cap"),
        }
    }
}
