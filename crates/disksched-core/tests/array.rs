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
