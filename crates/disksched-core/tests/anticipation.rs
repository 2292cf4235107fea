//! rr (FreeBSD gs_rr) and anticipatory (Linux as-iosched) on hand-made
//! workloads: a tiny closed-loop driver with a disk of fixed service times,
//! so every expected figure is arithmetic on the workload's own numbers.
mod common;

use disksched_core::disk::{HeadState, Predictor};
use disksched_core::host::{ReqId, Request, RequestTable};
use disksched_core::sched::{self, SchedCtx, Scheduler};
use disksched_core::time::SimTime;

const MS: u64 = 1_000_000;

/// A closed client: `depth` requests outstanding, each issued `think_ns`
/// after the previous one completed. `jump_blocks` = 0: sequential; else
/// each request lands that far (times a varying factor) from the last.
#[derive(Clone)]
struct Client {
    flow: u32,
    start_lbn: u64,
    blocks: u32,
    think_ns: u64,
    depth: u32,
    is_write: bool,
    jump_blocks: u64,
    /// Service time of each of its requests, and of its first one.
    service_ns: u64,
    first_service_ns: u64,
}

fn reader(flow: u32, start_lbn: u64, think_ns: u64, service_ns: u64) -> Client {
    Client { flow, start_lbn, blocks: 256, think_ns, depth: 1, is_write: false, jump_blocks: 0, service_ns, first_service_ns: service_ns }
}

/// One dispatch: when, whose, which block, was it forced.
#[derive(Clone, Copy, Debug)]
struct Dispatched {
    at_ns: u64,
    flow: u32,
    #[allow(dead_code)]
    is_write: bool,
    #[allow(dead_code)]
    arrival_ns: u64,
}

struct Driver {
    reqs: RequestTable,
    pred: Predictor,
    seq: u64,
    clients: Vec<Client>,
    next_lbn: Vec<u64>,
    issued: Vec<u64>,
    /// (time, client index) of arrivals to come.
    arrivals: Vec<(u64, usize)>,
    log: Vec<Dispatched>,
}

impl Driver {
    fn new(clients: Vec<Client>) -> Driver {
        let next_lbn = clients.iter().map(|c| c.start_lbn).collect();
        let mut arrivals = Vec::new();
        for (i, c) in clients.iter().enumerate() {
            for _ in 0..c.depth {
                arrivals.push((0, i));
            }
        }
        let n = clients.len();
        Driver { reqs: RequestTable::default(), pred: Predictor::exact(common::atlas()), seq: 0, clients, next_lbn,
                 issued: vec![0; n], arrivals, log: Vec::new() }
    }

    fn ctx(&self, now: u64) -> SchedCtx<'_> {
        let t = SimTime(now);
        SchedCtx::standalone(&self.reqs, &self.pred, HeadState { time: t, ..Default::default() })
    }

    fn arrive(&mut self, s: &mut dyn Scheduler, now: u64, i: usize) {
        let c = self.clients[i].clone();
        let lbn = self.next_lbn[i];
        self.issued[i] += 1;
        // The next request: right after this one, or a jump that varies with the request count.
        // (Each client stays within 4M blocks of its start: the Atlas 10K holds 17.9M.)
        self.next_lbn[i] = if c.jump_blocks == 0 { c.start_lbn + (lbn - c.start_lbn + c.blocks as u64) % 4_000_000 } else {
            c.start_lbn + (lbn - c.start_lbn + c.jump_blocks * (1 + self.issued[i] % 7)) % 4_000_000
        };
        self.seq += 1;
        let target = self.pred.target(lbn);
        let id = self.reqs.insert(Request { seq: self.seq, client: c.flow, flow: c.flow, lbn, blocks: c.blocks,
            is_write: c.is_write, target, arrival: SimTime(now), ..Default::default() });
        let ctx = self.ctx(now);
        s.insert(id, &ctx);
    }

    /// Run until `end_ns`; the disk serves one request at a time.
    fn run(&mut self, s: &mut dyn Scheduler, end_ns: u64) {
        let mut busy: Option<(u64, ReqId, usize)> = None;
        let mut wake: Option<u64> = None;
        let mut served = vec![0u64; self.clients.len()];
        let mut now = 0;
        while now <= end_ns {
            // Completion first, then arrivals at this instant, then a dispatch.
            if let Some((t, id, i)) = busy.filter(|b| b.0 == now) {
                let ctx = self.ctx(t);
                s.complete(id, &ctx);
                self.reqs.remove(id);
                busy = None;
                self.arrivals.push((t + self.clients[i].think_ns, i));
            }
            self.arrivals.sort_unstable();
            while self.arrivals.first().is_some_and(|a| a.0 == now) {
                let (_, i) = self.arrivals.remove(0);
                self.arrive(s, now, i);
            }
            if busy.is_none() {
                let ctx = self.ctx(now);
                let mut got = s.dispatch(&ctx, false);
                wake = if got.is_none() { s.wake_at().map(|w| w.0) } else { None };
                if got.is_none() && wake.is_none() && !s.is_empty() {
                    got = s.dispatch(&ctx, true);
                }
                if let Some(id) = got {
                    let r = self.reqs.get(id);
                    let i = self.clients.iter().position(|c| c.flow == r.flow).unwrap();
                    self.log.push(Dispatched { at_ns: now, flow: r.flow, is_write: r.is_write, arrival_ns: r.arrival.0 });
                    let c = &self.clients[i];
                    let service = if served[i] == 0 { c.first_service_ns } else { c.service_ns };
                    served[i] += 1;
                    busy = Some((now + service, id, i));
                }
            }
            let next = [busy.map(|b| b.0), self.arrivals.iter().map(|a| a.0).min(), wake.map(|w| w.max(now + 1))]
                .into_iter().flatten().min();
            match next {
                Some(t) => now = t,
                None => break,
            }
        }
    }

    fn served(&self, flow: u32) -> usize {
        self.log.iter().filter(|d| d.flow == flow).count()
    }
}

