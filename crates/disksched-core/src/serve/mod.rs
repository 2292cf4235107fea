//! `disksched serve`: the simulated drive as a network block device, in
//! real time. Clients (fio's nbd engine, nbdcopy, qemu-img, ...) send
//! requests; each enters the simulation's host queue when it arrives, goes
//! through the configured schedulers and the drive, and its reply is sent
//! when its simulated completion time comes in wall-clock time.
//!
//! Threads: an acceptor; per connection a reader (handshake, requests,
//! write data stored at once) and a writer (replies); and the caller's
//! thread, the only one that owns the `Simulation`. Simulated time is
//! wall-clock time since the server started: a request arriving at wall
//! time `w` is submitted at simulated `w - origin` (never before the
//! simulation's clock), and a reply due at simulated `t` is sent at
//! `origin + t`. Every due time is absolute, so a reply that a loaded
//! machine sends late delays no later one (lateness does not accumulate).
//!
//! A stop lets no new client or request in (a request read after it gets
//! ESHUTDOWN), answers those already received at their simulated times,
//! and closes the connections once their replies are written.
//!
//! FLUSH replies when every write the drive has reported is on the media
//! (the end of its last write-back destage); a FUA write replies when its
//! own destage ends. TRIM zeroes the data and replies at once (the modelled
//! drives predate TRIM: it never reaches the drive).

mod conn;
pub mod nbd;
mod stats;
pub mod store;

use crate::error::{config_err, Error, Result};
use crate::host::Class;
use crate::sim::{RunResult, Simulation};
use crate::time::SimTime;
use crate::workload::IoSpec;
use conn::{Reply, Stream};
use hdrhistogram::Histogram;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use stats::{depths, histogram, live_stats, write_stats, Live, HIST_MAX_NS};
use store::Store;

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Listen {
    /// A unix socket at this path.
    Unix(PathBuf),
    /// A TCP address.
    Tcp(SocketAddr),
}

impl Listen {
    /// `unix:PATH` or `tcp:HOST:PORT`; a non-loopback TCP address needs `allow_remote`.
    pub fn parse(s: &str, allow_remote: bool) -> Result<Listen> {
        let what = || format!("--listen {s}");
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err(config_err(what(), "expected unix:PATH with a socket path"));
            }
            return Ok(Listen::Unix(PathBuf::from(p)));
        }
        let Some(a) = s.strip_prefix("tcp:") else {
            return Err(config_err(what(), "expected unix:PATH or tcp:127.0.0.1:PORT"));
        };
        let addr = a.to_socket_addrs().ok().and_then(|mut it| it.next())
            .ok_or_else(|| config_err(what(), "expected tcp:HOST:PORT with a resolvable host and a port, e.g. tcp:127.0.0.1:10809"))?;
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(config_err(what(), format!("{} is not a loopback address; the server has no authentication, so serving other hosts needs --allow-remote", addr.ip())));
        }
        Ok(Listen::Tcp(addr))
    }
}

/// `request_kb`-style limits and the rest of `disksched serve`'s options.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Where to listen.
    pub listen: Listen,
    /// Export size, bytes (default: the whole disk or array).
    pub size_bytes: Option<u64>,
    /// The data's backing file; `None`: sparse in memory.
    pub backing: Option<PathBuf>,
    /// Rewrite live statistics (JSON) into this file each second.
    pub stats_path: Option<PathBuf>,
    /// Most clients connected at once; more are closed on accept.
    pub max_connections: u32,
    /// Largest read or write, bytes (advertised as the maximum block size).
    pub max_request_bytes: u32,
    /// The export's name (the empty name also selects it).
    pub export_name: String,
    /// A client that has not finished the handshake this long after it connected is dropped
    /// (its connection slot freed for others).
    pub handshake_timeout: Duration,
    /// A request that follows a late reply on its connection enters the simulation as if that
    /// reply had been on time: at most that lateness before it arrived, never before the
    /// simulation's clock. A closed-loop client's next request waits for the reply, so without
    /// this every delay of a loaded machine would slow the simulated workload; with it, a reply
    /// may come up to that lateness sooner than its request's arrival plus its simulated response.
    pub catch_up: bool,
}

/// `max_connections`: default and bounds.
pub const MAX_CONNECTIONS: (u32, u32, u32) = (1, 16, 1024);
/// `handshake_timeout_s`: default and bounds, seconds.
pub const HANDSHAKE_TIMEOUT_S: (f64, f64, f64) = (0.1, 5.0, 600.0);
/// `max_request_kb`: default and bounds, KB (32 MB: the most one drive command can carry, 65,536 blocks of 512 bytes).
pub const MAX_REQUEST_KB: (u32, u32, u32) = (4, 32 * 1024, 32 * 1024);

