//! Trace readers: every format parses a hand-written fixture to values
//! worked out by hand here (not by the code), is auto-detected, reports a bad
//! line with file, line and field (or skips and counts it), and reads the same
//! through gzip, zstd and xz. Plus DiskSim's real traces from shared/.

use disksched_core::trace::{self, TraceFormat, TraceRecord, TraceWriter};
use disksched_core::Error;
use std::io::Write;
use std::path::{Path, PathBuf};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/disksim/");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces").join(name)
}

fn shared(name: &str) -> String {
    format!("{SHARED}{name}")
}

/// A fresh scratch directory per test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("disksched-trace-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read_all(path: impl AsRef<Path>, format: Option<TraceFormat>) -> (Vec<TraceRecord>, TraceFormat) {
    let r = trace::open(path, format, false).unwrap();
    let f = r.format();
    (r.map(|x| x.unwrap()).collect(), f)
}

fn rec(time_ns: u64, device: u32, lbn: u64, blocks: u32, is_write: bool) -> TraceRecord {
    TraceRecord { time_ns, device, lbn, blocks, is_write, response_ns: None, think_ns: None }
}

fn with_resp(mut r: TraceRecord, response_ns: u64) -> TraceRecord {
    r.response_ns = Some(response_ns);
    r
}

/// Parse exactly, detect the format, and read identically through gzip, zstd and xz.
fn check_format(name: &str, format: TraceFormat, expected: &[TraceRecord]) {
    let path = fixture(name);
    let (got, detected) = read_all(&path, None);
    assert_eq!(detected, format, "{name}: detected format");
    assert_eq!(got, expected, "{name}: records");
    let (explicit, f) = read_all(&path, Some(format));
    assert_eq!(f, format);
    assert_eq!(explicit, expected, "{name}: explicit format");

    let raw = std::fs::read(&path).unwrap();
    let dir = scratch(&format!("compressed-{name}"));
    let gz = dir.join(format!("{name}.gz"));
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&raw).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let zst = dir.join(format!("{name}.zst"));
    std::fs::write(&zst, zstd::encode_all(&raw[..], 3).unwrap()).unwrap();
    let xz = dir.join(format!("{name}.xz"));
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(&raw).unwrap();
    std::fs::write(&xz, e.finish().unwrap()).unwrap();
    // Names say nothing: detection is by magic bytes, so also try a misleading name.
    let plain_named = dir.join(format!("{name}.txt"));
    std::fs::copy(&zst, &plain_named).unwrap();
    for p in [&gz, &zst, &xz, &plain_named] {
        let (got, detected) = read_all(p, None);
        assert_eq!(detected, format, "{}", p.display());
        assert_eq!(got, expected, "{}", p.display());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Insert `bad` as line `at` (1-based) of a copy of the fixture: reading it
/// fails there naming the file, the line and `field_msg`; with skipping, the
/// line is counted and every good record still comes out.
fn check_bad_line(name: &str, format: TraceFormat, at: usize, bad: &str, field_msg: &str) {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(at - 1, bad);
    let dir = scratch(&format!("bad-{name}"));
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let path_s = path.display().to_string();

    let (good, _) = read_all(fixture(name), Some(format));
    let mut r = trace::open(&path, Some(format), false).unwrap();
    let mut before = 0;
    let err = loop {
        match r.next().expect("an error before the end") {
            Ok(_) => before += 1,
            Err(e) => break e,
        }
    };
    match &err {
        Error::Parse { path: p, line, msg } => {
            assert_eq!(p, &path_s);
            assert_eq!(*line, at, "{err}");
            assert!(msg.contains(field_msg), "{name}: message {msg:?} lacks {field_msg:?}");
        }
        other => panic!("{name}: expected a parse error, got {other:?}"),
    }
    assert_eq!(err.to_string(), format!("{path_s}:{at}: {}", match &err { Error::Parse { msg, .. } => msg, _ => unreachable!() }));
    assert!(!err.to_string().contains('\n'), "one line");
    // Reading goes on after the error: the rest is still there.
    let after = r.map(|x| x.unwrap()).collect::<Vec<_>>().len();
    assert_eq!(before + after, good.len(), "{name}: records around the bad line");

    let mut r = trace::open(&path, Some(format), true).unwrap();
    let got: Vec<_> = r.by_ref().map(|x| x.unwrap()).collect();
    assert_eq!(r.bad_lines_skipped(), 1, "{name}");
    assert_eq!(got, good, "{name}: skipping keeps every good record");
    std::fs::remove_dir_all(dir).unwrap();
}

// ---------------------------------------------------------------------------
// One test per format.

#[test]
fn disksim_ascii() {
    let expected = [
        rec(0, 0, 1000, 8, false),
        rec(1_500_250, 0, 2000, 16, true),  // 1.500250 ms
        rec(2_125_000, 1, 0, 1, false),
        rec(10_000_001, 1, 123_456_789, 128, true),
        rec(12_500_000, 2, 42, 3, false),   // flags 3: bit 0 set = read
        rec(13_191_135, 30, 0, 5, false),
    ];
    check_format("disksim_ascii.trace", TraceFormat::DisksimAscii, &expected);
    check_bad_line("disksim_ascii.trace", TraceFormat::DisksimAscii, 3, "2.0\t0\tabc\t8\t1", "field 3 (blkno) = \"abc\": expected a block number");
    check_bad_line("disksim_ascii.trace", TraceFormat::DisksimAscii, 7, "14.0\t0\t1\t8", "found 4 fields");
}

#[test]
fn disksim_validate() {
    let v = |t, lbn, blocks, w, access_ns, think_ns| TraceRecord {
        time_ns: t,
        device: 0,
        lbn,
        blocks,
        is_write: w,
        response_ns: Some(access_ns),
        think_ns: Some(think_ns),
    };
    // Issue times: the running sum of access + think (us -> ns).
    let expected = [
        v(0, 4_583_176, 4, true, 663_000, 45_422_000),
        v(46_085_000, 3_962_268, 12, false, 6_657_000, 64_047_000), // 663 + 45422 us
        v(116_789_000, 2_771_288, 4, false, 593_500, 58_217_000),   // + 6657 + 64047 us
        v(175_599_500, 100_000, 8, true, 1_000_000, 0),             // + 593.5 + 58217 us
        v(176_599_500, 0, 16, true, 12_345_678, 100_001),           // + 1000 + 0 us
    ];
    check_format("disksim_validate.trace", TraceFormat::DisksimValidate, &expected);
    check_bad_line("disksim_validate.trace", TraceFormat::DisksimValidate, 2, "X Hit 1 4 1.0 2.0", "field 1 (op) = \"X\": expected R or W");
    check_bad_line("disksim_validate.trace", TraceFormat::DisksimValidate, 4, "R Hit 1 4 -5.0 2.0", "field 5 (access_us) = \"-5.0\"");
}

#[test]
fn hpl() {
    // Hand-made records (see hpl.rs for the layout); disk 1 has 512-byte
    // sectors in the fixture header, disk 0 256-byte ones.
    let expected = [
        with_resp(rec(0, 1, 1056, 8, false), 19_687_000), // 4096 B at sector 1056 of disk 1; flags 0x1b: read
        with_resp(rec(30_183_968_000, 0, 337_016, 16, true), 36_899_000), // 674032 * 256 / 512
        with_resp(rec(30_184_870_000, 0, 143_320, 16, true), 65_940_000), // 286640 / 2
        // Sector 171793 (odd) * 256 = byte 43979008 = block 85896.5: rounded
        // down; end 43980032 = block 85898.5, rounded up to 85899: 3 blocks.
        with_resp(rec(1_799_490_416_000, 0, 85_896, 3, false), 10_000_000),
        with_resp(rec(603_064_999_999_000, 0, 6128, 4, false), 6_500_000), // section 15: 12256 / 2
        with_resp(rec(603_065_000_000_000, 0, 85_896, 512, true), 20_000_000), // raw device (major 7), 256 KB
    ];
    check_format("hpl_small.srt", TraceFormat::Hpl, &expected);

    // Bad records: the header is 1075 bytes (1074 of text and a form feed).
    let raw = std::fs::read(fixture("hpl_small.srt")).unwrap();
    let header = 1075;
    assert_eq!(raw[header - 1], 0x0c);
    let dir = scratch("hpl-bad");
    let mut bad = raw.clone();
    let third = header + 2 * 56;
    bad[third + 4..third + 8].copy_from_slice(&0x0005_0001u32.to_be_bytes());
    let path = dir.join("bad.srt");
    std::fs::write(&path, &bad).unwrap();
    let errs: Vec<String> = trace::open(&path, None, false).unwrap().filter_map(|r| r.err()).map(|e| e.to_string()).collect();
    assert_eq!(
        errs,
        [format!("{}:3: record at byte {third}: field 2 (record type) = 0x00050001: expected 0x00040001 (I/O record)", path.display())]
    );
    let mut r = trace::open(&path, None, true).unwrap();
    let got: Vec<_> = r.by_ref().map(|x| x.unwrap()).collect();
    assert_eq!(r.bad_lines_skipped(), 1);
    let mut want = expected.to_vec();
    want.remove(2);
    assert_eq!(got, want);

    // A device the header does not describe (disk 5).
    let mut bad = raw.clone();
    bad[third + 32..third + 36].copy_from_slice(&0x0800_0508u32.to_be_bytes());
    std::fs::write(&path, &bad).unwrap();
    let e = trace::open(&path, Some(TraceFormat::Hpl), false).unwrap().find_map(|r| r.err()).unwrap().to_string();
    assert!(e.contains(":3: ") && e.contains("field 9 (device) = 0x08000508") && e.contains("disk 5"), "{e}");

    // A truncated last record ends the stream with an error, even when skipping.
    std::fs::write(&path, &raw[..raw.len() - 10]).unwrap();
    let mut r = trace::open(&path, None, true).unwrap();
    let all: Vec<_> = r.by_ref().collect();
    assert_eq!(all.len(), 6);
    let e = all[5].as_ref().unwrap_err().to_string();
    assert!(e.contains(":6: ") && e.contains("truncated, 46 of 56 bytes"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn msr() {
    // Filetime ticks relative to the first record, * 100 ns; response ticks * 100 ns.
    let expected = [
        with_resp(rec(0, 1, 13_700_410, 48, false), 4_128_600), // 7014609920 / 512; 24576 / 512
        with_resp(rec(1_332_052_600, 1, 2_573_128, 16, true), 196_300), // (…16382155 - …03061629) * 100
        with_resp(rec(2_332_061_600, 0, 4_758_672, 8, true), 183_500),
        with_resp(rec(3_332_077_100, 0, 6_160_384, 64, false), 385_100), // "read": any case
        // Bytes 1000..1100 -> blocks 1 (1000/512 rounded down) .. 3 (1100/512 rounded up).
        with_resp(rec(4_332_102_600, 1, 1, 2, false), 10_000),
    ];
    check_format("msr.csv", TraceFormat::Msr, &expected);
    check_bad_line("msr.csv", TraceFormat::Msr, 3, "128166372016382155,hm,1,Write,1317441536,abc,1963", "field 6 (Size) = \"abc\": expected a byte count");
    check_bad_line("msr.csv", TraceFormat::Msr, 2, "128166372016382155,hm,1,Erase,1317441536,512,1963", "field 4 (Type) = \"Erase\": expected Read or Write");
    check_bad_line("msr.csv", TraceFormat::Msr, 6, "128166372016382155,hm,1,Write,1317441536", "found 5 comma-separated fields, expected 7");
}

#[test]
fn msr_exact_message_and_header_line() {
    let dir = scratch("msr-msg");
    let path = dir.join("t.csv");
    let mut text = String::from("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
    for i in 0..15 {
        text += &format!("1281663720030616{i:02},hm,1,Read,{},4096,100\n", i * 4096);
    }
    text += "128166372003061699,hm,1,Read,0,abc,100\n";
    std::fs::write(&path, text).unwrap();
    let (ok, f): (Vec<_>, _) = {
        let r = trace::open(&path, None, false).unwrap();
        let f = r.format();
        (r.collect::<Vec<_>>(), f)
    };
    assert_eq!(f, TraceFormat::Msr);
    assert_eq!(ok.len(), 16);
    assert_eq!(ok[1].as_ref().unwrap(), &with_resp(rec(100, 1, 8, 8, false), 10_000));
    assert_eq!(
        ok[15].as_ref().unwrap_err().to_string(),
        format!("{}:17: field 6 (Size) = \"abc\": expected a byte count", path.display())
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn spc() {
    let expected = [
        rec(0, 0, 303_567, 7, true), // 3584 B = 7 blocks
        rec(0, 1, 55_590, 6, true),
        rec(26_214_000, 0, 20_941, 16, false), // 0.026214 s
        rec(500_000_000, 2, 1, 1, false),      // 1 byte rounds up to a block; "R" upper case
        rec(1_234_123_456_789, 0, 6_000_000, 1, true), // extra field ignored
    ];
    check_format("spc.csv", TraceFormat::Spc, &expected);
    check_bad_line("spc.csv", TraceFormat::Spc, 2, "0,303567,3584,x,0.1", "field 4 (Opcode) = \"x\": expected r or w");
    check_bad_line("spc.csv", TraceFormat::Spc, 5, "0,303567,3584,w,soon", "field 5 (Timestamp) = \"soon\"");
    check_bad_line("spc.csv", TraceFormat::Spc, 6, "0,303567,0,w,1.0", "field 3 (Size) = \"0\": expected a positive byte count");
}

#[test]
fn blkparse() {
    let sda = 8 << 20; // dev_t encoding: major << 20 | minor
    let expected = [
        with_resp(rec(15_000, sda, 223_490, 8, true), 515_000), // C at 0.000530000
        with_resp(rec(100_500, sda, 1000, 16, false), 2_000_000), // C at 0.002100500
        rec(200_000, sda | 16, 5000, 256, false), // RA on 8,16: never completed in the trace
        // The FWS flush (no data) and the D discard are not I/O records.
    ];
    check_format("blkparse.txt", TraceFormat::Blkparse, &expected);
    check_bad_line(
        "blkparse.txt",
        TraceFormat::Blkparse,
        8,
        "  8,0    3        8     0.00x015000   697  D   W 223490 + 8 [kjournald]",
        "field 4 (time) = \"0.00x015000\"",
    );
    check_bad_line("blkparse.txt", TraceFormat::Blkparse, 2, "garbage here", "field 1 (device) = \"garbage\"");
}

#[test]
fn blkparse_unpaired_issue_expires() {
    // A D whose C never comes is released after 30 s of trace time, in order.
    let dir = scratch("blk-expire");
    let path = dir.join("b.txt");
    let mut text = String::new();
    text += "  8,0    0        1     0.000000000   1  D   R 100 + 8 [a]\n";
    text += "  8,0    0        2     1.000000000   1  D   W 200 + 8 [a]\n";
    text += "  8,0    0        3     1.000500000   0  C   W 200 + 8 [0]\n";
    text += "  8,0    0        4    31.000000001   1  D   R 300 + 8 [a]\n";
    std::fs::write(&path, text).unwrap();
    let mut r = trace::open(&path, None, false).unwrap();
    assert_eq!(r.format(), TraceFormat::Blkparse);
    let first = r.next().unwrap().unwrap();
    // Released by the line at 31 s, before the end of the file.
    assert_eq!(r.lines_read(), 4);
    assert_eq!(first, rec(0, 8 << 20, 100, 8, false));
    assert_eq!(r.next().unwrap().unwrap(), with_resp(rec(1_000_000_000, 8 << 20, 200, 8, true), 500_000));
    assert_eq!(r.next().unwrap().unwrap(), rec(31_000_000_001, 8 << 20, 300, 8, false));
    assert!(r.next().is_none());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn fio_v2() {
    // No clock in v2: time is the sum of the waits before the I/O.
    let expected = [
        rec(0, 0, 0, 8, true),
        rec(1_500_000, 0, 16, 16, false),  // after "wait 1500" us
        rec(1_500_000, 1, 1, 2, false),    // /dev/sdc is device 1; bytes 1000..1100 -> blocks 1..3
        rec(1_750_000, 1, 8, 128, true),   // after "wait 250"; trim and sync are not records
    ];
    check_format("fio_v2.log", TraceFormat::Fio, &expected);
    check_bad_line("fio_v2.log", TraceFormat::Fio, 5, "/dev/sdb write 0x10 4096", "field 3 (offset) = \"0x10\": expected a byte offset");
    check_bad_line("fio_v2.log", TraceFormat::Fio, 6, "/dev/sdb erase 0 4096", "field 2 (action) = \"erase\"");
}

#[test]
fn fio_v3() {
    // The first lines are as fio 3.33 wrote them (timestamps in us).
    let expected = [
        rec(258_000, 0, 120, 8, false),    // 61440 / 512; 4096 / 512
        rec(523_000, 0, 1512, 8, true),    // 774144 / 512
        rec(20_246_000, 0, 1720, 8, false), // 880640 / 512
        rec(20_556_000, 0, 960, 8, true),  // 491520 / 512
        rec(40_298_000, 0, 816, 8, false), // 417792 / 512; the trim is no record
        rec(1_000_000_000, 0, 7, 2, true), // bytes 4095..4097 -> blocks 7..9
    ];
    check_format("fio_v3.log", TraceFormat::Fio, &expected);
    check_bad_line("fio_v3.log", TraceFormat::Fio, 4, "x /tmp/fiotest.dat read 0 4096", "field 1 (timestamp) = \"x\": expected microseconds");
    check_bad_line("fio_v3.log", TraceFormat::Fio, 5, "20300 /tmp/fiotest.dat read 0", "found 4 fields");
    // v3 has no wait action.
    check_bad_line("fio_v3.log", TraceFormat::Fio, 5, "20300 /tmp/fiotest.dat wait 10 0", "field 3 (action) = \"wait\"");
}

#[test]
fn fio_needs_its_header() {
    let dir = scratch("fio-header");
    let path = dir.join("noheader.log");
    std::fs::write(&path, "/dev/sdb write 0 4096\n").unwrap();
    let e = trace::open(&path, Some(TraceFormat::Fio), false).unwrap().next().unwrap().unwrap_err().to_string();
    assert!(e.ends_with(":1: header \"/dev/sdb write 0 4096\": expected \"fio version 2 iolog\" or \"fio version 3 iolog\""), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn alibaba() {
    let expected = [
        rec(1_577_808_000_000_035_000, 419, 16_853_008, 8, true), // 8628740096 / 512; us * 1000, absolute
        rec(1_577_808_000_000_100_000, 419, 16_853_016, 32, false),
        rec(1_577_808_000_500_000_000, 2, 0, 1, true),
        rec(1_577_808_001_000_000_000, 2, 1, 2, false), // bytes 1023..1025 span blocks 1 and 2
        rec(1_577_808_002_123_456_000, 800, 2_147_483_648, 2048, true), // 1 TiB / 512; 1 MiB
    ];
    check_format("alibaba.csv", TraceFormat::Alibaba, &expected);
    check_bad_line("alibaba.csv", TraceFormat::Alibaba, 3, "419,X,0,4096,1577808000000035", "field 2 (opcode) = \"X\": expected R or W");
    check_bad_line("alibaba.csv", TraceFormat::Alibaba, 6, "419,W,0,4096,yesterday", "field 5 (timestamp) = \"yesterday\"");
}

#[test]
fn tencent() {
    let expected = [
        rec(1_538_323_200_000_000_000, 1063, 12_910_952, 128, false), // s * 1e9, absolute
        rec(1_538_323_200_000_000_000, 1063, 6_067_080, 8, true),
        rec(1_538_323_201_000_000_000, 27, 0, 1, true),
        rec(1_538_323_205_000_000_000, 1063, 4_294_967_296, 256, false),
        rec(1_538_323_260_000_000_000, 9, 42, 16, true),
    ];
    check_format("tencent.csv", TraceFormat::Tencent, &expected);
    check_bad_line("tencent.csv", TraceFormat::Tencent, 2, "1538323200,12910952,128,2,1063", "field 4 (IOType) = \"2\": expected 0 (read) or 1 (write)");
    check_bad_line("tencent.csv", TraceFormat::Tencent, 4, "1538323200,-5,128,0,1063", "field 2 (Offset) = \"-5\"");
}

// ---------------------------------------------------------------------------
// Opening, naming, detection.

#[test]
fn missing_file_is_a_file_error_with_the_os_message() {
    let e = trace::open("/nonexistent/dir/t.csv", None, false).err().expect("no such file");
    match &e {
        Error::File { path, msg } => {
            assert_eq!(path, "/nonexistent/dir/t.csv");
            assert!(msg.contains("No such file or directory"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn format_names() {
    let names = ["disksim-ascii", "disksim-validate", "hpl", "msr", "spc", "blkparse", "fio", "alibaba", "tencent"];
    for n in names {
        let f: TraceFormat = n.parse().unwrap();
        assert_eq!(f.to_string(), n);
    }
    let e = "csv".parse::<TraceFormat>().unwrap_err().to_string();
    assert!(e.contains("\"csv\""), "{e}");
    for n in names {
        assert!(e.contains(n), "{e} lacks {n}");
    }
}

#[test]
fn undetectable_content_names_the_choices() {
    let dir = scratch("undetectable");
    let path = dir.join("x.txt");
    std::fs::write(&path, "hello world\nthis is not a trace 42\n").unwrap();
    let e = trace::open(&path, None, false).err().unwrap().to_string();
    assert!(e.contains("cannot detect") && e.contains("disksim-ascii") && e.contains("tencent"), "{e}");
    // An explicit format wins over detection: the same text is then bad
    // (line 1, digit-free, passes as a CSV header line).
    let e = trace::open(&path, Some(TraceFormat::Spc), false).unwrap().next().unwrap().unwrap_err().to_string();
    assert!(e.contains(":2: found 1 comma-separated fields"), "{e}");
    std::fs::write(&path, "# only a comment\n\n").unwrap();
    assert!(trace::open(&path, None, false).is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn explicit_format_overrides_detection() {
    // A tencent file read as SPC fails on its first line (IOType "0" is no
    // SPC opcode) rather than being re-detected.
    let e = trace::open(fixture("tencent.csv"), Some(TraceFormat::Spc), false).unwrap().next().unwrap().unwrap_err();
    assert!(matches!(e, Error::Parse { line: 1, .. }), "{e}");
}

#[test]
fn comments_and_blank_lines_are_skipped() {
    let dir = scratch("comments");
    let path = dir.join("c.trace");
    std::fs::write(&path, "# DiskSim ascii\n\n0.5 0 10 8 1\n   \n# end\n").unwrap();
    let (got, f) = read_all(&path, None);
    assert_eq!(f, TraceFormat::DisksimAscii);
    assert_eq!(got, [rec(500_000, 0, 10, 8, false)]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn non_utf8_line_is_a_bad_line_not_a_panic() {
    let dir = scratch("utf8");
    let path = dir.join("u.csv");
    std::fs::write(&path, b"0,1,512,r,0.0\n0,\xff\xfe,512,r,0.1\n0,2,512,w,0.2\n").unwrap();
    let e = trace::open(&path, Some(TraceFormat::Spc), false).unwrap().find_map(|r| r.err()).unwrap().to_string();
    assert!(e.contains(":2: not UTF-8 text"), "{e}");
    let mut r = trace::open(&path, Some(TraceFormat::Spc), true).unwrap();
    assert_eq!(r.by_ref().count(), 2);
    assert_eq!(r.bad_lines_skipped(), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

// ---------------------------------------------------------------------------
// Writing: every writable format reads back what it wrote.

#[test]
fn writers_round_trip() {
    // Whole seconds (tencent's resolution), times from 0 (msr is relative),
    // devices in order of first use (fio numbers them so), access + think =
    // the gap between issues (validate's clock).
    let full = |t: u64, d, lbn, b, w| TraceRecord {
        time_ns: t * 1_000_000_000,
        device: d,
        lbn,
        blocks: b,
        is_write: w,
        response_ns: Some(250_000_000),
        think_ns: Some(750_000_000),
    };
    let recs = [full(0, 0, 100, 8, false), full(1, 1, 0, 1, true), full(2, 0, 123_456_789, 256, true)];
    let dir = scratch("round-trip");
    for f in TraceFormat::ALL.into_iter().filter(|f| f.writable()) {
        let path = dir.join(f.name());
        let mut w = TraceWriter::new(f, Vec::new()).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        std::fs::write(&path, w.into_inner()).unwrap();
        let (got, detected) = read_all(&path, None);
        assert_eq!(detected, f, "{f}: detection of written output");
        let want: Vec<TraceRecord> = recs
            .iter()
            .map(|r| TraceRecord {
                device: if f == TraceFormat::DisksimValidate { 0 } else { r.device },
                response_ns: match f {
                    TraceFormat::DisksimValidate | TraceFormat::Msr => r.response_ns,
                    _ => None,
                },
                think_ns: if f == TraceFormat::DisksimValidate { r.think_ns } else { None },
                ..*r
            })
            .collect();
        assert_eq!(got, want, "{f}");
    }
    for f in [TraceFormat::Hpl, TraceFormat::Blkparse] {
        let e = trace::write_record(f, &recs[0], &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("cannot be written") && e.contains("disksim-ascii"), "{e}");
        assert!(TraceWriter::new(f, Vec::new()).is_err());
    }
    let bare = TraceRecord { response_ns: None, ..recs[0] };
    assert!(trace::write_record(TraceFormat::DisksimValidate, &bare, &mut Vec::new()).is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn write_record_lines() {
    let r = rec(1_500_250, 3, 10, 8, false);
    let line = |f| {
        let mut v = Vec::new();
        trace::write_record(f, &r, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    };
    assert_eq!(line(TraceFormat::DisksimAscii), "1.500250\t3\t10\t8\t1\n");
    assert_eq!(line(TraceFormat::Msr), "15002,disksched,3,Read,5120,4096,0\n");
    assert_eq!(line(TraceFormat::Spc), "3,10,4096,r,0.001500250\n");
    assert_eq!(line(TraceFormat::Fio), "1500 dev3 read 5120 4096\n");
    assert_eq!(line(TraceFormat::Alibaba), "3,R,5120,4096,1500\n");
    assert_eq!(line(TraceFormat::Tencent), "0,10,8,0,3\n");
}

// ---------------------------------------------------------------------------
// DiskSim's real traces.

#[test]
fn hpl_real_ajw_week() {
    let path = shared("ajw.1week.srt");
    let mut r = trace::open(&path, None, false).unwrap();
    assert_eq!(r.format(), TraceFormat::Hpl);
    let first = r.next().unwrap().unwrap();
    // Decoded by hand from the first 56 bytes after the header: swap read on
    // disk 1 at 256-byte sector 1056, 4096 bytes, response 19687 us.
    assert_eq!(first, with_resp(rec(0, 1, 528, 8, false), 19_687_000));
    let (mut n, mut reads, mut last_t) = (1u64, 1u64, 0u64);
    let week_ns = 7 * 86_400 * 1_000_000_000u64;
    // Disk 0 (hp335h): 1449 cylinders * 8 tracks * 113 sectors of 256 B.
    let capacity_blocks = 1449 * 8 * 113 / 2;
    for x in r {
        let x = x.unwrap();
        n += 1;
        reads += !x.is_write as u64;
        assert!(x.time_ns >= last_t, "sorted trace");
        last_t = x.time_ns;
        assert!(x.time_ns < week_ns);
        assert!(x.device <= 1);
        assert!((2..=512).contains(&x.blocks), "1 KB .. 256 KB: {x:?}");
        assert!(x.lbn + x.blocks as u64 <= capacity_blocks, "{x:?}");
        let resp = x.response_ns.unwrap();
        assert!((1_000_000..10_000_000_000).contains(&resp), "{x:?}");
    }
    assert_eq!(n, 44_519); // (file size - 2204 header bytes) / 56
    assert_eq!(reads, 13_040);
    assert!(last_t > 6 * 86_400 * 1_000_000_000, "spans the week");
}

#[test]
fn validate_real_atlas10k() {
    let (recs, f) = read_all(shared("atlas10k.trace"), None);
    assert_eq!(f, TraceFormat::DisksimValidate);
    assert_eq!(recs.len(), 10_000);
    let r0 = recs[0];
    assert_eq!((r0.is_write, r0.lbn, r0.blocks), (true, 4_583_176, 4));
    assert_eq!((r0.response_ns, r0.think_ns), (Some(663_000), Some(45_422_000)));
    assert_eq!(recs[1].time_ns, 663_000 + 45_422_000);
    assert!(recs.iter().all(|r| r.response_ns.is_some() && r.think_ns.is_some()));
}

#[test]
fn ascii_real_trace() {
    let (recs, f) = read_all(shared("ascii.trace"), None);
    assert_eq!(f, TraceFormat::DisksimAscii);
    assert_eq!(recs.len(), 100_000);
    assert_eq!(recs[0], rec(13_191_135, 30, 0, 5, false)); // 13.191135 30 0 5 1
    assert_eq!(recs[1], rec(17_829_285, 20, 576_560, 6, false));
    assert_eq!(recs.iter().filter(|r| r.is_write).count(), 20_366); // flags 0
}

// ---------------------------------------------------------------------------
// Speed: run by hand (`--ignored --nocapture`); prints, asserts nothing about speed.

#[test]
#[ignore]
fn parse_rates() {
    let n = 1_000_000u64;
    let dir = scratch("rates");
    let gen = |i: u64| TraceRecord {
        time_ns: i * 1_234_567,
        device: (i % 4) as u32,
        lbn: (i * 7919) % 100_000_000,
        blocks: 8 + (i % 16) as u32,
        is_write: i.is_multiple_of(3),
        response_ns: Some(1_000_000 + i % 5000),
        think_ns: Some(2_000_000),
    };
    for f in TraceFormat::ALL {
        let path = dir.join(f.name());
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        match f {
            TraceFormat::Hpl => {
                out.write_all(&std::fs::read(fixture("hpl_small.srt")).unwrap()[..1075]).unwrap();
                for i in 0..n {
                    let r = gen(i);
                    let words: [u32; 14] = [
                        56, 0x0004_0001, (r.time_ns / 1_000_000_000) as u32, ((r.time_ns / 1000) % 1_000_000) as u32, 100, 10_000,
                        r.blocks * 512, (r.lbn * 2 % 1_000_000) as u32, 0x0800_0008, 4, 1, !r.is_write as u32, 0, 1,
                    ];
                    for w in words {
                        out.write_all(&w.to_be_bytes()).unwrap();
                    }
                }
            }
            TraceFormat::Blkparse => {
                for i in 0..n / 2 {
                    let r = gen(i);
                    let t = r.time_ns;
                    writeln!(out, "  8,0    1 {:8} {:5}.{:09} 1234  D   {} {} + {} [fio]", 2 * i, t / 1_000_000_000, t % 1_000_000_000, if r.is_write { 'W' } else { 'R' }, r.lbn, r.blocks).unwrap();
                    let c = t + 500_000;
                    writeln!(out, "  8,0    1 {:8} {:5}.{:09}    0  C   {} {} + {} [0]", 2 * i + 1, c / 1_000_000_000, c % 1_000_000_000, if r.is_write { 'W' } else { 'R' }, r.lbn, r.blocks).unwrap();
                }
            }
            _ => {
                let mut w = TraceWriter::new(f, out).unwrap();
                for i in 0..n {
                    w.write(&gen(i)).unwrap();
                }
                out = w.into_inner();
            }
        }
        out.flush().unwrap();
        drop(out);
        let (lines, secs) = trace::parse_rate(&path, Some(f)).unwrap();
        println!("{:17} {:9} lines  {:6.3} s  {:5.2} M lines/s", f.name(), lines, secs, lines as f64 / secs / 1e6);
    }
    // Decompression cost, on the SPC file.
    let raw = std::fs::read(dir.join("spc")).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&raw).unwrap();
    std::fs::write(dir.join("spc.gz"), e.finish().unwrap()).unwrap();
    std::fs::write(dir.join("spc.zst"), zstd::encode_all(&raw[..], 3).unwrap()).unwrap();
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(&raw).unwrap();
    std::fs::write(dir.join("spc.xz"), e.finish().unwrap()).unwrap();
    for name in ["spc.gz", "spc.zst", "spc.xz"] {
        let (lines, secs) = trace::parse_rate(dir.join(name), None).unwrap();
        println!("{:17} {:9} lines  {:6.3} s  {:5.2} M lines/s", name, lines, secs, lines as f64 / secs / 1e6);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

// ---------------------------------------------------------------------------
// Hostile input: errors, never panics, bounded memory.

#[test]
fn overlong_line_is_bad_and_reading_goes_on() {
    let dir = scratch("overlong");
    let path = dir.join("long.trace");
    let mut text = String::from("0.5 0 10 8 1\n");
    text += &"9".repeat(trace::MAX_LINE_BYTES * 3);
    text += "\n1.5 0 20 8 0\n";
    std::fs::write(&path, text).unwrap();
    let e = trace::open(&path, Some(TraceFormat::DisksimAscii), false).unwrap().find_map(|r| r.err()).unwrap().to_string();
    assert!(e.contains(":2: line longer than 65536 bytes"), "{e}");
    let mut r = trace::open(&path, Some(TraceFormat::DisksimAscii), true).unwrap();
    let got: Vec<_> = r.by_ref().map(|x| x.unwrap()).collect();
    assert_eq!(got, [rec(500_000, 0, 10, 8, false), rec(1_500_000, 0, 20, 8, true)]);
    assert_eq!((r.bad_lines_skipped(), r.lines_read()), (1, 3));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn corrupt_compressed_data_is_a_file_error() {
    let dir = scratch("corrupt");
    let raw = std::fs::read(fixture("spc.csv")).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&raw).unwrap();
    let gz = e.finish().unwrap();
    let path = dir.join("cut.gz");
    std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
    let res = trace::open(&path, Some(TraceFormat::Spc), false).map(|r| r.collect::<Vec<_>>());
    let err = match res {
        Err(e) => e,
        Ok(items) => items.into_iter().find_map(|r| r.err()).expect("truncated gzip must fail"),
    };
    assert!(matches!(err, Error::File { .. }), "{err:?}");
    let path = dir.join("garbage.zst");
    std::fs::write(&path, [0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let res = trace::open(&path, Some(TraceFormat::Spc), false).map(|r| r.collect::<Vec<_>>());
    assert!(res.is_err() || res.unwrap().iter().any(|r| r.is_err()));
    std::fs::remove_dir_all(dir).unwrap();
}

/// `data` as one zstd frame with its checksum, as the `zstd` tool writes it.
fn zstd_checksummed(data: &[u8]) -> Vec<u8> {
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A .zst file as `zstd` and `pzstd` write them: several frames, a skippable frame between, checksums on.
#[test]
fn zstd_reads_every_frame_and_checks_checksums() {
    let raw = std::fs::read(fixture("spc.csv")).unwrap();
    let cut = raw[..raw.len() / 2].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let mut file = zstd_checksummed(&raw[..cut]);
    file.extend_from_slice(&0x184D_2A50u32.to_le_bytes()); // a skippable frame: magic, length, payload
    file.extend_from_slice(&5u32.to_le_bytes());
    file.extend_from_slice(b"skip!");
    file.extend_from_slice(&zstd_checksummed(&raw[cut..]));
    let dir = scratch("zstd-frames");
    let path = dir.join("frames.zst");
    std::fs::write(&path, &file).unwrap();
    let (plain, _) = read_all(fixture("spc.csv"), Some(TraceFormat::Spc));
    let (framed, _) = read_all(&path, Some(TraceFormat::Spc));
    assert!(plain.len() > 2);
    assert_eq!(framed, plain);

    let last = file.len() - 1; // the second frame's checksum ends the file
    file[last] ^= 0xff;
    std::fs::write(&path, &file).unwrap();
    let err = trace::open(&path, Some(TraceFormat::Spc), false).unwrap().find_map(|r| r.err()).expect("a bad checksum must fail");
    assert!(err.to_string().contains("frames.zst") && err.to_string().contains("zstd: checksum mismatch"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Damaged compressed files (bytes changed, or cut short, at places drawn from a seeded stream) end in a
/// record or an error for each read, never a panic (a read that never ended would hang the test): zstd's
/// decoder is Rust code of our own dependency tree (ruzstd), not the C library the zstd tool is tested as.
#[test]
fn damaged_compressed_traces_give_errors_not_panics() {
    use rand::{Rng, SeedableRng};
    let raw = std::fs::read(fixture("spc.csv")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw).unwrap();
    let mut xz = xz2::write::XzEncoder::new(Vec::new(), 6);
    xz.write_all(&raw).unwrap();
    let dir = scratch("damaged");
    let mut rng = rand_pcg::Pcg64::seed_from_u64(34);
    let (mut damaged, mut failed) = (0, 0);
    for (name, good) in [("t.zst", zstd_checksummed(&raw)), ("t.gz", gz.finish().unwrap()), ("t.xz", xz.finish().unwrap())] {
        for case in 0..300 {
            let mut bytes = good.clone();
            if case % 3 == 0 {
                bytes.truncate(rng.gen_range(8..good.len()));
            } else {
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(6..bytes.len()); // (past the magic: the format stays detected)
                    bytes[i] ^= rng.gen_range(1..=255u8);
                }
            }
            let path = dir.join(name);
            std::fs::write(&path, &bytes).unwrap();
            let res = std::panic::catch_unwind(|| {
                trace::open(&path, Some(TraceFormat::Spc), false).map(|r| r.take(raw.len()).filter(|x| x.is_err()).count())
            });
            let res = res.unwrap_or_else(|_| panic!("{name} case {case}: the reader panicked"));
            damaged += 1;
            failed += matches!(res, Err(_) | Ok(1..)) as u32;
        }
    }
    // Nearly all damage is caught (a checksum, a bad block: 895 of 900 here); a change inside a stored block may read as other text.
    assert!(failed * 10 >= damaged * 9, "{failed} of {damaged} damaged files gave an error");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn hpl_forced_on_text_is_a_header_error() {
    let e = trace::open(fixture("spc.csv"), Some(TraceFormat::Hpl), false).err().unwrap().to_string();
    assert!(e.contains("spc.csv: HPL header: missing `$$TR_IOREC` magic"), "{e}");
}
