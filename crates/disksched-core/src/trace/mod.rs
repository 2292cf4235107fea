//! Trace readers (one file per format) and a record writer for conversion.
//!
//! `open` streams a trace with constant memory: one reused line buffer, one
//! record at a time (blkparse keeps a bounded window of issued requests to
//! pair them with their completions). gzip, zstd and xz files are
//! decompressed transparently, chosen by their magic bytes, not their names.
//! Without an explicit format the first non-comment lines decide.
//!
//! Conventions shared by every format:
//! - blank lines and lines starting with `#` are skipped;
//! - addresses are 512-byte blocks: a byte range that is not block aligned
//!   becomes the smallest block range covering it (start rounded down, end
//!   rounded up), so no byte the trace touched is lost;
//! - a malformed line is `Error::Parse` naming the 1-based field, its value and
//!   what was expected; with `skip_bad_lines` it is counted and skipped instead;
//! - CSV formats accept one header line (a first line with no digits);
//! - a line longer than `MAX_LINE_BYTES` is a bad line (memory stays bounded
//!   even when a binary file is read as text).

pub mod alibaba;
pub mod blkparse;
pub mod convert;
pub mod disksim_ascii;
pub mod disksim_validate;
pub mod fio;
pub mod hpl;
pub mod info;
pub mod msr;
pub mod spc;
pub mod tencent;
mod zstd_frames;

use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

/// Bytes per trace block: every `lbn` and `blocks` is in these units.
pub const BLOCK_BYTES: u64 = 512;

/// One I/O as a trace describes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time in ns: since the trace start, or since the Unix epoch when
    /// the format records absolute times (alibaba, tencent).
    pub time_ns: u64,
    /// Device (disk) number, as the trace gives it.
    pub device: u32,
    /// First 512-byte block.
    pub lbn: u64,
    /// Length in 512-byte blocks.
    pub blocks: u32,
    /// A write.
    pub is_write: bool,
    /// Response time measured when the trace was taken, if the format has it.
    pub response_ns: Option<u64>,
    /// disksim-validate only: delay from this request's completion to the
    /// next one's issue (closed-loop replay).
    pub think_ns: Option<u64>,
}

/// The trace formats, named as on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// DiskSim's ascii trace.
    DisksimAscii,
    /// DiskSim's validate trace (measured access and think times).
    DisksimValidate,
    /// HP Labs I/O traces (`$$TR_IOREC`).
    Hpl,
    /// SNIA MSR Cambridge block traces.
    Msr,
    /// SPC / UMass trace repository format.
    Spc,
    /// blkparse's default text output (Linux blktrace).
    Blkparse,
    /// fio iolog (versions 2 and 3).
    Fio,
    /// Alibaba cloud block traces.
    Alibaba,
    /// Tencent CBS block traces.
    Tencent,
}

impl TraceFormat {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [TraceFormat; 9] = [
        TraceFormat::DisksimAscii,
        TraceFormat::DisksimValidate,
        TraceFormat::Hpl,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Fio,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
    ];

    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::DisksimAscii => "disksim-ascii",
            TraceFormat::DisksimValidate => "disksim-validate",
            TraceFormat::Hpl => "hpl",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Fio => "fio",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
        }
    }

    /// Formats `write_record` can produce.
    pub fn writable(self) -> bool {
        !matches!(self, TraceFormat::Hpl | TraceFormat::Blkparse)
    }
}

fn all_names() -> String {
    TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<TraceFormat> {
        TraceFormat::ALL.iter().copied().find(|f| f.name() == s).ok_or_else(|| Error::Config {
            what: "trace format".into(),
            msg: format!("unknown format {s:?}; valid formats: {}", all_names()),
        })
    }
}

// ---------------------------------------------------------------------------
// Shared parsing helpers (messages only; the reader adds path and line).

/// Per-line parse outcome: `Err` is the message for `Error::Parse`.
pub(crate) type LineResult = std::result::Result<(), String>;

/// A text format: one line in, zero or more records out.
pub(crate) trait LineParser: Send {
    /// Parse one trimmed, non-blank, non-comment line.
    fn parse(&mut self, line: &str, out: &mut VecDeque<TraceRecord>) -> LineResult;
    /// End of input: release anything held back (blkparse's unpaired issues).
    fn finish(&mut self, _out: &mut VecDeque<TraceRecord>) {}
}

