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
        SchedCtx::standalone(&self.reqs, &self.pred, head)
    }
}

#[test]
fn sptf_picks_the_least_positioning_time_of_all_pending() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    for depth in [1usize, 2, 16, 128, 1024] {
        let mut b = Bench::new();
        let ids: Vec<ReqId> = (0..depth).map(|_| b.add(rng.gen_range(0..17_000_000), rng.gen_bool(0.3))).collect();
        let mut s = sched::build("sptf", &[]).unwrap();
        let head = HeadState { cylinder: rng.gen_range(0..10042), head: rng.gen_range(0..6), time: SimTime(rng.gen_range(0..1_000_000_000)), last_was_write: false, next_lbn: None };
        for &id in &ids {
            s.insert(id, &b.ctx(head));
        }
        let mut pending = ids.clone();
        let mut h = head;
        while let Some(id) = s.dispatch(&b.ctx(h), true) {
            // Brute force over everything still pending.
            let cost = |i: &ReqId| {
                let r = b.reqs.get(*i);
                (b.pred.positioning_at(&h, &r.target, r.is_write, r.blocks).total_ns(), r.seq)
            };
            let best = pending.iter().min_by_key(|i| cost(i)).copied().unwrap();
            assert_eq!(cost(&id), cost(&best), "depth {depth}");
            pending.retain(|&i| i != id);
            let r = b.reqs.get(id);
            h = HeadState { cylinder: r.target.cylinder, head: r.target.head, time: SimTime(h.time.0 + 1_000_000), ..Default::default() };
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

fn add_full(b: &mut Bench, client: u32, lbn: u64, is_write: bool, arrival_ms: u64, deadline_ms: Option<u64>) -> ReqId {
    b.seq += 1;
    let target = b.pred.target(lbn);
    b.reqs.insert(Request {
        seq: b.seq, client, lbn, blocks: 8, is_write, target,
        arrival: SimTime(arrival_ms * 1_000_000),
        deadline: deadline_ms.map(|d| SimTime(d * 1_000_000)),
        ..Default::default()
    })
}

fn drain(b: &Bench, s: &mut Box<dyn sched::Scheduler>, now_ms: u64) -> Vec<u64> {
    let head = HeadState { time: SimTime(now_ms * 1_000_000), ..Default::default() };
    std::iter::from_fn(|| s.dispatch(&b.ctx(head), true)).map(|id| b.reqs.get(id).lbn).collect()
}

#[test]
fn look_reverses_at_the_last_request() {
    let mut b = Bench::new();
    let mut s = sched::build("look", &[]).unwrap();
    let first = b.add(5_000_000, false);
    s.insert(first, &b.ctx(HeadState::default()));
    assert_eq!(s.dispatch(&b.ctx(HeadState::default()), true), Some(first));
    for l in [100u64, 9_000_000, 2_000_000, 7_000_000] {
        let id = b.add(l, false);
        s.insert(id, &b.ctx(HeadState::default()));
    }
    assert_eq!(drain(&b, &mut s, 0), vec![7_000_000, 9_000_000, 2_000_000, 100]);
}

#[test]
fn edf_orders_by_deadline_and_defaults_the_rest() {
    let mut b = Bench::new();
    let mut s = sched::build("edf", &[("default_deadline_ms".into(), 50.0)]).unwrap();
    for (lbn, arr, dl) in [(1u64, 0u64, Some(300u64)), (2, 0, None), (3, 10, Some(20)), (4, 100, None)] {
        let id = add_full(&mut b, 0, lbn * 1000, false, arr, dl);
        s.insert(id, &b.ctx(HeadState::default()));
    }
    // Deadlines: 300, 0+50, 20, 100+50.
    assert_eq!(drain(&b, &mut s, 0), vec![3000, 2000, 4000, 1000]);
}

#[test]
fn scan_edf_sweeps_within_a_deadline_window() {
    let mut b = Bench::new();
    let mut s = sched::build("scan_edf", &[("granularity_ms".into(), 100.0)]).unwrap();
    // Window 0 (deadlines 10..90 ms): LBNs 900, 100, 500 -> swept ascending; window 1 after.
    for (lbn, dl) in [(900u64, 10u64), (100, 90), (500, 50), (50, 150)] {
        let id = add_full(&mut b, 0, lbn, false, 0, Some(dl));
        s.insert(id, &b.ctx(HeadState::default()));
    }
    assert_eq!(drain(&b, &mut s, 0), vec![100, 500, 900, 50]);
}

#[test]
fn vscan_zero_is_sstf_and_one_is_look() {
    let lbns = [8_000_000u64, 8_150_000, 8_600_000, 7_900_000, 2_000_000];
    let order = |r: f64| {
        let mut b = Bench::new();
        let mut s = sched::build("vscan", &[("r".into(), r)]).unwrap();
        for &l in &lbns {
            let id = b.add(l, false);
            s.insert(id, &b.ctx(HeadState::default()));
        }
        let mut head = HeadState { cylinder: b.pred.target(8_030_000).cylinder, ..Default::default() };
        let mut out = vec![];
        while let Some(id) = s.dispatch(&b.ctx(head), true) {
            out.push(b.reqs.get(id).lbn);
            head.cylinder = b.reqs.get(id).target.cylinder;
        }
        out
    };
    // Sweeping upward from 8.03M: LOOK finishes the sweep before turning.
    assert_eq!(order(1.0), vec![8_150_000, 8_600_000, 8_000_000, 7_900_000, 2_000_000]);
    // SSTF always takes the nearest: 8.0M (30k away), 7.9M (100k), 8.15M (250k), 8.6M, 2.0M.
    assert_eq!(order(0.0), vec![8_000_000, 7_900_000, 8_150_000, 8_600_000, 2_000_000]);
}

fn mq_next(b: &Bench, s: &mut Box<dyn sched::Scheduler>, ms: u64) -> (u64, bool) {
    let t = SimTime(ms * 1_000_000);
    let ctx = SchedCtx::standalone(&b.reqs, &b.pred, HeadState { time: t, ..Default::default() });
    let id = s.dispatch(&ctx, true).unwrap();
    (b.reqs.get(id).lbn, b.reqs.get(id).is_write)
}

fn mq_insert(b: &mut Bench, s: &mut Box<dyn sched::Scheduler>, lbn: u64, is_write: bool, ms: u64) {
    let id = add_full(b, 0, lbn, is_write, ms, None);
    let t = SimTime(ms * 1_000_000);
    s.insert(id, &SchedCtx::standalone(&b.reqs, &b.pred, HeadState { time: t, ..Default::default() }));
}

#[test]
fn mq_deadline_batches_in_sector_order_and_lets_starved_writes_in() {
    let mut b = Bench::new();
    let mut s = sched::build("mq_deadline", &[("fifo_batch".into(), 2.0), ("writes_starved".into(), 1.0)]).unwrap();
    for (l, w) in [(500u64, false), (100, false), (300, false), (900, false), (700, true), (200, true)] {
        mq_insert(&mut b, &mut s, l, w, 0);
    }
    let order: Vec<_> = (0..6).map(|_| mq_next(&b, &mut s, 1)).collect();
    // Read batch from the FIFO head (500) on in sector order (900); one read
    // batch has passed the writes (writes_starved = 1), so a write batch from
    // its FIFO head (700), which has nothing above it; then reads restart from
    // their FIFO head (100, then 300); then the last write.
    assert_eq!(order, vec![(500, false), (900, false), (700, true), (100, false), (300, false), (200, true)]);
}

#[test]
fn mq_deadline_jumps_to_an_expired_fifo_head() {
    for (now_ms, want) in [(3u64, 150u64), (600, 200)] {
        let mut b = Bench::new();
        let mut s = sched::build("mq_deadline", &[("fifo_batch".into(), 1.0), ("read_expire_ms".into(), 500.0)]).unwrap();
        for l in [900u64, 100, 200] {
            mq_insert(&mut b, &mut s, l, false, 0);
        }
        assert_eq!(mq_next(&b, &mut s, 1).0, 900);
        assert_eq!(mq_next(&b, &mut s, 2).0, 100); // nothing above 908: FIFO head
        mq_insert(&mut b, &mut s, 150, false, 2);
        // 150 is next in sector order; but once 200 (arrived at 0) has expired at 500 ms, it goes first.
        assert_eq!(mq_next(&b, &mut s, now_ms).0, want);
    }
}

#[test]
fn sptf_sw_takes_the_smallest_seek_within_the_window() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(21);
    for window_pct in [0.0, 20.0, 60.0, 200.0] {
        let mut b = Bench::new();
        let ids: Vec<ReqId> = (0..64).map(|_| b.add(rng.gen_range(0..17_000_000), false)).collect();
        let mut s = sched::build("sptf_sw", &[("window_pct".into(), window_pct)]).unwrap();
        let head = HeadState { cylinder: rng.gen_range(0..10042), head: 0, time: SimTime(rng.gen_range(0..1_000_000_000)), last_was_write: false, next_lbn: None };
        for &id in &ids {
            s.insert(id, &b.ctx(head));
        }
        let id = s.dispatch(&b.ctx(head), true).unwrap();
        let pos = |i: ReqId| b.pred.positioning_at(&head, &b.reqs.get(i).target, false, b.reqs.get(i).blocks);
        let shortest = ids.iter().map(|&i| pos(i).total_ns()).min().unwrap();
        let limit = (shortest as f64 * (1.0 + window_pct / 100.0)) as u64;
        let best_seek = ids.iter().filter(|&&i| pos(i).total_ns() <= limit).map(|&i| pos(i).seek_ns).min().unwrap();
        assert!(pos(id).total_ns() <= limit);
        assert_eq!(pos(id).seek_ns, best_seek, "window {window_pct}%");
    }
}

#[test]
fn asptf_spans_sptf_to_fcfs() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
    let mut b = Bench::new();
    let ids: Vec<ReqId> = (0..40).map(|i| add_full(&mut b, 0, rng.gen_range(0..17_000_000), false, i, None)).collect();
    let head = HeadState { cylinder: 3000, head: 0, time: SimTime(100_000_000), ..Default::default() };
    let pick = |name: &str, w: f64| {
        let mut s = sched::build(name, &[("aging_weight".into(), w)].into_iter().filter(|_| name == "asptf").collect::<Vec<_>>()).unwrap();
        for &id in &ids {
            s.insert(id, &b.ctx(head));
        }
        s.dispatch(&b.ctx(head), true).unwrap()
    };
    assert_eq!(pick("asptf", 0.0), pick("sptf", 0.0));
    assert_eq!(pick("asptf", 100.0), ids[0], "huge aging weight: the oldest first");
}