fn counter(s: &dyn Scheduler, name: &str) -> u64 {
    s.counters().iter().find(|c| c.0 == name).unwrap().1
}

fn rr(settings: &[(&str, f64)]) -> Box<dyn Scheduler> {
    let settings: Vec<(String, f64)> = settings.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    sched::build("rr", &settings).unwrap()
}

/// A writer with 16 requests always outstanding, far from the readers: whenever rr does not wait, it takes the disk.
fn backlog(flow: u32) -> Client {
    Client { flow, start_lbn: 12_000_000, blocks: 256, think_ns: 0, depth: 16, is_write: true, jump_blocks: 0,
             service_ns: 2 * MS, first_service_ns: 2 * MS }
}

#[test]
fn rr_skips_anticipation_for_a_client_whose_think_time_exceeds_wait_ms() {
    // gs_rr's think time is the gap between a client's submissions while it is in service:
    // here service 2 ms + think 4 ms = 6 ms > wait_ms 5 for the slow client, 2 + 1 = 3 ms < 5 for the quick one.
    let run = |think_ms: u64, think_test: f64| {
        let mut s = rr(&[("wait_ms", 5.0), ("think_test", think_test)]);
        let mut d = Driver::new(vec![reader(1, 0, think_ms * MS, 2 * MS), backlog(2)]);
        d.run(s.as_mut(), 10_000 * MS);
        (counter(s.as_ref(), "wait_hits"), counter(s.as_ref(), "wait_skipped"), d.served(1))
    };
    let (hits, skipped, slow_served) = run(4, 1.0);
    // gs_rr samples from the 8th request on, and its g_savg mean (a sum decaying by 7/8
    // over a count that stops at 8) reads 6 ms x (1 - (7/8)^n): above 5 ms from n = 14 samples.
    assert!(hits <= 7 + 14, "slow client: hits {hits}");
    // Then each turn of the slow client is one request (about 100 turns of 102 ms in 10 s).
    assert!(skipped > 80, "slow client: skipped {skipped}");
    // Without the test, the same client would have been waited for (its 4 ms think is within 5 ms).
    let (hits_off, skipped_off, slow_served_off) = run(4, 0.0);
    assert!(hits_off > 500 && skipped_off == 0, "test off: hits {hits_off} skipped {skipped_off}");
    assert!(slow_served_off > 2 * slow_served, "{slow_served_off} vs {slow_served}");
    // The quick sequential reader keeps its anticipation.
    let (hits, skipped, _) = run(1, 1.0);
    assert!(hits > 1000 && skipped == 0, "quick client: hits {hits} skipped {skipped}");
}

#[test]
fn rr_skips_anticipation_for_a_client_that_seeks_far() {
    // Same timing as a quick sequential reader (2 ms service, 1 ms think), but each
    // request lands at least 256 blocks = 128 KiB from the last: over gs_rr's 8192 bytes.
    let run = |jump: u64, seek_dist_bytes: f64| {
        let mut s = rr(&[("wait_ms", 5.0), ("seek_dist_bytes", seek_dist_bytes)]);
        let mut c = reader(1, 0, MS, 2 * MS);
        c.jump_blocks = jump;
        let mut d = Driver::new(vec![c, backlog(2)]);
        d.run(s.as_mut(), 5_000 * MS);
        (counter(s.as_ref(), "wait_hits"), counter(s.as_ref(), "wait_skipped"))
    };
    // 64 KiB samples (gs_rr's cap) read above 8192 bytes from the first valid mean (8 samples from the 8th request).
    let (hits, skipped) = run(256, 8192.0);
    assert!(hits <= 7 + 8 && skipped > 40, "far: hits {hits} skipped {skipped}");
    let (hits, skipped) = run(256, 1e12);
    assert!(hits > 500 && skipped == 0, "far, test off: hits {hits} skipped {skipped}");
    let (hits, skipped) = run(0, 8192.0);
    assert!(hits > 500 && skipped == 0, "sequential: hits {hits} skipped {skipped}");
}

