//! Each scheduler's defining behaviour, on hand-built queues.
mod common;

use disksched_core::disk::{HeadState, Predictor};
use disksched_core::host::{ReqId, Request, RequestTable};
use disksched_core::sched::{self, SchedCtx};
use disksched_core::time::SimTime;
use rand::{Rng, SeedableRng};

struct Bench {
    reqs: RequestTable,
    pred: Predictor,
    seq: u64,
}

impl Bench {
    fn new() -> Bench {
        Bench { reqs: RequestTable::default(), pred: Predictor::exact(common::atlas()), seq: 0 }
    }
    fn add(&mut self, lbn: u64, is_write: bool) -> ReqId {
        self.seq += 1;
        let target = self.pred.target(lbn);
        self.reqs.insert(Request { seq: self.seq, lbn, blocks: 8, is_write, target, ..Default::default() })
    }
    fn ctx(&self, head: HeadState) -> SchedCtx<'_> {
        SchedCtx { now: head.time, reqs: &self.reqs, predictor: &self.pred, head }
    }
}

#[test]
fn sptf_picks_the_least_positioning_time_of_all_pending() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    for depth in [1usize, 2, 16, 128, 1024] {
        let mut b = Bench::new();
        let ids: Vec<ReqId> = (0..depth).map(|_| b.add(rng.gen_range(0..17_000_000), rng.gen_bool(0.3))).collect();
        let mut s = sched::build("sptf", &[]).unwrap();
        let head = HeadState { cylinder: rng.gen_range(0..10042), head: rng.gen_range(0..6), time: SimTime(rng.gen_range(0..1_000_000_000)) };
        for &id in &ids {
            s.insert(id, &b.ctx(head));
        }
        let mut pending = ids.clone();
        let mut h = head;
        while let Some(id) = s.dispatch(&b.ctx(h), true) {
            // Brute force over everything still pending.
            let cost = |i: &ReqId| {
                let r = b.reqs.get(*i);
                (b.pred.positioning_at(&h, &r.target, r.is_write).total_ns(), r.seq)
            };
            let best = pending.iter().min_by_key(|i| cost(i)).copied().unwrap();
            assert_eq!(cost(&id), cost(&best), "depth {depth}");
            pending.retain(|&i| i != id);
            let r = b.reqs.get(id);
            h = HeadState { cylinder: r.target.cylinder, head: r.target.head, time: SimTime(h.time.0 + 1_000_000) };
        }
        assert!(pending.is_empty());
    }
}

#[test]
fn clook_sweeps_upward_and_wraps_once() {
    let mut b = Bench::new();
    let lbns = [5_000_000u64, 100, 9_000_000, 2_000_000, 7_000_000, 50];
    let ids: Vec<_> = lbns.iter().map(|&l| b.add(l, false)).collect();
    let mut s = sched::build("clook", &[]).unwrap();
    let head = HeadState::default();
    // Start mid-disk: dispatch one at 5,000,000 first by inserting it alone.
    s.insert(ids[0], &b.ctx(head));
    assert_eq!(s.dispatch(&b.ctx(head), true), Some(ids[0]));
    for &id in &ids[1..] {
        s.insert(id, &b.ctx(head));
    }
    let order: Vec<u64> = std::iter::from_fn(|| s.dispatch(&b.ctx(head), true)).map(|id| b.reqs.get(id).lbn).collect();
    assert_eq!(order, vec![7_000_000, 9_000_000, 50, 100, 2_000_000]);
}

#[test]
fn sstf_takes_the_nearest_cylinder_each_time() {
    let mut b = Bench::new();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
    let ids: Vec<_> = (0..50).map(|_| b.add(rng.gen_range(0..17_000_000), false)).collect();
    let mut s = sched::build("sstf", &[]).unwrap();
    let mut head = HeadState { cylinder: 5000, ..Default::default() };
    for &id in &ids {
        s.insert(id, &b.ctx(head));
    }
    let mut pending = ids.clone();
    while let Some(id) = s.dispatch(&b.ctx(head), true) {
        let dist = |i: &ReqId| b.reqs.get(*i).target.cylinder.abs_diff(head.cylinder);
        let nearest = pending.iter().map(dist).min().unwrap();
        assert_eq!(dist(&id), nearest);
        pending.retain(|&i| i != id);
        head.cylinder = b.reqs.get(id).target.cylinder;
    }
}

#[test]
fn fcfs_keeps_arrival_order() {
    let mut b = Bench::new();
    let ids: Vec<_> = [9u64, 1, 5, 3].iter().map(|&l| b.add(l * 1_000_000, false)).collect();
    let mut s = sched::build("fifo", &[]).unwrap(); // alias
    assert_eq!(s.name(), "fcfs");
    for &id in &ids {
        s.insert(id, &b.ctx(HeadState::default()));
    }
    let order: Vec<_> = std::iter::from_fn(|| s.dispatch(&b.ctx(HeadState::default()), true)).collect();
    assert_eq!(order, ids);
}