#[test]
fn bsptf_serves_a_batch_before_later_arrivals() {
    let mut b = Bench::new();
    let mut s = sched::build("bsptf", &[]).unwrap();
    let head = HeadState { cylinder: 0, ..Default::default() };
    let far: Vec<ReqId> = [16_000_000u64, 15_000_000].iter().map(|&l| b.add(l, false)).collect();
    for &id in &far {
        s.insert(id, &b.ctx(head));
    }
    let first = s.dispatch(&b.ctx(head), true).unwrap();
    // A request right under the heads arrives after the batch started: it waits.
    let near = b.add(0, false);
    s.insert(near, &b.ctx(head));
    let second = s.dispatch(&b.ctx(head), true).unwrap();
    assert!(far.contains(&first) && far.contains(&second) && first != second);
    assert_eq!(s.dispatch(&b.ctx(head), true), Some(near));
}

#[test]
fn asptf_pruned_search_matches_brute_force() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(44);
    for (depth, weight) in [(64usize, 0.01), (512, 0.01), (512, 0.5), (256, 3.0)] {
        let mut b = Bench::new();
        let ids: Vec<ReqId> = (0..depth).map(|_| {
            let arrival = rng.gen_range(0..400u64);
            add_full(&mut b, 0, rng.gen_range(0..17_000_000), rng.gen_bool(0.3), arrival, None)
        }).collect();
        let head = HeadState { cylinder: rng.gen_range(0..10042), head: 1, time: SimTime(500_000_000), last_was_write: false, next_lbn: None };
        let mut s = sched::build("asptf", &[("aging_weight".into(), weight)]).unwrap();
        for &id in &ids {
            s.insert(id, &b.ctx(head));
        }
        let got = s.dispatch(&b.ctx(head), true).unwrap();
        let cost = |i: ReqId| {
            let r = b.reqs.get(i);
            let pos = b.pred.positioning_at(&head, &r.target, r.is_write, r.blocks).total_ns() as f64;
            (pos - weight * (head.time.0 - r.arrival.0) as f64, r.seq)
        };
        let want = ids.iter().copied().min_by(|x, y| cost(*x).partial_cmp(&cost(*y)).unwrap()).unwrap();
        assert_eq!(got, want, "depth {depth} weight {weight}");
    }
}

