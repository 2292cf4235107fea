//! One client connection: a reader thread (handshake, then requests: checked,
//! write data stored, timed requests sent to the simulation thread) and a
//! writer thread (replies, each written when the simulation thread hands it
//! over, i.e. at its simulated completion time; lateness measured here).

use super::nbd::{self, Export, RequestHeader};
use super::{Msg, Op, Shared};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A client that takes no reply bytes for this long is dropped: a session's end waits for every
/// connection to write its replies, and one that never reads must not hold it.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// A connected socket, unix or TCP.
pub(crate) enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    pub(crate) fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }
    fn shut(&self, how: Shutdown) {
        let _ = match self {
            Stream::Unix(s) => s.shutdown(how),
            Stream::Tcp(s) => s.shutdown(how),
        };
    }
    pub(crate) fn shutdown(&self) {
        self.shut(Shutdown::Both);
    }
    /// No more requests: a blocked read returns the end of the stream; replies can still be written.
    pub(crate) fn shutdown_read(&self) {
        self.shut(Shutdown::Read);
    }
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tcp(s) => s.set_read_timeout(t),
        }
    }
    fn prepare(&self) -> io::Result<()> {
        match self {
            Stream::Unix(s) => {
                s.set_nonblocking(false)?;
                s.set_write_timeout(Some(WRITE_TIMEOUT))
            }
            Stream::Tcp(s) => {
                s.set_nonblocking(false)?;
                s.set_write_timeout(Some(WRITE_TIMEOUT))?;
                // Replies are timed: Nagle's delay would add to every one.
                s.set_nodelay(true)
            }
        }
    }
}

/// The handshake's side of a stream: reads fail with `TimedOut` once `until` has passed, so a
/// client that connects and never finishes negotiating frees its connection slot.
struct Until<'a> {
    s: &'a mut Stream,
    until: Instant,
}

impl Read for Until<'_> {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.s.set_read_timeout(Some(left))?;
        self.s.read(b)
    }
}

impl Write for Until<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.s.write(b)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.s.flush()
    }
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(b),
            Stream::Tcp(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(b),
            Stream::Tcp(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.flush(),
            Stream::Tcp(s) => s.flush(),
        }
    }
}

/// A reply for the writer thread to send.
pub(crate) struct Reply {
    pub handle: u64,
    pub error: u32,
    /// A successful read: the bytes to send (offset, length).
    pub read: Option<(u64, u32)>,
    /// When it is due (its simulated completion, in wall-clock time): the schedule.
    pub due: Option<Instant>,
    /// What the client is owed: its request's arrival plus the simulated response time. Lateness
    /// is measured against the later of the two (with catch-up the schedule may run behind the
    /// wall clock by a fixed lag after a stall, and that lag alone is no reply's lateness).
    pub owed: Option<Instant>,
    /// Sync the backing file first (FLUSH, FUA).
    pub sync: bool,
}

impl Reply {
    pub(crate) fn error(handle: u64, error: u32) -> Reply {
        Reply { handle, error, read: None, due: None, owed: None, sync: false }
    }
}

/// Serve connection `conn` until the client leaves or the server stops.
pub(crate) fn run(stream: Stream, conn: u32, export: Export, shared: Arc<Shared>, to_sim: Sender<Msg>, handshake_timeout: Duration) {
    let until = Instant::now() + handshake_timeout;
    let result = (|| -> io::Result<()> {
        stream.prepare()?;
        let mut rd = stream.try_clone()?;
        if !nbd::handshake(&mut Until { s: &mut rd, until }, &export)? {
            return Ok(());
        }
        rd.set_read_timeout(None)?;
        let (tx, rx) = mpsc::channel::<Reply>();
        let wr = stream.try_clone()?;
        let sh = shared.clone();
        let late_ns = Arc::new(AtomicU64::new(0));
        let late = late_ns.clone();
        let writer = std::thread::Builder::new().name(format!("nbd-writer-{conn}")).spawn(move || write_replies(wr, rx, &sh, &late))?;
        let r = read_requests(&mut rd, conn, &export, &shared, &to_sim, &tx, &late_ns);
        drop(tx);
        // The writer ends once every reply of this connection was sent (the simulation holds a sender per request in flight).
        let _ = writer.join();
        r
    })();
    let _ = result; // A client that vanished is not the server's error.
    stream.shutdown();
    shared.connections.fetch_sub(1, Ordering::SeqCst);
    shared.forget(conn);
}