#[test]
fn rr_slice_starts_at_the_first_completion() {
    // Two backlogged clients; A's first request takes 30 ms (the drive finishing
    // earlier work), the rest 1 ms; quantum 10 ms. gs_rr starts A's clock when that
    // first request completes (t = 30 ms): A's requests dispatched at 0, 30, 31, ..., 40
    // (12 of them; the one at 40 ms finds the slice over). From dispatch, the slice
    // would end at 10 ms: A gets its request at 0 and the one at 30 ms only.
    for (from_completion, want) in [(1.0, 12), (0.0, 2)] {
        let mut s = rr(&[("quantum_ms", 10.0), ("wait_ms", 0.0), ("slice_from_completion", from_completion)]);
        let mut a = reader(1, 0, 0, MS);
        a.depth = 64;
        a.first_service_ns = 30 * MS;
        let mut b = reader(2, 10_000_000, 0, MS);
        b.depth = 64;
        let mut d = Driver::new(vec![a, b]);
        d.run(s.as_mut(), 100 * MS);
        let first_run = d.log.iter().take_while(|x| x.flow == 1).count();
        assert_eq!(first_run, want, "slice_from_completion = {from_completion}");
        if from_completion == 1.0 {
            let last = d.log[first_run - 1].at_ns;
            assert_eq!(last, 40 * MS);
        }
    }
}

#[test]
fn rr_slice_start_when_idle_bounds_a_backlogged_client_by_quantum_kb_alone() {
    // As above, but every request 1 ms and A always backlogged (64 queued, 128 KB
    // each). Later gs_rr.c starts A's clock at its first completion (1 ms; the
    // slice ends at 11 ms): 12 requests, dispatched at 0..11 ms.
    // FreeBSD 8.x's starts it only at a completion that finds A's queue empty while
    // anticipating, which never happens: A keeps the disk for quantum_kb,
    // 8192 / 128 = 64 requests.
    for (when_idle, want) in [(0.0, 12), (1.0, 64)] {
        let mut s = rr(&[("quantum_ms", 10.0), ("quantum_kb", 8192.0), ("wait_ms", 5.0), ("slice_start_when_idle", when_idle)]);
        let mut a = reader(1, 0, 0, MS);
        a.depth = 64;
        let mut b = reader(2, 10_000_000, 0, MS);
        b.depth = 64;
        let mut d = Driver::new(vec![a, b]);
        d.run(s.as_mut(), 200 * MS);
        let first_run = d.log.iter().take_while(|x| x.flow == 1).count();
        assert_eq!(first_run, want, "slice_start_when_idle = {when_idle}");
    }
}

#[test]
fn rr_history_settings_are_declared_with_freebsd_defaults() {
    let info = sched::lookup("rr").unwrap();
    let get = |n: &str| info.tunables.iter().find(|t| t.name == n).map(|t| (t.min, t.default, t.max)).unwrap();
    // gs_rr.c: .queue_depth = { 1, 1, 50 }, .wait_ms = { 1, 10, 30 } (0 kept as "off"),
    // .quantum_ms = { 1, 100, 500 }, .quantum_kb = { 16, 8192, 65536 }; seek threshold 8192 bytes.
    assert_eq!(get("queue_depth"), (1.0, 1.0, 50.0));
    assert_eq!(get("wait_ms").1..=get("wait_ms").2, 10.0..=30.0);
    assert_eq!(get("quantum_ms"), (1.0, 100.0, 500.0));
    assert_eq!(get("quantum_kb"), (16.0, 8192.0, 65536.0));
    assert_eq!(get("seek_dist_bytes").1, 8192.0);
    assert_eq!(get("think_test").1, 1.0);
    assert_eq!(get("slice_from_completion").1, 1.0);
    assert_eq!(get("slice_start_when_idle").1, 0.0);
}

fn antic(settings: &[(&str, f64)]) -> Box<dyn Scheduler> {
    let settings: Vec<(String, f64)> = settings.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    sched::build("anticipatory", &settings).unwrap()
}

