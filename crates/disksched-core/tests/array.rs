//! Several disks behind one controller: address mapping, splitting, the
//! controller's one logical queue, and trace devices onto disks.
mod common;

use disksched_core::host::array::{Array, ArrayLayout};
use disksched_core::{RunResult, SimConfig, Simulation};
use rand::{Rng, SeedableRng};

#[test]
fn stripe_and_concat_map_every_block_to_one_place_and_back() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
    for (layout, disks, kb) in [(ArrayLayout::Stripe, 4, 64.0), (ArrayLayout::Stripe, 3, 4.0), (ArrayLayout::Concat, 4, 64.0)] {
        let a = Array::new(disks, layout, kb, 1_000_003, 512).unwrap();
        let unit = (kb * 2.0) as u64;
        for _ in 0..20_000 {
            let lbn = rng.gen_range(0..a.capacity());
            let (d, local) = a.locate(lbn);
            assert!(d < disks && local < 1_000_003);
            assert_eq!(a.array_lbn(d, local), lbn);
            if layout == ArrayLayout::Stripe {
                // Independent arithmetic: unit k goes to disk k mod n, row k div n.
                let k = lbn / unit;
                assert_eq!((d as u64, local), (k % disks as u64, k / disks as u64 * unit + lbn % unit));
            }
        }
        // A request's pieces cover it exactly, each contiguous on its disk, at most one per disk.
        let mut pieces = Vec::new();
        for _ in 0..5_000 {
            let blocks = rng.gen_range(1..2_000u32);
            let lbn = rng.gen_range(0..a.capacity() - blocks as u64);
            a.split(lbn, blocks, &mut pieces);
            assert_eq!(pieces.iter().map(|p| p.2).sum::<u32>(), blocks);
            let mut disks_seen: Vec<u32> = pieces.iter().map(|p| p.0).collect();
            disks_seen.sort();
            disks_seen.dedup();
            assert_eq!(disks_seen.len(), pieces.len());
            for b in lbn..lbn + blocks as u64 {
                let (d, local) = a.locate(b);
                assert!(pieces.iter().any(|&(pd, pl, pn)| pd == d && (pl..pl + pn as u64).contains(&local)), "block {b}");
            }
        }
    }
}

fn run(toml: &str) -> RunResult {
    let cfg: SimConfig = toml::from_str(toml).unwrap();
    Simulation::new(&cfg).unwrap().run(&mut |_, _| true).unwrap()
}