/// A request from a connection for the simulation thread.
pub(crate) struct Msg {
    conn: u32,
    handle: u64,
    op: Op,
    offset: u64,
    length: u32,
    fua: bool,
    reply: Sender<Reply>,
    /// When the reader had the whole request: its arrival (the simulation thread may wake later).
    arrived: Instant,
    /// How late the connection's last reply was sent (taken by this request): with `catch_up`, it
    /// enters the simulation that much earlier, as if that reply had been on time.
    backdate_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Flush,
    Trim,
}

/// What the threads share.
pub(crate) struct Shared {
    store: RwLock<Store>,
    lateness: Mutex<Histogram<u64>>,
    /// Wall-clock send time minus the simulated completion time (the machine's scheduling delay).
    schedule_lag: Mutex<Histogram<u64>>,
    connections: AtomicU32,
    /// Requests answered with an error, or connections closed for a bad magic.
    malformed: AtomicU64,
    /// The session is ending: no new clients; a request read from now on is answered ESHUTDOWN.
    /// Readers hand requests to the simulation under its read lock, so once the simulation thread
    /// has set it (write lock) nothing more arrives.
    pub(crate) stopping: RwLock<bool>,
    /// Every open connection's socket, to shut them at the end.
    open: Mutex<HashMap<u32, Stream>>,
}

impl Shared {
    fn late(&self, late: Duration, lag: Duration) {
        let ns = |d: Duration| (d.as_nanos() as u64).clamp(1, HIST_MAX_NS);
        let _ = self.lateness.lock().unwrap().record(ns(late));
        let _ = self.schedule_lag.lock().unwrap().record(ns(lag));
    }
    fn forget(&self, conn: u32) {
        self.open.lock().unwrap().remove(&conn);
    }
}

/// A request in the simulation.
struct InFlight {
    handle: u64,
    op: Op,
    offset: u64,
    length: u32,
    fua: bool,
    reply: Sender<Reply>,
    /// When the request reached the server (wall clock).
    arrived: Instant,
}

/// A reply due later than the event that produced it (FLUSH, FUA: the destage's end).
struct Timed {
    due: SimTime,
    reply: Sender<Reply>,
    r: Reply,
}

/// What `serve` returns: the run's result (as `Simulation::into_result`)
/// and the session's own figures (JSON: lateness, connections, ...).
pub struct ServeReport {
    /// The simulation's result.
    pub result: RunResult,
    /// The last statistics written (as `--stats`), at exit.
    pub stats: serde_json::Value,
}