#[test]
fn scan_and_cscan_keep_look_orders_but_sweep_to_the_edge() {
    let last = common::atlas().layout.cylinders() - 1;
    for (name, twin) in [("scan", "look"), ("cscan", "clook")] {
        let mut b = Bench::new();
        let mut s = sched::build(name, &[]).unwrap();
        let mut t = sched::build(twin, &[]).unwrap();
        let head = HeadState::default();
        // One sweep up from the first cylinder, then a request behind the head.
        for lbn in [9_000_000u64, 12_000_000, 3_000_000, 1_000_000, 15_000_000] {
            let id = b.add(lbn, false);
            s.insert(id, &b.ctx(head));
            t.insert(id, &b.ctx(head));
        }
        let (mut order, mut travels) = (vec![], vec![]);
        while let Some(id) = s.dispatch(&b.ctx(head), true) {
            assert_eq!(t.dispatch(&b.ctx(head), true), Some(id), "{name} dispatches in {twin}'s order");
            order.push(b.reqs.get(id).lbn);
            travels.push(s.travel_first());
        }
        assert_eq!(order, vec![1_000_000, 3_000_000, 9_000_000, 12_000_000, 15_000_000]);
        assert!(travels.iter().all(|t| t.cylinders().is_empty()), "{name}: no turn in a single upward sweep");
        // New requests behind the head: SCAN turns at the last cylinder; C-SCAN goes there and back to 0.
        let id = b.add(5_000_000, false);
        s.insert(id, &b.ctx(head));
        assert_eq!(s.dispatch(&b.ctx(head), true), Some(id));
        assert_eq!(s.travel_first().cylinders().to_vec(), if name == "scan" { vec![last] } else { vec![last, 0] });
    }
}