/// `field N (Name) = "value": expected ...`, N 1-based.
pub(crate) fn field_err(n: usize, name: &str, value: &str, expected: &str) -> String {
    format!("field {n} ({name}) = {value:?}: expected {expected}")
}

pub(crate) fn parse_u64(s: &str, n: usize, name: &str, expected: &str) -> std::result::Result<u64, String> {
    s.parse::<u64>().map_err(|_| field_err(n, name, s, expected))
}

pub(crate) fn parse_u32(s: &str, n: usize, name: &str, expected: &str) -> std::result::Result<u32, String> {
    s.parse::<u32>().map_err(|_| field_err(n, name, s, expected))
}

/// A non-negative decimal such as `13.191135` as an integer count of
/// 10^-`scale` units, exactly (no float rounding); digits past `scale` are
/// truncated. Exponent notation falls back to f64.
pub(crate) fn parse_decimal(s: &str, scale: u32) -> Option<u64> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if !(digits(int) && digits(frac)) || (int.is_empty() && frac.is_empty()) {
        if s.contains(['e', 'E']) {
            let v: f64 = s.parse().ok()?;
            let scaled = v * 10f64.powi(scale as i32);
            return (v.is_finite() && v >= 0.0 && scaled < u64::MAX as f64).then(|| scaled.round() as u64);
        }
        return None;
    }
    let mut v: u64 = 0;
    for b in int.bytes() {
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    let mut used = 0;
    for b in frac.bytes().take(scale as usize) {
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
        used += 1;
    }
    v.checked_mul(10u64.checked_pow(scale - used)?)
}

/// Byte range -> (first block, block count): start rounded down, end rounded
/// up, so the blocks cover every byte. `None` for an empty or oversized range.
pub(crate) fn byte_range_to_blocks(offset_bytes: u64, len_bytes: u64) -> Option<(u64, u32)> {
    if len_bytes == 0 {
        return None;
    }
    let end = offset_bytes.checked_add(len_bytes)?;
    let first = offset_bytes / BLOCK_BYTES;
    let last = end.div_ceil(BLOCK_BYTES);
    Some((first, u32::try_from(last - first).ok()?))
}