#[test]
fn anticipatory_serves_a_read_past_its_expiry_next() {
    // A read behind the heads (lbn 50) waits while C-LOOK keeps finding reads above;
    // one dispatch every 10 ms. It arrived at 0, so its deadline is 125 ms: the FIFO
    // (looked at once per 125 ms, as in Linux) finds it expired at the dispatch at 130 ms.
    let mut d = Driver::new(vec![]);
    let mut s = antic(&[("antic_expire_ms", 0.0)]);
    let add = |d: &mut Driver, s: &mut Box<dyn Scheduler>, lbn: u64, t: u64| {
        d.seq += 1;
        let target = d.pred.target(lbn);
        let id = d.reqs.insert(Request { seq: d.seq, client: d.seq as u32, flow: d.seq as u32, lbn, blocks: 8, target,
                                         arrival: SimTime(t), ..Default::default() });
        let ctx = d.ctx(t);
        s.insert(id, &ctx);
        id
    };
    add(&mut d, &mut s, 100, 0);
    let first = s.dispatch(&d.ctx(0), false).unwrap();
    s.complete(first, &d.ctx(MS));
    let behind = add(&mut d, &mut s, 50, 0);
    let mut served_at = None;
    for k in 1..40u64 {
        let t = k * 10 * MS;
        add(&mut d, &mut s, 1000 * k, t);
        let id = s.dispatch(&d.ctx(t), false).unwrap();
        s.complete(id, &d.ctx(t + MS));
        if id == behind {
            served_at = Some(t);
            break;
        }
        assert!(d.reqs.get(id).lbn > 100, "C-LOOK order before the deadline");
    }
    assert_eq!(served_at, Some(130 * MS));
    assert_eq!(counter(s.as_ref(), "fifo_expired"), 1);
}

#[test]
fn anticipatory_alternates_read_and_write_batches() {
    // A reader with 4 reads and a writer with 16 writes always outstanding, 2 ms each.
    let mut r = reader(1, 0, 0, 2 * MS);
    r.depth = 4;
    let mut d = Driver::new(vec![r, backlog(2)]);
    let mut s = antic(&[]);
    d.run(s.as_mut(), 10_000 * MS);
    // Runs of one direction, in dispatch order.
    let mut runs: Vec<(bool, usize)> = Vec::new();
    for x in &d.log {
        match runs.last_mut() {
            Some((w, n)) if *w == x.is_write => *n += 1,
            _ => runs.push((x.is_write, 1)),
        }
    }
    // A read batch's 500 ms run from its first completion (2 ms after it starts), and it
    // ends at the first dispatch past that: reads at 0, 2, ..., 502 ms, i.e. 252 of them.
    // (The first and the last run are cut short by the run's start and end.)
    for &(w, n) in runs[1..runs.len() - 1].iter().filter(|r| !r.0) {
        assert!(!w && n == 252, "read batch of {n}: {runs:?}");
    }
    // The first write batch is Linux's initial count, write_batch_expire / 10 = 12 writes;
    // later ones adapt but never pass the batch's 125 ms (63 writes of 2 ms).
    let writes: Vec<usize> = runs.iter().filter(|r| r.0).map(|r| r.1).collect();
    assert_eq!(writes[0], 12, "{writes:?}");
    assert!(writes.iter().all(|&n| n <= 63), "{writes:?}");
    assert!(writes.iter().skip(1).any(|&n| n > 12), "the count grows when batches end early: {writes:?}");
    // So neither direction waits long: 10 s hold at least 10 / (0.504 + 0.126) read-write pairs.
    assert!(writes.len() >= 15, "{} write batches", writes.len());
}

#[test]
fn anticipatory_does_not_let_one_quick_reader_hold_the_disk() {
    // Two quick sequential readers (2 ms service, 1 ms think, 6 ms anticipation): each
    // completion is followed by the same reader's next read, so without the read FIFO
    // the first would keep the disk. Its deadline (125 ms, FIFO looked at once per
    // 125 ms) bounds every wait by 2 x 125 ms plus one service time.
    let a = reader(1, 0, MS, 2 * MS);
    let b = reader(2, 8_000_000, MS, 2 * MS);
    let mut d = Driver::new(vec![a, b]);
    let mut s = antic(&[]);
    d.run(s.as_mut(), 10_000 * MS);
    let worst_wait = d.log.iter().map(|x| x.at_ns - x.arrival_ns).max().unwrap();
    assert!(worst_wait <= 252 * MS, "worst wait {} ms", worst_wait / MS);
    let (na, nb) = (d.served(1), d.served(2));
    assert!(na.min(nb) * 10 > 3 * (na + nb), "{na} vs {nb}");
    assert!(counter(s.as_ref(), "antic_hits") > 1000, "anticipation still pays within a reader's turn");
    // Without expiry (a deadline longer than the run) one reader keeps the disk.
    let mut d = Driver::new(vec![reader(1, 0, MS, 2 * MS), reader(2, 8_000_000, MS, 2 * MS)]);
    let mut s = antic(&[("read_expire_ms", 600_000.0)]);
    d.run(s.as_mut(), 10_000 * MS);
    assert!(d.served(1).min(d.served(2)) <= 2, "{} vs {}", d.served(1), d.served(2));
}