fn closed(disks: u32, array: &str, threshold: u32, clients: u32, sched: &str, size_kb: f64) -> String {
    format!(r#"
        seed = 5
        [disk]
        model = "cheetah9lp"
        scheduler = "{sched}"
        count = {disks}
        array = "{array}"
        stripe_kb = 16
        [host]
        queue_threshold = {threshold}
        [workload]
        kind = "closed"
        clients = {clients}
        size_kb = {size_kb}
        [run]
        requests = 6000
        warmup_requests = 600
        records = true
    "#)
}

#[test]
fn split_requests_complete_once_each_and_report_array_addresses() {
    // 64 KB requests on a 16 KB stripe: most touch four disks.
    let r = run(&closed(4, "stripe", 4, 32, "sptf", 64.0));
    assert_eq!(r.counters.completed, 6000);
    assert!(r.counters.pieces > 3 * 6000, "{} pieces", r.counters.pieces);
    let rec = r.records.unwrap();
    assert_eq!(rec.len(), 6000);
    assert!(rec.blocks.iter().all(|&b| b == 128));
    // 4 KB-aligned starts, so the array addresses came back intact.
    assert!(rec.lbn.iter().all(|l| l % 8 == 0));
    let mut seqs = rec.seq.clone();
    seqs.sort();
    assert_eq!(seqs, (0..6000).collect::<Vec<_>>());
}

#[test]
fn four_disks_serve_about_four_times_the_requests_of_one() {
    // Threshold = clients: the controller never holds a request back, and
    // small requests rarely span disks, so four disks work independently.
    let iops = |disks, t| run(&closed(disks, "stripe", t, 8 * disks, "sptf", 4.0)).summary.iops;
    let ratio = iops(4, 32) / iops(1, 8);
    assert!((3.6..=4.3).contains(&ratio), "{ratio}");
    // At threshold 8 per disk the FIFO controller sometimes waits on a full disk while others idle.
    assert!(iops(4, 8) < 0.97 * iops(4, 32));
}

#[test]
fn the_controller_queue_blocks_at_its_head_when_that_disk_is_full() {
    // 64 clients over 4 concatenated disks. At threshold 1 a FIFO controller
    // waits for the head request's disk; at 16 that disk queue absorbs it.
    let mean = |t| run(&closed(4, "concat", t, 64, "sptf", 4.0)).summary.host_response_ms.mean;
    let (one, sixteen) = (mean(1), mean(16));
    let single = |t| run(&closed(1, "concat", t, 16, "sptf", 4.0)).summary.host_response_ms.mean;
    // Head-of-line blocking makes threshold 1 much worse on the array than on one disk.
    assert!(one / sixteen > 1.5 * single(1) / single(16), "array {} single {}", one / sixteen, single(1) / single(16));
}

#[test]
fn trace_devices_go_to_their_own_disks() {
    let trace = std::env::temp_dir().join(format!("disksched-array-{}.txt", std::process::id()));
    // DiskSim ascii: time_ms devno blkno bcount flags (1 = read); devices 7 and 3.
    let lines: String = (0..400).map(|i| format!("{}.0 {} {} 8 1\n", i, if i % 2 == 0 { 7 } else { 3 }, i * 1000)).collect();
    std::fs::write(&trace, lines).unwrap();
    let toml = format!(r#"
        [disk]
        model = "atlas10k"
        count = 2
        [workload]
        kind = "trace"
        path = "{}"
        format = "disksim-ascii"
        device_disks = true
        [run]
        records = true
    "#, trace.display());
    let r = run(&toml);
    let rec = r.records.unwrap();
    let cap = disksched_core::disk::builtin::resolve("atlas10k", None).map(|s| disksched_core::disk::DiskModel::new(s).unwrap()).unwrap().layout.capacity();
    for i in 0..rec.len() {
        let k = rec.seq[i];
        assert_eq!(rec.disk[i] as u64, k % 2, "device 7 first -> disk 0, device 3 -> disk 1");
        assert_eq!(rec.lbn[i], (k % 2) * cap + k * 1000);
    }
    // Three devices on two disks: a one-line error naming the trace.
    std::fs::write(&trace, "0.0 1 0 8 1\n1.0 2 0 8 1\n2.0 3 0 8 1\n").unwrap();
    let cfg: SimConfig = toml::from_str(&toml).unwrap();
    let e = Simulation::new(&cfg).unwrap().run(&mut |_, _| true).err().unwrap().to_string();
    assert!(e.contains("array has 2 disks") && !e.contains('\n'), "{e}");
    std::fs::remove_file(&trace).ok();
}

#[test]
fn bad_arrays_are_one_line_errors() {
    for (extra, what) in [("count = 0", "disk.count"), ("count = 2\narray = \"stripe\"\nstripe_kb = 0.3", "disk.stripe_kb")] {
        let toml = format!("[disk]\nmodel = \"atlas10k\"\n{extra}\n[workload]\nkind = \"oltp\"\n");
        let cfg: SimConfig = toml::from_str(&toml).unwrap();
        let e = Simulation::new(&cfg).err().expect("rejected").to_string();
        assert!(e.contains(what) && !e.contains('\n'), "{e}");
    }
}

/// Two requests, A on disk 0 and B on disk 1, and heads for each disk: B is
/// under disk 1's heads (nearly no positioning), A a third of the stroke from
/// disk 0's heads and B most of the stroke from them. Every positional
/// scheduler over the array must pick B (its own disk's heads); judged
/// against disk 0's heads alone (what the host did before), A.
#[test]
fn a_positional_scheduler_over_an_array_judges_each_request_against_its_own_disks_heads() {
    use disksched_core::disk::{HeadState, Predictor};
    use disksched_core::host::{Request, RequestTable};
    use disksched_core::sched::{self, SchedCtx, NO_CLAIMS};
    use disksched_core::time::SimTime;
    let model = common::atlas();
    let p = Predictor::exact(model.clone());
    let (cap, cyls) = (model.layout.capacity(), model.layout.cylinders());
    // LBNs at about 60% and 10% of the disk; the heads of disk 0 at about 90%.
    let (a, b) = (p.target(cap * 6 / 10), p.target(cap / 10));
    let far = p.target(cap * 9 / 10);
    assert!(far.cylinder > a.cylinder && a.cylinder > b.cylinder && cyls > far.cylinder);
    // Each disk's heads at the time (within a revolution) that brings its request's sector soonest.
    let soonest = |at: (u32, u32), to: &disksched_core::disk::Target| {
        (0..200u64).map(|k| HeadState { cylinder: at.0, head: at.1, time: SimTime(1_000_000_000 + k * 30_000), ..Default::default() })
            .min_by_key(|h| p.positioning(h, p.phase_at(h.time), to, false, 8).total_ns()).unwrap()
    };
    let heads = [soonest((far.cylinder, far.head), &a), soonest((b.cylinder, b.head), &b)];
    let cost = |h: &HeadState, t| p.positioning(h, p.phase_at(h.time), t, false, 8).total_ns();
    assert!(cost(&heads[1], &b) < cost(&heads[0], &a) && cost(&heads[0], &a) < cost(&heads[0], &b));
    let now = heads[0].time.max(heads[1].time);
    for name in ["sptf", "sstf", "vscan", "asptf", "ecs", "hrs", "sptf_sw", "bsptf", "sptf_cache"] {
        for per_disk in [true, false] {
            let mut reqs = RequestTable::default();
            let ra = reqs.insert(Request { seq: 0, disk: 0, lbn: cap * 6 / 10, blocks: 8, target: a, arrival: now, ..Default::default() });
            let rb = reqs.insert(Request { seq: 1, disk: 1, lbn: cap / 10, blocks: 8, target: b, arrival: now, ..Default::default() });
            let ctx = SchedCtx { now, reqs: &reqs, predictor: &p, head: heads[0], heads: if per_disk { &heads } else { &[] },
                                 claims: &NO_CLAIMS, cache: None };
            assert_eq!(ctx.head_for(reqs.get(rb)).cylinder, if per_disk { b.cylinder } else { far.cylinder });
            let mut s = sched::build(name, &[]).unwrap();
            s.insert(ra, &ctx);
            s.insert(rb, &ctx);
            let first = s.dispatch(&ctx, true).unwrap();
            assert_eq!(first, if per_disk { rb } else { ra }, "{name}, per-disk heads {per_disk}");
            assert_eq!(s.dispatch(&ctx, true).unwrap(), if per_disk { ra } else { rb });
            assert!(s.is_empty());
        }
    }
}

/// A batch of reads submitted at once, all on one disk: on a single disk,
/// or on the second disk of a two-disk concatenation (the first idle). A
/// positional scheduler above the disks (the host's, or a controller's)
/// with one command in flight below it orders them by the heads of the disk
/// they are on, so the second disk serves them exactly as the single disk
/// does. (Judged against the idle first disk's heads, the order differed.)
/// One command below in total, not one per disk: a level that feeds the
/// disks picks whenever any disk has room, and a pick for a full disk waits
/// at the head (`sim` module doc), picked earlier than on one disk.
#[test]
fn a_host_or_controller_sptf_over_an_array_orders_each_disks_requests_by_that_disks_heads() {
    use disksched_core::workload::IoSpec;
    let model = common::atlas();
    let cap = model.layout.capacity();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
    let batch: Vec<u64> = (0..300).map(|_| rng.gen_range(0..cap - 8)).collect();
    let above = [
        ("host sptf", "[host]\nscheduler = \"sptf\"\nqueue_threshold = 1\n[controller]\nqueue_threshold = 1"),
        ("host sstf", "[host]\nscheduler = \"sstf\"\nqueue_threshold = 1\n[controller]\nqueue_threshold = 1"),
        ("host asptf", "[host]\nscheduler = \"asptf\"\nqueue_threshold = 1\n[controller]\nqueue_threshold = 1"),
        ("controller sptf", "[host]\nqueue_threshold = 64\n[controller]\nscheduler = \"sptf\"\nqueue_threshold = 1"),
    ];
    for (what, levels) in above {
        let served = |disks: u32| {
            let cfg = common::config(&format!(r#"
                seed = 2
                [disk]
                model = "atlas10k"
                scheduler = "fcfs"
                count = {disks}
                array = "concat"
                {levels}
                [workload]
                kind = "oltp"
            "#));
            let mut sim = Simulation::with_model(&cfg, model.clone()).unwrap();
            let shift = (disks as u64 - 1) * cap;
            for &lbn in &batch {
                sim.submit(IoSpec { lbn: lbn + shift, blocks: 8, is_write: false, class: Default::default(), deadline: None, range: None, flow: None }).unwrap();
            }
            let mut done: Vec<(u64, u64)> = sim.run_until(disksched_core::time::SimTime(u64::MAX / 2)).unwrap()
                .iter().map(|r| (r.lbn - shift, r.service.done.0)).collect();
            done.sort_by_key(|d| d.1);
            let r = sim.into_result().unwrap();
            assert_eq!(r.counters.completed, batch.len() as u64);
            done
        };
        let (one, second) = (served(1), served(2));
        assert_eq!(one.len(), batch.len());
        assert!(one == second, "{what}: the second disk of the array serves the batch as a single disk does");
    }
}

/// An LBN-ordered scheduler above an array (LOOK, SCAN, C-LOOK, C-SCAN,
/// SSTF by LBN) orders each disk's requests as it would on that disk alone:
/// a request's `lbn` is a block of its own disk, so one sweep position over
/// all disks would mix unrelated addresses. Requests arrive on two disks
/// between dispatches; every dispatch must be what the same scheduler,
/// fed only that disk's requests, dispatches next (and SCAN / C-SCAN must
/// ask for the same travel to the edge).
#[test]
fn an_lbn_ordered_scheduler_over_an_array_sweeps_each_disk_on_its_own() {
    use disksched_core::disk::{HeadState, Predictor};
    use disksched_core::host::{Request, RequestTable};
    use disksched_core::sched::{self, SchedCtx, NO_CLAIMS};
    use disksched_core::time::SimTime;
    let model = common::atlas();
    let p = Predictor::exact(model.clone());
    let cap = model.layout.capacity();
    for name in ["look", "scan", "clook", "cscan", "sstf_lbn"] {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut reqs = RequestTable::default();
        let mut s = sched::build(name, &[]).unwrap();
        let mut alone = [sched::build(name, &[]).unwrap(), sched::build(name, &[]).unwrap()];
        let (mut seq, mut served, mut disks_served) = (0u64, 0, [0; 2]);
        while served < 400 {
            // Each disk's heads free at a random time, so either disk may be served next.
            let heads: Vec<HeadState> = (0..2).map(|_| HeadState { time: SimTime(rng.gen_range(0..1_000_000)), ..Default::default() }).collect();
            let ctx = |reqs| SchedCtx { now: SimTime(0), reqs, predictor: &p, head: heads[0], heads: &heads, claims: &NO_CLAIMS, cache: None };
            let one = |reqs| SchedCtx::standalone(reqs, &p, HeadState::default());
            if seq < 500 && (s.is_empty() || rng.gen_bool(0.6)) {
                let (disk, lbn) = (rng.gen_range(0..2u32), rng.gen_range(0..cap - 8));
                seq += 1;
                let id = reqs.insert(Request { seq, disk, lbn, blocks: 8, target: p.target(lbn), ..Default::default() });
                s.insert(id, &ctx(&reqs));
                alone[disk as usize].insert(id, &one(&reqs));
                continue;
            }
            let id = s.dispatch(&ctx(&reqs), true).expect("a request");
            let disk = reqs.get(id).disk as usize;
            assert_eq!(alone[disk].dispatch(&one(&reqs), true), Some(id), "{name}: dispatch {served} (disk {disk})");
            assert_eq!(s.travel_first(), alone[disk].travel_first(), "{name}: travel before dispatch {served}");
            served += 1;
            disks_served[disk] += 1;
        }
        assert!(disks_served.iter().all(|&n| n > 100), "{name}: both disks served ({disks_served:?})");
    }
}
