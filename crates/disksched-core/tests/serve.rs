//! `disksched serve` over a unix socket, driven by a minimal NBD client
//! written here from the protocol document (not from the server's code):
//! data comes back as written, errors leave the server serving, random and
//! truncated input never stops it, and every reply comes no earlier than the
//! simulated drive says, and not much later.

use disksched_core::serve::{serve, Listen, ServeOptions, ServeReport};
use disksched_core::{SimConfig, Simulation};
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONFIG: &str = "seed = 3\n[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"dd\"\nrequest_kb = 4\n[run]\nwarmup_requests = 0\nrecords = true\n";
const SIZE_BYTES: u64 = 64 << 20;

struct Server {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<disksched_core::Result<ServeReport>>,
}

fn start(name: &str) -> Server {
    let path = std::env::temp_dir().join(format!("disksched-serve-{}-{name}.sock", std::process::id()));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let (p, s) = (path.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        let cfg = SimConfig::from_toml(CONFIG, "serve.toml").unwrap();
        let sim = Simulation::new(&cfg).unwrap();
        let opts = ServeOptions { listen: Listen::Unix(p), size_bytes: Some(SIZE_BYTES), backing: None, stats_path: None,
                                  max_connections: 4, max_request_bytes: 1 << 20, export_name: "disk".into(),
                                  catch_up: false };
        serve(sim, &opts, &mut |a| tx.send(a.to_string()).unwrap(), &mut || s.load(Ordering::SeqCst))
    });
    rx.recv_timeout(Duration::from_secs(30)).expect("server listening");
    Server { path, stop, thread }
}

impl Server {
    fn finish(self) -> ServeReport {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the server thread did not panic").expect("the session ends cleanly")
    }
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(b[i..i + 4].try_into().unwrap())
}

/// A client in the transmission phase after NBD_OPT_GO (the protocol's numbers typed from proto.md).
struct Client {
    s: UnixStream,
    size: u64,
}

impl Client {
    fn connect(path: &PathBuf) -> Client {
        let mut s = UnixStream::connect(path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut hello = [0u8; 18];
        s.read_exact(&mut hello).unwrap();
        assert_eq!(&hello[..8], b"NBDMAGIC");
        assert_eq!(&hello[8..16], b"IHAVEOPT");
        assert_eq!(u16::from_be_bytes([hello[16], hello[17]]) & 1, 1, "fixed newstyle");
        s.write_all(&3u32.to_be_bytes()).unwrap(); // fixed newstyle, no zeroes
        // NBD_OPT_GO (7) for the default export, asking for block sizes (3).
        let mut opt = b"IHAVEOPT".to_vec();
        opt.extend_from_slice(&7u32.to_be_bytes());
        opt.extend_from_slice(&8u32.to_be_bytes());
        opt.extend_from_slice(&0u32.to_be_bytes());
        opt.extend_from_slice(&1u16.to_be_bytes());
        opt.extend_from_slice(&3u16.to_be_bytes());
        s.write_all(&opt).unwrap();
        let mut size = None;
        loop {
            let mut h = [0u8; 20];
            s.read_exact(&mut h).unwrap();
            assert_eq!(u64::from_be_bytes(h[..8].try_into().unwrap()), 0x3e889045565a9);
            let (kind, len) = (u32_at(&h, 12), u32_at(&h, 16) as usize);
            let mut d = vec![0u8; len];
            s.read_exact(&mut d).unwrap();
            match kind {
                1 => break, // NBD_REP_ACK
                3 if u16::from_be_bytes([d[0], d[1]]) == 0 => size = Some(u64::from_be_bytes(d[2..10].try_into().unwrap())),
                3 if u16::from_be_bytes([d[0], d[1]]) == 3 => assert_eq!((u32_at(&d, 2), u32_at(&d, 10)), (512, 1 << 20), "block sizes"),
                k => panic!("unexpected option reply {k:#x}"),
            }
        }
        Client { s, size: size.expect("NBD_INFO_EXPORT") }
    }

    fn send(&mut self, kind: u16, flags: u16, handle: u64, offset: u64, len: u32, data: &[u8]) {
        let mut m = 0x25609513u32.to_be_bytes().to_vec();
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&handle.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
    }

    /// (error, handle) of the next simple reply, and `data_len` bytes of data if it succeeded.
    fn reply(&mut self, data_len: usize) -> (u32, u64, Vec<u8>) {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).unwrap();
        assert_eq!(u32_at(&h, 0), 0x67446698, "simple reply magic");
        let (err, handle) = (u32_at(&h, 4), u64::from_be_bytes(h[8..].try_into().unwrap()));
        let mut d = vec![0u8; if err == 0 { data_len } else { 0 }];
        self.s.read_exact(&mut d).unwrap();
        (err, handle, d)
    }