/// Serve `sim` until `stop()` says so (it is called about ten times a
/// second). `on_ready(address)` is called once the socket listens.
pub fn serve(mut sim: Simulation, opts: &ServeOptions, on_ready: &mut dyn FnMut(&str), stop: &mut dyn FnMut() -> bool) -> Result<ServeReport> {
    let (capacity_blocks, sector_bytes) = sim.capacity_blocks();
    let sector = sector_bytes as u64;
    let capacity_bytes = capacity_blocks * sector;
    let size_bytes = opts.size_bytes.unwrap_or(capacity_bytes);
    if size_bytes == 0 || size_bytes > capacity_bytes || size_bytes % sector != 0 {
        return Err(config_err(format!("--size {size_bytes}"), format!(
            "expected a whole number of {sector}-byte blocks, at most the drive's {capacity_bytes} bytes")));
    }
    let check = |what: &str, v: u32, (lo, _, hi): (u32, u32, u32)| match (lo..=hi).contains(&v) {
        true => Ok(()),
        false => Err(config_err(format!("{what} {v}"), format!("expected {lo}..{hi}"))),
    };
    check("--max-connections", opts.max_connections, MAX_CONNECTIONS)?;
    check("--max-request-kb", opts.max_request_bytes / 1024, MAX_REQUEST_KB)?;
    let (lo, _, hi) = HANDSHAKE_TIMEOUT_S;
    if !(lo..=hi).contains(&opts.handshake_timeout.as_secs_f64()) {
        return Err(config_err(format!("--handshake-timeout-s {}", opts.handshake_timeout.as_secs_f64()), format!("expected {lo}..{hi}")));
    }
    if opts.max_request_bytes % sector_bytes != 0 {
        return Err(config_err(format!("--max-request-kb {}", opts.max_request_bytes / 1024), format!("expected a multiple of the {sector}-byte block")));
    }
    let store = match &opts.backing {
        None => Store::memory(),
        Some(p) => Store::file(p, size_bytes)?,
    };
    let export = nbd::Export {
        name: opts.export_name.clone(),
        size_bytes,
        flags: nbd::TFLAG_HAS_FLAGS | nbd::TFLAG_SEND_FLUSH | nbd::TFLAG_SEND_FUA | nbd::TFLAG_SEND_TRIM | nbd::TFLAG_ROTATIONAL | nbd::TFLAG_CAN_MULTI_CONN,
        block_bytes: (sector_bytes, 4096.max(sector_bytes), opts.max_request_bytes),
    };
    let shared = Arc::new(Shared {
        store: RwLock::new(store),
        lateness: Mutex::new(histogram()),
        schedule_lag: Mutex::new(histogram()),
        connections: AtomicU32::new(0),
        malformed: AtomicU64::new(0),
        stopping: RwLock::new(false),
        open: Mutex::new(HashMap::new()),
    });
    let (to_sim, from_conns) = mpsc::channel::<Msg>();
    let (acceptor, address) = listen(opts, &export, &shared, &to_sim)?;
    drop(to_sim);
    on_ready(&address);

    // Sleeps end within a few µs of their time, not the default 50 µs timer slack: replies are due to the µs.
    let slack_ns = timer_slack(1_000);
    let origin = Instant::now();
    let sim_at = |i: Instant| SimTime(i.saturating_duration_since(origin).as_nanos() as u64);
    let wall_at = |t: SimTime| origin + Duration::from_nanos(t.0);
    let mut inflight: HashMap<u64, InFlight> = HashMap::new();
    let mut next_logical: u64 = 0;
    let mut timed: Vec<Timed> = Vec::new();
    let mut live = Live::new();
    let tick = Duration::from_millis(100);
    let mut next_check = origin + tick;
    let mut next_stats = origin + Duration::from_secs(1);
    let mut window_start = origin;

    // Hand over the completions the simulation produced up to its clock.
    let complete = |sim: &mut Simulation, done: Vec<crate::host::Request>, inflight: &mut HashMap<u64, InFlight>, timed: &mut Vec<Timed>, live: &mut Live| {
        for r in done {
            let Some(f) = inflight.remove(&r.logical) else { continue };
            let response_ns = r.service.done.0.saturating_sub(r.arrival.0);
            live.completed(f.length as u64, response_ns);
            let mut due = r.service.done;
            if f.fua {
                due = due.max(sim.write_back_end());
            }
            // Owed to the client: its arrival plus the simulated response (later than the schedule when the
            // request entered after it arrived; earlier when catch-up entered it before).
            let owed = f.arrived + Duration::from_nanos(due.0.saturating_sub(r.arrival.0));
            let reply = Reply { handle: f.handle, error: 0, read: (f.op == Op::Read).then_some((f.offset, f.length)), due: Some(wall_at(due)), owed: Some(owed), sync: f.fua };
            if due > sim.now() {
                timed.push(Timed { due, reply: f.reply, r: reply });
            } else {
                let _ = f.reply.send(reply);
            }
        }
    };
    let release = |now: SimTime, timed: &mut Vec<Timed>| {
        timed.retain_mut(|t| {
            if t.due > now {
                return true;
            }
            let r = std::mem::replace(&mut t.r, Reply::error(0, 0));
            let _ = t.reply.send(r);
            false
        });
    };

    let mut draining = false;
    let mut stats_failing = false;
    loop {
        let now = Instant::now();
        if now >= next_check {
            if !draining && stop() {
                // Stop: no new clients or requests (the acceptor shuts every connection's reading side); those
                // already handed over complete in real time and their replies are sent; then the session ends.
                draining = true;
                *shared.stopping.write().unwrap() = true;
            }
            next_check = now + tick;
        }
        if now >= next_stats {
            let stats = live_stats(&mut live, &shared, inflight.len() as u64, &depths(&sim), now.duration_since(window_start), origin.elapsed(), false);
            if let Some(p) = &opts.stats_path {
                write_stats(p, &stats, &mut stats_failing);
            }
            window_start = now;
            next_stats += Duration::from_secs(1);
            if next_stats <= now {
                next_stats = now + Duration::from_secs(1);
            }
        }
        // Handle the events due by now, the clock left at the last of them (not at now): a request
        // arriving next may still enter at its own, earlier, time (see `catch_up`).
        let t = sim_at(Instant::now());
        while let Some(e) = sim.next_event_time().filter(|&e| e <= t) {
            let done = sim.run_until(e)?;
            complete(&mut sim, done, &mut inflight, &mut timed, &mut live);
            live.sample_depths(&sim);
        }
        release(t.max(sim.now()), &mut timed);
        let mut wake = next_check.min(next_stats);
        if let Some(e) = sim.next_event_time() {
            wake = wake.min(wall_at(e));
        }
        if let Some(d) = timed.iter().map(|t| t.due).min() {
            wake = wake.min(wall_at(d));
        }
        let mut batch: Vec<Msg> = from_conns.try_iter().collect();
        if batch.is_empty() {
            // Once stopping is set and the channel is empty, nothing more arrives.
            if draining && inflight.is_empty() && timed.is_empty() {
                break;
            }
            match from_conns.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Ok(m) => batch.push(m),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    // Every reader has ended (draining): only the timers are left.
                    std::thread::sleep(wake.saturating_duration_since(Instant::now()));
                    continue;
                }
            }
            batch.extend(from_conns.try_iter());
        }
        for m in batch {
            // Each request enters at its own arrival (when its reader had it, unless the simulation is
            // already past that): events up to then happen first.
            let t = SimTime(sim_at(m.arrived).0.saturating_sub(if opts.catch_up { m.backdate_ns } else { 0 })).max(sim.now());
            let done = sim.run_until(t)?;
            complete(&mut sim, done, &mut inflight, &mut timed, &mut live);
            release(t, &mut timed);
            admit(&mut sim, m, sector, &mut next_logical, &mut inflight, &mut timed, &mut live, &wall_at)?;
            live.window_max_outstanding = live.window_max_outstanding.max(inflight.len() as u64);
            live.sample_depths(&sim);
        }
    }

    // Every reply is handed over; the acceptor ends once each connection has written its replies.
    let _ = acceptor.join();
    // What the drive still does (destaging, background work) needs no reply: run it out at once.
    while let Some(e) = sim.next_event_time() {
        sim.run_until(e)?;
    }
    let stats = live_stats(&mut live, &shared, 0, &depths(&sim), window_start.elapsed(), origin.elapsed(), true);
    if let Some(p) = &opts.stats_path {
        write_stats(p, &stats, &mut stats_failing);
    }
    if let Listen::Unix(p) = &opts.listen {
        let _ = std::fs::remove_file(p);
    }
    if let Some(ns) = slack_ns {
        timer_slack(ns);
    }
    let result = sim.into_result()?;
    Ok(ServeReport { result, stats })
}

