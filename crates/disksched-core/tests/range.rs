//! Range requests: acceptable starts, placement, HRS and ECS, claims, the
//! allocator, and the paper's physical observations (Anand et al. 2008).
mod common;

use disksched_core::disk::{builtin, DiskModel, HeadState, Predictor, Target};
use disksched_core::host::range::{best_start, Claims, RangeSpec, Targets};
use disksched_core::host::Request;
use disksched_core::metrics::Records;
use disksched_core::time::SimTime;
use disksched_core::{RunResult, SimConfig, Simulation};
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::sync::Arc;

fn model(name: &str) -> Arc<DiskModel> {
    Arc::new(DiskModel::new(builtin::resolve(name, None).unwrap()).unwrap())
}

/// Random spans (some around Atlas zone 0's slipped slot 55017) and alignment.
fn random_spec(rng: &mut impl Rng, cap: u64) -> (RangeSpec, u32) {
    let blocks = [1u32, 8, 16][rng.gen_range(0..3)];
    let align = [1u32, 2, 8][rng.gen_range(0..3)];
    let spans = (0..rng.gen_range(1..4)).map(|_| {
        let lo = if rng.gen_bool(0.3) { 54_800 + rng.gen_range(0..400) } else { rng.gen_range(0..cap - 5000) };
        (lo, lo + rng.gen_range(1..3000))
    }).collect();
    (RangeSpec { spans, align_blocks: align }, blocks)
}

#[test]
fn targets_are_exactly_the_aligned_starts_that_fit_and_sit_where_the_layout_says() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    for disk in ["atlas10k", "hp_c2247a"] {
        let m = model(disk);
        let p = Predictor::exact(m.clone());
        for _ in 0..60 {
            let (spec, blocks) = random_spec(&mut rng, m.layout.capacity());
            // Brute force: every block of every span, kept if aligned and the request fits in that span.
            let want: BTreeSet<u64> = spec.spans.iter()
                .flat_map(|&(lo, hi)| (lo..hi).filter(move |&s| s % spec.align_blocks as u64 == 0 && s + blocks as u64 <= hi))
                .collect();
            let Some(t) = Targets::new(&spec, blocks, &m.layout) else {
                assert!(want.is_empty());
                continue;
            };
            let got: Vec<(u64, _)> = t.starts().collect();
            assert_eq!(got.len() as u64, t.count());
            assert_eq!(got.iter().map(|g| g.0).collect::<BTreeSet<_>>(), want, "{disk} {spec:?}");
            assert_eq!(t.first(), *want.first().unwrap());
            for (lbn, target) in got {
                assert_eq!(target, Target { lbn: Target::ANY_LBN, ..p.target(lbn) }, "{disk} lbn {lbn}");
                assert!(t.contains(lbn));
            }
            assert!(!t.contains(*want.last().unwrap() + 1) || want.contains(&(want.last().unwrap() + 1)));
        }
    }
}

#[test]
fn the_best_start_is_the_least_positioning_time_over_every_start_claims_honoured() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(8);
    for disk in ["atlas10k", "hp_c2247a"] {
        let m = model(disk);
        let p = Predictor::exact(m.clone());
        for trial in 0..200 {
            let (spec, blocks) = random_spec(&mut rng, m.layout.capacity());
            let Some(t) = Targets::new(&spec, blocks, &m.layout) else { continue };
            let is_write = rng.gen_bool(0.5);
            let r = Request { seq: 5, blocks, is_write, arrival: SimTime(1_000), ..Default::default() };
            let head = HeadState {
                cylinder: rng.gen_range(0..m.layout.cylinders()),
                head: rng.gen_range(0..m.layout.surfaces()),
                time: SimTime(rng.gen_range(0..1_000_000_000)),
                last_was_write: rng.gen_bool(0.5),
                next_lbn: None,
            };
            // Half the trials: concurrent writes (arrived later? no: released after r arrived) claim some starts.
            let mut claims = Claims::new();
            if trial % 2 == 1 {
                for (i, (lbn, _)) in t.starts().enumerate() {
                    if i % 3 != 2 {
                        claims.claim(100 + i as u64, lbn, 1);
                    }
                }
            }
            let brute = t.starts().map(|(lbn, target)| {
                let pos = p.positioning_at(&head, &target, is_write, blocks).total_ns();
                (claims.blocks(&r, lbn), pos, lbn)
            }).min().unwrap();
            let c = best_start(&r, &t, &head, p.phase_at(head.time), &p, &claims, None).unwrap();
            assert_eq!((c.claimed, c.positioning_ns, c.lbn), brute, "{disk} trial {trial}");
        }
    }
}

fn run(toml: &str) -> RunResult {
    let cfg: SimConfig = toml::from_str(toml).unwrap();
    Simulation::new(&cfg).unwrap().run(&mut |_, _| true).unwrap()
}