    fn write(&mut self, offset: u64, data: &[u8], fua: bool) -> u32 {
        self.send(1, fua as u16, 7, offset, data.len() as u32, data);
        self.reply(0).0
    }

    fn read(&mut self, offset: u64, len: u32) -> (u32, Vec<u8>) {
        self.send(0, 0, 9, offset, len, &[]);
        let (e, h, d) = self.reply(len as usize);
        assert_eq!(h, 9);
        (e, d)
    }
}

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut r = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    (0..len).map(|_| r.gen()).collect()
}

#[test]
fn data_errors_flush_and_trim() {
    let server = start("data");
    let mut c = Client::connect(&server.path);
    assert_eq!(c.size, SIZE_BYTES);
    let a = pattern(1, 65536);
    let b = pattern(2, 4096);
    assert_eq!(c.write(1 << 20, &a, false), 0);
    assert_eq!(c.write((1 << 20) + 512, &b, true), 0, "FUA write");
    let mut expect = a.clone();
    expect[512..512 + 4096].copy_from_slice(&b);
    assert_eq!(c.read(1 << 20, 65536), (0, expect.clone()));
    assert_eq!(c.read(40 << 20, 8192), (0, vec![0u8; 8192]), "never written: zeros");
    // Out of range, too long, unknown command: an error each, and the connection goes on.
    assert_eq!(c.read(SIZE_BYTES - 512, 1024).0, 22, "read past the end: EINVAL");
    assert_eq!(c.write(SIZE_BYTES, &[0u8; 512], false), 28, "write past the end: ENOSPC");
    c.send(0, 0, 11, 0, 2 << 20, &[]);
    assert_eq!(c.reply(0).0, 75, "read longer than the maximum block size: EOVERFLOW");
    c.send(42, 0, 12, 0, 0, &[]);
    assert_eq!(c.reply(0).0, 22, "unknown command: EINVAL");
    c.send(3, 0, 13, 0, 0, &[]);
    assert_eq!(c.reply(0), (0, 13, vec![]), "FLUSH");
    c.send(4, 0, 14, (1 << 20) + 4096, 8192, &[]);
    assert_eq!(c.reply(0).0, 0, "TRIM");
    expect[4096..4096 + 8192].fill(0);
    assert_eq!(c.read(1 << 20, 65536), (0, expect));
    c.send(2, 0, 15, 0, 0, &[]); // NBD_CMD_DISC
    drop(c);
    let report = server.finish();
    // Reads and writes went through the drive (errors, FLUSH and TRIM do not): 2 writes + 3 reads.
    assert_eq!(report.result.counters.completed, 5);
}