/// Fixed-size split without allocating: the first `N` fields and the total count.
pub(crate) fn split_fields<'a, const N: usize>(it: impl Iterator<Item = &'a str>) -> ([&'a str; N], usize) {
    let mut f = [""; N];
    let mut n = 0;
    for t in it {
        if n < N {
            f[n] = t;
        }
        n += 1;
    }
    (f, n)
}

/// Comma-separated fields, each trimmed.
pub(crate) fn csv_fields<const N: usize>(line: &str) -> ([&str; N], usize) {
    split_fields(line.split(',').map(str::trim))
}

/// Where a CSV parser is: before its first line, which is a header when it
/// has no digits at all.
#[derive(Default)]
pub(crate) struct CsvHeader {
    past_first: bool,
}

impl CsvHeader {
    /// Whether `line`, the next line, is the header.
    pub(crate) fn is_header(&mut self, line: &str) -> bool {
        let header = !self.past_first && !line.bytes().any(|b| b.is_ascii_digit());
        self.past_first = true;
        header
    }
}

// ---------------------------------------------------------------------------
// The reader.

enum Kind {
    Lines(Box<dyn LineParser>),
    Hpl(hpl::HplState),
}

/// Streaming reader over one trace file; yields records in file order
/// (blkparse: in issue order).
pub struct TraceReader {
    path: String,
    format: TraceFormat,
    src: Box<dyn BufRead + Send>,
    kind: Kind,
    /// Lines read so far (records, for the binary HPL format).
    line_no: usize,
    buf: Vec<u8>,
    out: VecDeque<TraceRecord>,
    skip_bad_lines: bool,
    bad_lines: u64,
    finished: bool,
}

impl TraceReader {
    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Malformed lines skipped so far (only with `skip_bad_lines`).
    pub fn bad_lines_skipped(&self) -> u64 {
        self.bad_lines
    }

    /// Lines (HPL: records) read so far, including skipped ones.
    pub fn lines_read(&self) -> usize {
        self.line_no
    }

    /// The file being read.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn io_err(&mut self, e: std::io::Error) -> Error {
        self.finished = true;
        Error::File { path: self.path.clone(), msg: format!("read failed after line {}: {e}", self.line_no) }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Result<TraceRecord>> {
        loop {
            if let Some(r) = self.out.pop_front() {
                return Some(Ok(r));
            }
            if self.finished {
                return None;
            }
            let outcome = match &mut self.kind {
                Kind::Lines(p) => {
                    self.buf.clear();
                    match read_line_bounded(&mut self.src, &mut self.buf) {
                        Err(e) => return Some(Err(self.io_err(e))),
                        Ok(None) => {
                            p.finish(&mut self.out);
                            self.finished = true;
                            continue;
                        }
                        Ok(Some(_)) => {}
                    }
                    self.line_no += 1;
                    if self.buf.len() > MAX_LINE_BYTES {
                        Err(format!("line longer than {MAX_LINE_BYTES} bytes: not a text trace of this format"))
                    } else {
                        match std::str::from_utf8(&self.buf) {
                            Err(e) => Err(format!("not UTF-8 text (invalid byte at column {})", e.valid_up_to() + 1)),
                            Ok(s) => {
                                let line = s.trim();
                                if line.is_empty() || line.starts_with('#') {
                                    continue;
                                }
                                p.parse(line, &mut self.out)
                            }
                        }
                    }
                }
                Kind::Hpl(h) => match h.next_record(&mut self.src, &mut self.out) {
                    Ok(hpl::Step::Eof) => {
                        self.finished = true;
                        continue;
                    }
                    Ok(hpl::Step::Record) => {
                        self.line_no += 1;
                        Ok(())
                    }
                    Err(hpl::HplError::Io(e)) => return Some(Err(self.io_err(e))),
                    Err(hpl::HplError::Bad { msg, fatal }) => {
                        self.line_no += 1;
                        if fatal {
                            self.finished = true;
                            return Some(Err(Error::Parse { path: self.path.clone(), line: self.line_no, msg }));
                        }
                        Err(msg)
                    }
                },
            };
            if let Err(msg) = outcome {
                if self.skip_bad_lines {
                    self.bad_lines += 1;
                    continue;
                }
                return Some(Err(Error::Parse { path: self.path.clone(), line: self.line_no, msg }));
            }
        }
    }
}

/// Longest text line kept; longer lines are bad (and skipped without being held).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Read one line into `buf` (cleared by the caller), keeping at most
/// `MAX_LINE_BYTES` + 1 bytes of it; the rest of an overlong line is consumed
/// and dropped. `None` at end of input.
fn read_line_bounded(src: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    let n = src.take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
        src.skip_until(b'\n')?;
    }
    Ok(Some(n))
}

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
const READ_BUF_BYTES: usize = 256 * 1024;
/// Non-comment lines looked at to detect the format.
const SNIFF_LINES: usize = 20;
const SNIFF_MAX_BYTES: usize = 1 << 20;