fn read_requests(rd: &mut Stream, conn: u32, export: &Export, shared: &Shared, to_sim: &Sender<Msg>, tx: &Sender<Reply>, late_ns: &AtomicU64) -> io::Result<()> {
    let max = export.block_bytes.2;
    loop {
        let h: RequestHeader = nbd::read_request(rd)?;
        let mut arrived = Instant::now();
        if h.magic != nbd::REQUEST_MAGIC {
            // Framing is lost: the protocol's answer is to close this connection (others go on).
            shared.malformed.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let in_range = h.offset.checked_add(h.length as u64).is_some_and(|end| end <= export.size_bytes);
        let fua = h.flags & nbd::CMD_FLAG_FUA != 0;
        let bad = |e: u32| {
            shared.malformed.fetch_add(1, Ordering::Relaxed);
            let _ = tx.send(Reply::error(h.handle, e));
        };
        let op = match h.kind {
            nbd::CMD_DISC => return Ok(()),
            nbd::CMD_READ | nbd::CMD_WRITE if h.length > max => {
                if h.kind == nbd::CMD_WRITE {
                    // Read the payload away to stay in step with the client.
                    io::copy(&mut Read::by_ref(rd).take(h.length as u64), &mut io::sink())?;
                }
                bad(if h.kind == nbd::CMD_READ { nbd::EOVERFLOW } else { nbd::EINVAL });
                continue;
            }
            nbd::CMD_READ => {
                if !in_range {
                    bad(nbd::EINVAL);
                    continue;
                }
                Op::Read
            }
            nbd::CMD_WRITE => {
                let mut data = vec![0u8; h.length as usize];
                rd.read_exact(&mut data)?;
                arrived = Instant::now(); // a write has arrived once its data has
                if !in_range {
                    bad(nbd::ENOSPC);
                    continue;
                }
                // Stored before the drive's reply: whatever is acknowledged is kept even if the client leaves.
                if shared.store.write().unwrap().write(h.offset, &data).is_err() {
                    bad(nbd::EIO);
                    continue;
                }
                Op::Write
            }
            nbd::CMD_FLUSH => Op::Flush,
            nbd::CMD_TRIM => {
                if !in_range {
                    bad(nbd::EINVAL);
                    continue;
                }
                if shared.store.write().unwrap().zero(h.offset, h.length as usize).is_err() {
                    bad(nbd::EIO);
                    continue;
                }
                Op::Trim
            }
            _ => {
                bad(nbd::EINVAL);
                continue;
            }
        };
        let msg = Msg { conn, handle: h.handle, op, offset: h.offset, length: h.length, fua, reply: tx.clone(), arrived, backdate_ns: late_ns.swap(0, Ordering::Relaxed) };
        // Under the read lock: the simulation thread takes the write lock to stop, after which nothing is sent.
        let stopping = shared.stopping.read().unwrap();
        if *stopping || to_sim.send(msg).is_err() {
            let _ = tx.send(Reply::error(h.handle, nbd::ESHUTDOWN));
            return Ok(());
        }
    }
}

fn write_replies(mut wr: Stream, rx: Receiver<Reply>, shared: &Shared, late_ns: &AtomicU64) {
    let mut broken = false;
    for r in rx {
        if broken {
            continue; // drain: the simulation must still be able to hand replies over
        }
        if r.sync && shared.store.read().unwrap().sync().is_err() {
            broken = wr.write_all(&nbd::simple_reply_header(nbd::EIO, r.handle)).is_err();
            continue;
        }
        let mut msg = nbd::simple_reply_header(r.error, r.handle).to_vec();
        if let Some((offset, len)) = r.read {
            let at = msg.len();
            msg.resize(at + len as usize, 0);
            if shared.store.read().unwrap().read(offset, &mut msg[at..]).is_err() {
                msg = nbd::simple_reply_header(nbd::EIO, r.handle).to_vec();
            }
        }
        if let Some(due) = r.due {
            let now = Instant::now();
            let lag = now.saturating_duration_since(due);
            shared.late(now.saturating_duration_since(r.owed.map_or(due, |o| o.max(due))), lag);
            // Catch-up makes up for the lag behind the schedule.
            late_ns.store(lag.as_nanos() as u64, Ordering::Relaxed);
        }
        broken = wr.write_all(&msg).is_err();
    }
}