#[test]
fn random_and_truncated_input_never_stops_the_server() {
    let server = start("fuzz");
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(23);
    let cases: u32 = std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64).min(2000);
    for case in 0..cases {
        let mut s = UnixStream::connect(&server.path).unwrap();
        let mut bytes: Vec<u8> = Vec::new();
        match case % 4 {
            // Garbage from the first byte.
            0 => bytes = (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect(),
            // A handshake cut short, or options with random numbers and lengths.
            1 | 2 => {
                bytes.extend_from_slice(&rng.gen_range(0u32..4).to_be_bytes());
                for _ in 0..rng.gen_range(0..4) {
                    bytes.extend_from_slice(b"IHAVEOPT");
                    bytes.extend_from_slice(&rng.gen_range(0u32..12).to_be_bytes());
                    let len = if rng.gen_bool(0.1) { rng.gen::<u32>() } else { rng.gen_range(0..40) };
                    bytes.extend_from_slice(&len.to_be_bytes());
                    bytes.extend((0..len.min(40)).map(|_| rng.gen::<u8>()));
                }
                if case % 4 == 2 {
                    bytes.truncate(rng.gen_range(0..bytes.len() + 1));
                }
            }
            // A good handshake, then random requests (valid magic), cut anywhere.
            _ => {
                drop(s);
                let mut c = Client::connect(&server.path);
                let mut req = Vec::new();
                for _ in 0..rng.gen_range(1..6) {
                    let kind: u16 = rng.gen_range(0..8);
                    let len: u32 = if rng.gen_bool(0.2) { rng.gen() } else { rng.gen_range(0..8192) };
                    let offset: u64 = if rng.gen_bool(0.3) { rng.gen() } else { rng.gen_range(0..SIZE_BYTES) };
                    req.extend_from_slice(&0x25609513u32.to_be_bytes());
                    req.extend_from_slice(&rng.gen::<u16>().to_be_bytes());
                    req.extend_from_slice(&kind.to_be_bytes());
                    req.extend_from_slice(&rng.gen::<u64>().to_be_bytes());
                    req.extend_from_slice(&offset.to_be_bytes());
                    req.extend_from_slice(&len.to_be_bytes());
                    if kind == 1 {
                        req.extend((0..len.min(8192)).map(|_| rng.gen::<u8>()));
                    }
                }
                req.truncate(rng.gen_range(1..req.len() + 1));
                let _ = c.s.write_all(&req);
                // Our side ends here: the server sees the request cut short; drain what it answers.
                let _ = c.s.shutdown(std::net::Shutdown::Write);
                c.s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let _ = std::io::copy(&mut c.s, &mut std::io::sink());
                continue;
            }
        }
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = std::io::copy(&mut s, &mut std::io::sink());
    }
    // Still serving, data intact.
    let mut c = Client::connect(&server.path);
    let a = pattern(5, 8192);
    assert_eq!(c.write(4096, &a, false), 0);
    assert_eq!(c.read(4096, 8192), (0, a));
    drop(c);
    server.finish();
}

#[test]
fn replies_come_at_the_simulated_completion_time() {
    let server = start("timing");
    let mut c = Client::connect(&server.path);
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    let mut wall_ns = Vec::new();
    for _ in 0..150 {
        let offset = rng.gen_range(0..SIZE_BYTES / 4096) * 4096;
        let t = Instant::now();
        assert_eq!(c.read(offset, 4096).0, 0);
        wall_ns.push(t.elapsed().as_nanos() as u64);
    }
    drop(c);
    let report = server.finish();
    let rec = report.result.records.expect("records");
    assert_eq!(rec.seq.len(), wall_ns.len());
    let sim_ns: Vec<u64> = (0..rec.seq.len()).map(|i| rec.done_ns[i] - rec.arrival_ns[i]).collect();
    // One request at a time, so record i is read i. A reply is never sent before its simulated completion.
    for (i, (&w, &s)) in wall_ns.iter().zip(&sim_ns).enumerate() {
        assert!(w >= s, "read {i}: replied after {w} ns, before its simulated response time {s} ns");
    }
    // And not much after: the mean lateness (with the client's own overhead) is a small part of a 4 KB random read.
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    let (w, s) = (mean(&wall_ns), mean(&sim_ns));
    assert!(s > 2e6, "a random 4 KB read on the Atlas 10K takes milliseconds, not {s} ns");
    assert!(w - s < 0.05 * s, "mean wall-clock latency {w} ns vs simulated {s} ns: replies late by {} ns on average", w - s);
}