/// Set this thread's timer slack (Linux `prctl(PR_SET_TIMERSLACK)`), returning the previous one.
#[cfg(target_os = "linux")]
fn timer_slack(ns: u64) -> Option<u64> {
    extern "C" {
        fn prctl(option: i32, ...) -> i32;
    }
    const PR_SET_TIMERSLACK: i32 = 29;
    const PR_GET_TIMERSLACK: i32 = 30;
    // SAFETY: both options take plain integers and touch only the calling thread's timer slack.
    unsafe {
        let old = prctl(PR_GET_TIMERSLACK, 0u64, 0u64, 0u64, 0u64);
        (prctl(PR_SET_TIMERSLACK, ns, 0u64, 0u64, 0u64) == 0 && old > 0).then_some(old as u64)
    }
}

#[cfg(not(target_os = "linux"))]
fn timer_slack(_ns: u64) -> Option<u64> {
    None
}

/// Submit a request to the simulation now (or answer it at once: TRIM, FLUSH with nothing to destage).
#[allow(clippy::too_many_arguments)]
fn admit(sim: &mut Simulation, m: Msg, sector: u64, next_logical: &mut u64, inflight: &mut HashMap<u64, InFlight>,
         timed: &mut Vec<Timed>, live: &mut Live, wall_at: &dyn Fn(SimTime) -> Instant) -> Result<()> {
    match m.op {
        Op::Trim => {
            live.trims += 1;
            let _ = m.reply.send(Reply { handle: m.handle, error: 0, read: None, due: None, owed: None, sync: false });
        }
        Op::Flush => {
            live.flushes += 1;
            let due = sim.write_back_end();
            let reply = Reply { handle: m.handle, error: 0, read: None, due: Some(wall_at(due)), owed: None, sync: true };
            match due > sim.now() {
                true => timed.push(Timed { due, reply: m.reply, r: reply }),
                false => {
                    let _ = m.reply.send(reply);
                }
            }
        }
        Op::Read | Op::Write if m.length == 0 => {
            let _ = m.reply.send(Reply { handle: m.handle, error: 0, read: None, due: None, owed: None, sync: false });
        }
        Op::Read | Op::Write => {
            let lbn = m.offset / sector;
            let end = (m.offset + m.length as u64).div_ceil(sector);
            let is_write = m.op == Op::Write;
            if is_write {
                live.writes += 1;
            } else {
                live.reads += 1;
            }
            let io = IoSpec { lbn, blocks: (end - lbn) as u32, is_write, class: Class::BestEffort, deadline: None, range: None, flow: Some(m.conn) };
            sim.submit(io)?;
            inflight.insert(*next_logical, InFlight { handle: m.handle, op: m.op, offset: m.offset, length: m.length, fua: m.fua && is_write, reply: m.reply, arrived: m.arrived });
            *next_logical += 1;
        }
    }
    Ok(())
}