/// Open a trace file for streaming. `format: None` detects it from the
/// content; an explicit format always wins.
pub fn open(path: impl AsRef<Path>, format: Option<TraceFormat>, skip_bad_lines: bool) -> Result<TraceReader> {
    let path_ref = path.as_ref();
    let path_s = path_ref.display().to_string();
    let file_err = |msg: String| Error::File { path: path_s.clone(), msg };
    let file = File::open(path_ref).map_err(|e| file_err(e.to_string()))?;
    let mut raw = BufReader::with_capacity(READ_BUF_BYTES, file);
    let head = raw.fill_buf().map_err(|e| file_err(e.to_string()))?;
    let mut src: Box<dyn BufRead + Send> = if head.starts_with(GZIP_MAGIC) {
        Box::new(BufReader::with_capacity(READ_BUF_BYTES, flate2::bufread::MultiGzDecoder::new(raw)))
    } else if head.starts_with(ZSTD_MAGIC) {
        Box::new(BufReader::with_capacity(READ_BUF_BYTES, zstd_frames::ZstdFrames::new(raw)))
    } else if head.starts_with(XZ_MAGIC) {
        Box::new(BufReader::with_capacity(READ_BUF_BYTES, xz2::bufread::XzDecoder::new_multi_decoder(raw)))
    } else {
        Box::new(raw)
    };

    let format = match format {
        Some(f) => f,
        None => {
            let (f, prefix) = detect(&mut src).map_err(|e| match e {
                DetectError::Io(e) => file_err(e.to_string()),
                DetectError::Unknown(msg) => file_err(msg),
            })?;
            src = Box::new(Cursor::new(prefix).chain(src));
            f
        }
    };

    let kind = match format {
        TraceFormat::Hpl => Kind::Hpl(hpl::HplState::read_header(&mut src).map_err(|e| match e {
            hpl::HplError::Io(e) => file_err(e.to_string()),
            hpl::HplError::Bad { msg, .. } => file_err(format!("HPL header: {msg}")),
        })?),
        TraceFormat::DisksimAscii => Kind::Lines(Box::new(disksim_ascii::Parser)),
        TraceFormat::DisksimValidate => Kind::Lines(Box::new(disksim_validate::Parser::default())),
        TraceFormat::Msr => Kind::Lines(Box::new(msr::Parser::default())),
        TraceFormat::Spc => Kind::Lines(Box::new(spc::Parser::default())),
        TraceFormat::Blkparse => Kind::Lines(Box::new(blkparse::Parser::default())),
        TraceFormat::Fio => Kind::Lines(Box::new(fio::Parser::default())),
        TraceFormat::Alibaba => Kind::Lines(Box::new(alibaba::Parser::default())),
        TraceFormat::Tencent => Kind::Lines(Box::new(tencent::Parser::default())),
    };
    Ok(TraceReader {
        path: path_s,
        format,
        src,
        kind,
        line_no: 0,
        buf: Vec::with_capacity(256),
        out: VecDeque::new(),
        skip_bad_lines,
        bad_lines: 0,
        finished: false,
    })
}

enum DetectError {
    Io(std::io::Error),
    Unknown(String),
}

/// Read up to `SNIFF_LINES` non-comment lines (returned as `prefix` so the
/// reader can replay them) and pick the format most of them fit.
fn detect(src: &mut Box<dyn BufRead + Send>) -> std::result::Result<(TraceFormat, Vec<u8>), DetectError> {
    let head = src.fill_buf().map_err(DetectError::Io)?;
    if head.starts_with(hpl::MAGIC) {
        return Ok((TraceFormat::Hpl, Vec::new()));
    }
    let mut prefix = Vec::new();
    let mut sampled = 0;
    while sampled < SNIFF_LINES && prefix.len() < SNIFF_MAX_BYTES {
        let at = prefix.len();
        if src.by_ref().take(MAX_LINE_BYTES as u64).read_until(b'\n', &mut prefix).map_err(DetectError::Io)? == 0 {
            break;
        }
        let t = String::from_utf8_lossy(&prefix[at..]);
        let t = t.trim();
        if !t.is_empty() && !t.starts_with('#') {
            sampled += 1;
        }
    }
    let text = String::from_utf8_lossy(&prefix);
    let mut lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    if lines.is_empty() {
        return Err(DetectError::Unknown(format!("no trace lines to detect the format from; name the format (one of {})", all_names())));
    }
    if lines[0].starts_with("fio version") {
        return Ok((TraceFormat::Fio, prefix));
    }
    // A CSV header names columns and has no digits; judge the data lines.
    if lines.len() > 1 && lines[0].contains(',') && !lines[0].bytes().any(|b| b.is_ascii_digit()) {
        lines.remove(0);
    }
    // Partial last line (sample cut at the byte limit) is not evidence.
    if prefix.len() >= SNIFF_MAX_BYTES && lines.len() > 1 {
        lines.pop();
    }
    type Sniff = fn(&str) -> bool;
    let sniffers: [(TraceFormat, Sniff); 8] = [
        (TraceFormat::Blkparse, blkparse::sniff),
        (TraceFormat::DisksimValidate, disksim_validate::sniff),
        (TraceFormat::DisksimAscii, disksim_ascii::sniff),
        (TraceFormat::Msr, msr::sniff),
        (TraceFormat::Spc, spc::sniff),
        (TraceFormat::Alibaba, alibaba::sniff),
        (TraceFormat::Tencent, tencent::sniff),
        (TraceFormat::Fio, fio::sniff),
    ];
    // The format most lines fit wins (a bad line or blkparse's summary lines
    // must not defeat detection); it needs a majority; ties go to the
    // earlier, more specific format.
    let mut best: Option<(TraceFormat, usize)> = None;
    for (f, sniff) in sniffers {
        let fit = lines.iter().filter(|l| sniff(l)).count();
        if fit * 2 > lines.len() && best.is_none_or(|(_, b)| fit > b) {
            best = Some((f, fit));
        }
    }
    if let Some((f, _)) = best {
        return Ok((f, prefix));
    }
    let first: String = lines[0].chars().take(80).collect();
    Err(DetectError::Unknown(format!(
        "cannot detect the trace format from its first {} lines (first: {first:?}); name the format (one of {})",
        lines.len(),
        all_names()
    )))
}