#[allow(clippy::too_many_arguments)]
fn range_writes(disk: &str, sched: &str, depth: u32, size: u32, range: u32, targets: u32, span: &str, extra: &str) -> String {
    format!(r#"
        seed = 3
        [disk]
        model = "{disk}"
        scheduler = "{sched}"
        [host]
        queue_threshold = {depth}
        [workload]
        kind = "range-writes"
        outstanding = {depth}
        size_blocks = {size}
        range_blocks = {range}
        targets = {targets}
        span = "{span}"
        {extra}
        [run]
        requests = 3000
        warmup_requests = 300
        records = true
    "#)
}

fn same_records(a: &Records, b: &Records) -> bool {
    a.lbn == b.lbn && a.done_ns == b.done_ns && a.seq == b.seq && a.rotation_ns == b.rotation_ns
}

#[test]
fn hrs_and_ecs_make_the_same_choices() {
    for (depth, range, targets, span, extra) in [
        (8, 4096, 0, "group", ""), (16, 4096, 40, "group", "read_fraction = 0.3"), (4, 100, 0, "disk", ""),
        (16, 512, 0, "group", "size_blocks = 8\nalign_blocks = 8\ngroup_blocks = 512"),
    ] {
        let cfg = |s| range_writes("hp_c2247a", s, depth, 1, range, targets, span, extra).replace("size_blocks = 1\n", "");
        let (h, e) = (run(&cfg("hrs")), run(&cfg("ecs")));
        assert!(same_records(h.records.as_ref().unwrap(), e.records.as_ref().unwrap()), "depth {depth} range {range}");
        assert_eq!(h.counters.range_placed, 3000);
    }
}

#[test]
fn a_one_target_range_write_is_an_ordinary_write() {
    let ordinary = run(&range_writes("atlas10k", "sptf", 8, 8, 64, 1, "disk", "as_range = false"));
    for sched in ["sptf", "hrs", "ecs"] {
        let ranged = run(&range_writes("atlas10k", sched, 8, 8, 64, 1, "disk", ""));
        assert_eq!(ranged.counters.range_placed, 3000);
        assert!(same_records(ordinary.records.as_ref().unwrap(), ranged.records.as_ref().unwrap()), "{sched}");
    }
    assert_eq!(ordinary.counters.range_placed, 0);
}

/// Pairs of range writes outstanding at the same time whose blocks overlap.
fn concurrent_overlaps(rec: &Records) -> usize {
    let n = rec.len();
    let mut count = 0;
    for i in 0..n {
        for j in i + 1..n {
            let concurrent = rec.arrival_ns[i] < rec.done_ns[j] && rec.arrival_ns[j] < rec.done_ns[i];
            let overlap = rec.lbn[i] < rec.lbn[j] + rec.blocks[j] as u64 && rec.lbn[j] < rec.lbn[i] + rec.blocks[i] as u64;
            count += (concurrent && overlap) as usize;
        }
    }
    count
}

#[test]
fn placements_are_aligned_targets_and_concurrent_writes_never_overlap() {
    // 64 slots of 8 blocks in one 512-block group, 16 writes outstanding, each offered the whole group.
    for sched in ["hrs", "fcfs", "clook"] {
        let extra = "align_blocks = 8\ngroup_blocks = 512\ngroup = 100";
        let r = run(&range_writes("hp_c2247a", sched, 16, 8, 512, 0, "group", extra));
        let rec = r.records.as_ref().unwrap();
        assert!(rec.lbn.iter().all(|&l| l % 8 == 0 && (51_200..=51_200 + 512 - 8).contains(&l)), "{sched}");
        assert_eq!(r.counters.range_overlaps, 0, "{sched}");
        assert_eq!(concurrent_overlaps(rec), 0, "{sched}");
    }
    // Only 4 slots for 16 writes: overlaps cannot be avoided, and are counted.
    let r = run(&range_writes("hp_c2247a", "hrs", 16, 8, 32, 0, "group", "align_blocks = 8\ngroup_blocks = 32"));
    assert!(r.counters.range_overlaps > 0);
    assert!(concurrent_overlaps(r.records.as_ref().unwrap()) > 0);
}

#[test]
fn the_allocator_never_hands_out_a_slot_twice() {
    let r = run(r#"
        seed = 4
        [disk]
        model = "atlas10k"
        scheduler = "hrs"
        [host]
        queue_threshold = 32
        [workload]
        kind = "range-alloc"
        outstanding = 32
        size_blocks = 8
        group_blocks = 4096
        [run]
        requests = 20000
        records = true
    "#);
    let rec = r.records.unwrap();
    let distinct: BTreeSet<u64> = rec.lbn.iter().copied().collect();
    assert_eq!(distinct.len(), 20000, "a block was written twice");
    assert!(rec.lbn.iter().all(|l| l % 8 == 0));
    // Groups fill in order: 512 slots each, left once no more than 32 remain.
    let groups = rec.lbn.iter().map(|l| l / 4096).max().unwrap() + 1;
    assert!((20000u64.div_ceil(512)..=20000u64.div_ceil(512 - 32)).contains(&groups), "{groups} groups");
}

#[test]
fn the_papers_observations_hold_on_the_hp_c2247a() {
    let m = |sched, depth, range, span| run(&range_writes("hp_c2247a", sched, depth, 1, range, 0, span, "")).summary;
    let half_rev_ms = 60_000.0 / 5400.0 / 2.0;
    // Traditional random writes wait half a revolution on average (plus the write data's bus transfer).
    let one = m("sptf", 1, 1, "disk");
    assert!((one.mean_rotation_ms / half_rev_ms - 1.0).abs() < 0.06, "{}", one.mean_rotation_ms);
    // A queue depth of two is no better than one: the second request is never there to choose.
    let two = m("sptf", 2, 1, "disk");
    assert!(((two.mean_seek_ms + two.mean_rotation_ms) / (one.mean_seek_ms + one.mean_rotation_ms) - 1.0).abs() < 0.02);
    // 64 outstanding reduce positioning but do not remove it.
    let deep = m("sptf", 64, 1, "disk");
    assert!(deep.mean_seek_ms + deep.mean_rotation_ms < 0.7 * (one.mean_seek_ms + one.mean_rotation_ms));
    assert!(deep.mean_rotation_ms > 0.1 * half_rev_ms && deep.mean_seek_ms > 2.0);
    // Track-sized ranges remove nearly all rotational latency.
    let track = m("hrs", 1, 100, "disk");
    assert!(track.mean_rotation_ms < 0.1 * one.mean_rotation_ms, "{}", track.mean_rotation_ms);
    // Group-sized ranges also remove most of the seek: what is left is the
    // drive's minimum positioning delay (`Minimum seek delay = 0.6` in its .diskspecs).
    let group_one = m("sptf", 1, 1, "group");
    let group = m("hrs", 1, 4096, "group");
    assert!(group.mean_seek_ms - 0.6 < 0.1 * (group_one.mean_seek_ms - 0.6), "{} vs {}", group.mean_seek_ms, group_one.mean_seek_ms);
    assert!(group.mean_rotation_ms < 0.1 * group_one.mean_rotation_ms);
}

#[test]
fn bad_range_workloads_are_one_line_errors() {
    for (extra, what) in [("targets = 200", "workload.targets"), ("size_blocks = 200", "workload.range_blocks"),
                          ("align_blocks = 3", "workload.align_blocks")] {
        let toml = range_writes("hp_c2247a", "hrs", 4, 1, 100, 0, "disk", extra).replace("size_blocks = 1\n", "")
            .replace("targets = 0\n", "");
        let cfg: SimConfig = toml::from_str(&toml).unwrap();
        let e = Simulation::new(&cfg).err().expect("rejected").to_string();
        assert!(e.contains(what) && !e.contains('\n'), "{e}");
    }
}

#[test]
fn wider_targets_give_the_scheduler_more_choice() {
    // `target_blocks = size_blocks` is the default (one start per target): the same draws, the same records.
    let base = range_writes("hp_c2247a", "hrs", 1, 1, 4096, 4, "group", "");
    let same = range_writes("hp_c2247a", "hrs", 1, 1, 4096, 4, "group", "target_blocks = 1");
    assert!(same_records(run(&base).records.as_ref().unwrap(), run(&same).records.as_ref().unwrap()));
    // Four targets of 100 blocks hold 400 starts where four single blocks hold 4: the wait for the platter
    // (at least a tenth of a 5400 RPM revolution with four single-block choices) at least halves.
    let rev_ms = 60_000.0 / 5400.0;
    let single = run(&base).summary.mean_rotation_ms;
    let wide = run(&range_writes("hp_c2247a", "hrs", 1, 1, 4096, 4, "group", "target_blocks = 100")).summary.mean_rotation_ms;
    assert!(single > rev_ms / 10.0, "{single}");
    assert!(wide < single / 2.0, "{wide} vs {single}");
    for (extra, what) in [("target_blocks = 5000", "workload.target_blocks"), ("size_blocks = 8\ntarget_blocks = 4", "workload.target_blocks")] {
        let toml = range_writes("hp_c2247a", "hrs", 4, 1, 4096, 4, "group", extra);
        let toml = if extra.contains("size_blocks") { toml.replace("size_blocks = 1\n", "") } else { toml };
        let cfg: SimConfig = toml::from_str(&toml).unwrap();
        let e = Simulation::new(&cfg).err().expect("rejected").to_string();
        assert!(e.contains(what) && !e.contains('\n'), "{e}");
    }
}