/// Bind the socket and start the acceptor thread; returns it and the address as the CLI prints it.
fn listen(opts: &ServeOptions, export: &nbd::Export, shared: &Arc<Shared>, to_sim: &Sender<Msg>) -> Result<(std::thread::JoinHandle<()>, String)> {
    enum L {
        Unix(UnixListener),
        Tcp(TcpListener),
    }
    let (l, address) = match &opts.listen {
        Listen::Unix(p) => {
            let io = |e: std::io::Error| Error::File { path: p.display().to_string(), msg: format!("cannot listen: {e}") };
            // A socket file left by a server that died is replaced; a live server's is not.
            if p.exists() {
                if std::os::unix::net::UnixStream::connect(p).is_ok() {
                    return Err(Error::File { path: p.display().to_string(), msg: "a server is already listening there".into() });
                }
                use std::os::unix::fs::FileTypeExt;
                match std::fs::metadata(p) {
                    Ok(m) if m.file_type().is_socket() => std::fs::remove_file(p).map_err(io)?,
                    _ => return Err(Error::File { path: p.display().to_string(), msg: "exists and is not a socket; expected a free path for the unix socket".into() }),
                }
            }
            let l = UnixListener::bind(p).map_err(io)?;
            l.set_nonblocking(true).map_err(io)?;
            (L::Unix(l), format!("unix:{}", p.display()))
        }
        Listen::Tcp(a) => {
            let io = |e: std::io::Error| config_err(format!("--listen tcp:{a}"), format!("cannot listen: {e}"));
            let l = TcpListener::bind(a).map_err(io)?;
            l.set_nonblocking(true).map_err(io)?;
            let bound = l.local_addr().map_err(io)?;
            (L::Tcp(l), format!("tcp:{bound}"))
        }
    };
    let shared = shared.clone();
    let export = export.clone();
    let to_sim = to_sim.clone();
    let (max, handshake_timeout) = (opts.max_connections, opts.handshake_timeout);
    let h = std::thread::Builder::new().name("nbd-acceptor".into()).spawn(move || {
        let mut next_conn: u32 = 0;
        let mut conns = Vec::new();
        while !*shared.stopping.read().unwrap() {
            let accepted = match &l {
                L::Unix(l) => l.accept().map(|(s, _)| Stream::Unix(s)),
                L::Tcp(l) => l.accept().map(|(s, _)| Stream::Tcp(s)),
            };
            let s = match accepted {
                Ok(s) => s,
                Err(_) => {
                    // Non-blocking: nothing waiting (or a transient error); look again soon.
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            if shared.connections.load(Ordering::SeqCst) >= max {
                s.shutdown();
                continue;
            }
            shared.connections.fetch_add(1, Ordering::SeqCst);
            let id = next_conn;
            next_conn = next_conn.wrapping_add(1);
            if let Ok(c) = s.try_clone() {
                shared.open.lock().unwrap().insert(id, c);
            }
            let (sh, ex, tx) = (shared.clone(), export.clone(), to_sim.clone());
            match std::thread::Builder::new().name(format!("nbd-conn-{id}")).spawn(move || conn::run(s, id, ex, sh, tx, handshake_timeout)) {
                Ok(j) => conns.push(j),
                Err(_) => {
                    shared.connections.fetch_sub(1, Ordering::SeqCst);
                    shared.forget(id);
                }
            }
            conns.retain(|j: &std::thread::JoinHandle<()>| !j.is_finished());
        }
        // Every connection accepted is in `open` by now: end its reading (a reader blocked on the
        // socket sees its end), then wait for each to write its last reply (bounded by the write timeout).
        drop((l, to_sim));
        for s in shared.open.lock().unwrap().values() {
            s.shutdown_read();
        }
        for j in conns {
            let _ = j.join();
        }
    }).map_err(|e| config_err("serve", format!("cannot start the acceptor thread: {e}")))?;
    Ok((h, address))
}