// ---------------------------------------------------------------------------
// Writing (for `trace convert`).

fn unwritable(format: TraceFormat) -> Error {
    Error::Config {
        what: "trace output format".into(),
        msg: format!(
            "{format} cannot be written; writable: {}",
            TraceFormat::ALL.iter().filter(|f| f.writable()).map(|f| f.name()).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn write_err(e: std::io::Error) -> Error {
    Error::File { path: "<output>".into(), msg: format!("write failed: {e}") }
}

/// Write one record as a line of `format`. Supported: disksim-ascii,
/// disksim-validate (needs `response_ns` and `think_ns`), msr, spc, fio
/// (a version 3 I/O line; `TraceWriter` adds the header and file lines),
/// alibaba, tencent. Not hpl (binary, with a header describing the disk) nor
/// blkparse (a tool's output, one line per block-layer event). Times are
/// written at each format's resolution, so converting can truncate: tencent
/// keeps whole s, fio and alibaba us, msr 100 ns, disksim-ascii and spc ns.
pub fn write_record(format: TraceFormat, r: &TraceRecord, w: &mut impl Write) -> Result<()> {
    let res = match format {
        TraceFormat::DisksimAscii => disksim_ascii::write(r, w),
        TraceFormat::DisksimValidate => {
            return match disksim_validate::write(r, w) {
                Some(res) => res.map_err(write_err),
                None => Err(Error::Config {
                    what: "disksim-validate output".into(),
                    msg: "record has no measured response time or think time; validate lines need both".into(),
                }),
            }
        }
        TraceFormat::Msr => msr::write(r, w),
        TraceFormat::Spc => spc::write(r, w),
        TraceFormat::Fio => fio::write(r, w),
        TraceFormat::Alibaba => alibaba::write(r, w),
        TraceFormat::Tencent => tencent::write(r, w),
        TraceFormat::Hpl | TraceFormat::Blkparse => return Err(unwritable(format)),
    };
    res.map_err(write_err)
}

/// A stateful writer: `write_record` plus what a whole file needs (the fio
/// header and an `add`/`open` line before a device's first I/O).
pub struct TraceWriter<W: Write> {
    format: TraceFormat,
    w: W,
    /// Records written so far, to name the one a format cannot hold.
    written: u64,
    first_time_ns: Option<u64>,
    fio_devices: std::collections::BTreeSet<u32>,
}

impl<W: Write> TraceWriter<W> {
    /// A writer of `format` to `w`; an error if the format cannot be written.
    pub fn new(format: TraceFormat, w: W) -> Result<TraceWriter<W>> {
        if !format.writable() {
            return Err(unwritable(format));
        }
        Ok(TraceWriter { format, w, written: 0, first_time_ns: None, fio_devices: Default::default() })
    }

    /// Refuses a record the format would store wrongly: a byte offset past
    /// 2^64 (msr, fio, alibaba count bytes), or for msr a time before the first
    /// record's (its reader counts from the first record and rejects those).
    fn check(&mut self, r: &TraceRecord) -> Result<()> {
        let first = *self.first_time_ns.get_or_insert(r.time_ns);
        let fail = |msg: String| Err(Error::Config { what: format!("{} output, record {}", self.format, self.written + 1), msg });
        let bytes = matches!(self.format, TraceFormat::Msr | TraceFormat::Fio | TraceFormat::Alibaba);
        if bytes && r.lbn.checked_add(r.blocks as u64).and_then(|e| e.checked_mul(BLOCK_BYTES)).is_none() {
            return fail(format!("block {} + {} blocks is past the largest byte offset {} can hold (2^64 bytes)", r.lbn, r.blocks, self.format));
        }
        if self.format == TraceFormat::Msr && r.time_ns < first {
            return fail(format!("time {} ns is before the first record's {} ns; msr times count from the first record", r.time_ns, first));
        }
        Ok(())
    }

    /// Write one record (and any header or device line the format needs first); an error names a record the format cannot hold.
    pub fn write(&mut self, r: &TraceRecord) -> Result<()> {
        self.check(r)?;
        if self.format == TraceFormat::Fio {
            if self.written == 0 {
                writeln!(self.w, "fio version 3 iolog").map_err(write_err)?;
            }
            if self.fio_devices.insert(r.device) {
                fio::write_file_lines(r, &mut self.w).map_err(write_err)?;
            }
        }
        self.written += 1;
        write_record(self.format, r, &mut self.w)
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.w
    }
}

/// Parse a whole file and time it: (lines read, seconds); for HPL, records
/// instead of lines. A speed measure for tools and benchmarks (criterion-free);
/// stops at the first bad line with its error.
pub fn parse_rate(path: impl AsRef<Path>, format: Option<TraceFormat>) -> Result<(u64, f64)> {
    let t0 = Instant::now();
    let mut r = open(path, format, false)?;
    let mut records = 0u64;
    for rec in r.by_ref() {
        rec?;
        records += 1;
    }
    std::hint::black_box(records);
    Ok((r.lines_read() as u64, t0.elapsed().as_secs_f64()))
}

/// Parsing speed of a writable format, lines per second: writes `lines`
/// random records to a temporary file with `TraceWriter`, then parses it.
/// For `disksched bench`.
pub fn bench_parse(format: TraceFormat, lines: u64) -> Result<f64> {
    use rand::{Rng, SeedableRng};
    let path = std::env::temp_dir().join(format!("disksched-bench-{}-{}.trace", std::process::id(), format.name()));
    let file = File::create(&path).map_err(|e| Error::File { path: path.display().to_string(), msg: e.to_string() })?;
    let mut w = TraceWriter::new(format, std::io::BufWriter::new(file))?;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    let mut t = 0u64;
    for _ in 0..lines {
        t += rng.gen_range(0..20_000_000);
        w.write(&TraceRecord {
            time_ns: t,
            device: 0,
            lbn: rng.gen_range(0..17_000_000),
            blocks: 8 * rng.gen_range(1..16),
            is_write: rng.gen_bool(0.33),
            response_ns: Some(rng.gen_range(100_000..20_000_000)),
            think_ns: Some(rng.gen_range(0..50_000_000)),
        })?;
    }
    std::io::Write::flush(&mut w.into_inner()).map_err(|e| Error::File { path: path.display().to_string(), msg: e.to_string() })?;
    let result = parse_rate(&path, Some(format));
    let _ = std::fs::remove_file(&path);
    let (n, secs) = result?;
    Ok(n as f64 / secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_is_exact() {
        assert_eq!(parse_decimal("13.191135", 6), Some(13_191_135));
        assert_eq!(parse_decimal("13.1911355", 6), Some(13_191_135));
        assert_eq!(parse_decimal("2", 3), Some(2000));
        assert_eq!(parse_decimal(".5", 3), Some(500));
        assert_eq!(parse_decimal("1e-3", 9), Some(1_000_000));
        assert_eq!(parse_decimal("-1", 3), None);
        assert_eq!(parse_decimal("", 3), None);
        assert_eq!(parse_decimal("1.2.3", 3), None);
    }

    #[test]
    fn byte_ranges_cover_every_byte() {
        assert_eq!(byte_range_to_blocks(0, 512), Some((0, 1)));
        assert_eq!(byte_range_to_blocks(511, 2), Some((0, 2)));
        assert_eq!(byte_range_to_blocks(1024, 1), Some((2, 1)));
        assert_eq!(byte_range_to_blocks(1000, 0), None);
    }

    #[test]
    fn names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
        }
        let e = "nope".parse::<TraceFormat>().unwrap_err().to_string();
        assert!(e.contains("disksim-ascii") && e.contains("tencent"), "{e}");
    }
}
