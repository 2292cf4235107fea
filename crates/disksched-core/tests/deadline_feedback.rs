//! Missed-deadline feedback (Wu & Brandt): a miss is signalled when the
//! deadline passes, once per request; stream deadlines carry the playout
//! buffer; the pessimistic policy recovers on a change of declared demand.
mod common;

use disksched_core::disk::{HeadState, Predictor};
use disksched_core::host::{Class, ReqId, Request, RequestTable};
use disksched_core::qos::shaper::Shaper;
use disksched_core::qos::ShaperConfig;
use disksched_core::sched::{self, SchedCtx, Scheduler};
use disksched_core::time::SimTime;
use disksched_core::workload::SimRng;
use disksched_core::{RunResult, SimConfig, Simulation};
use rand::SeedableRng;

const MS: u64 = 1_000_000;

struct Bench {
    reqs: RequestTable,
    pred: Predictor,
    seq: u64,
}

impl Bench {
    fn ctx(&self, t: u64) -> SchedCtx<'_> {
        let now = SimTime(t);
        SchedCtx::standalone(&self.reqs, &self.pred, HeadState { time: now, ..Default::default() })
    }
    fn add(&mut self, s: &mut Shaper, client: u32, class: Class, deadline_ms: Option<u64>, t: u64) -> ReqId {
        self.seq += 1;
        let lbn = 1000 * self.seq;
        let target = self.pred.target(lbn);
        let id = self.reqs.insert(Request { seq: self.seq, client, flow: client, class, lbn, blocks: 8, target,
            arrival: SimTime(t), deadline: deadline_ms.map(|d| SimTime(d * MS)), ..Default::default() });
        s.insert(id, &self.ctx(t));
        id
    }
}

fn shaper(policy: &str) -> Shaper {
    let mut cfg = ShaperConfig { policy: policy.into(), ..Default::default() };
    cfg.best_effort.insert("rate_per_s".into(), 1.0);
    Shaper::new(&cfg, sched::build("fcfs", &[]).unwrap(), None).unwrap()
}

fn counter(s: &Shaper, name: &str) -> u64 {
    s.counters().iter().find(|c| c.0 == name).unwrap().1
}

#[test]
fn a_starved_request_signals_its_miss_when_the_deadline_passes_once() {
    for policy in ["fixed", "optimistic", "pessimistic"] {
        let mut b = Bench { reqs: RequestTable::default(), pred: Predictor::exact(common::atlas()), seq: 0 };
        let mut s = shaper(policy);
        // A real-time request due at 10 ms goes to the disk at 0 and stays there (starved below).
        let rt = b.add(&mut s, 1, Class::RealTime, Some(10), 0);
        assert_eq!(s.dispatch(&b.ctx(0), false), Some(rt));
        // A best-effort request waits for its token (1 per s; the first is in the bucket).
        let be = b.add(&mut s, 2, Class::BestEffort, None, MS);
        assert_eq!(s.dispatch(&b.ctx(MS), false), Some(be));
        b.add(&mut s, 2, Class::BestEffort, None, 2 * MS);
        assert_eq!(s.dispatch(&b.ctx(2 * MS), false), None);
        assert_eq!(counter(&s, "shaper_rt_misses"), 0);
        // A feedback policy asks to be woken just after the deadline (the next token is ~1 s away).
        let wake = s.wake_at().unwrap();
        if policy == "fixed" {
            assert!(wake > SimTime(900 * MS), "{policy}: {wake:?}");
        } else {
            assert_eq!(wake, SimTime(10 * MS + 1), "{policy}");
        }
        // Any call after 10 ms signals: here the wake-up, long before the request completes.
        assert_eq!(s.dispatch(&b.ctx(10 * MS + 1), false), None);
        assert_eq!(counter(&s, "shaper_rt_misses"), 1, "{policy}");
        assert_eq!(counter(&s, "shaper_rate_cuts"), (policy != "fixed") as u64, "{policy}");
        s.complete(be, &b.ctx(20 * MS));
        // Completing late does not signal again.
        s.complete(rt, &b.ctx(500 * MS));
        assert_eq!(counter(&s, "shaper_rt_misses"), 1, "{policy}");
        // A request done by its deadline never signals.
        let on_time = b.add(&mut s, 1, Class::RealTime, Some(600), 550 * MS);
        assert_eq!(s.dispatch(&b.ctx(550 * MS), false), Some(on_time));
        s.complete(on_time, &b.ctx(600 * MS));
        let _ = s.dispatch(&b.ctx(700 * MS), false);
        assert_eq!(counter(&s, "shaper_rt_misses"), 1, "{policy}");
    }
}

#[test]
fn stream_deadlines_carry_the_playout_buffer() {
    // 1 MB/s of 64 KB requests: a period of 65.536 ms; request k due at k periods,
    // deadline (k + 1 + buffer_periods) periods from the start.
    let period_ns = 65_536_000u64;
    for (buffer, extra) in [("", 1u64), ("buffer_periods = 0", 0), ("buffer_periods = 3", 3)] {
        let cfg: SimConfig = common::config(&format!(r#"
            [disk]
            model = "atlas10k"
            [workload]
            kind = "stream"
            mb_per_s = 1.0
            request_kb = 64
            {buffer}
            [run]
            requests = 10
        "#));
        let mut g = cfg.workload.build(17_938_986, 512, None).unwrap();
        let mut rng = SimRng::seed_from_u64(1);
        g.start(&mut rng);
        for k in 0..3u64 {
            let now = SimTime(k * period_ns);
            let (io, _) = g.arrive(now, 0, &mut rng).unwrap();
            assert_eq!(io.deadline, Some(SimTime((k + 1 + extra) * period_ns)), "{buffer} k={k}");
            g.completed(now, 0, &mut rng);
        }
    }
    let cfg: SimConfig = common::config("[disk]\nmodel = \"atlas10k\"\n[workload]\nkind = \"stream\"\nmb_per_s = 1\nrequest_kb = 64\nbuffer_periods = -1\n");
    let e = Simulation::with_model(&cfg, common::atlas()).err().unwrap().to_string();
    assert_eq!(e, "workload.buffer_periods: -1 periods is out of range [0, 1000]");
}

fn run(toml: &str) -> RunResult {
    let cfg: SimConfig = common::config(toml);
    Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap()
}

fn host_counter(r: &RunResult, name: &str) -> u64 {
    r.scheduler_counters.iter().find(|c| c.0 == "host" && c.1 == name).unwrap().2
}

/// A 4 MB/s real-time stream (16.4 ms periods) beside 16 greedy best-effort readers under C-LOOK.
fn loaded(policy: &str, stream_extra: &str) -> String {
    format!(r#"
        seed = 5
        [disk]
        model = "atlas10k"
        [host]
        scheduler = "clook"
        queue_threshold = 1
        shaper = {{ policy = "{policy}", set = {{ rt_idle_ms = 50 }}, best-effort = {{ rate_per_s = 400 }} }}
        [workload]
        kind = "mix"
        clients = [
          {{ kind = "stream", mb_per_s = 4, request_kb = 64, start_lbn = 0, class = "real-time", buffer_periods = 0{stream_extra} }},
          {{ kind = "closed", clients = 16, think_time_ms = 0, size_kb = 8, read_fraction = 1.0 }},
        ]
        [run]
        requests = 1000000
        duration_ms = 20000
        records = true
        series_window_ms = 500
    "#)
}

/// (time ns, best-effort token rate) samples of a run.
fn be_rate(r: &RunResult) -> Vec<(u64, f64)> {
    let s = r.series.as_ref().unwrap();
    (0..s.sample_ns.len()).filter(|&i| s.sample_name[i] == "best-effort.rate_per_s").map(|i| (s.sample_ns[i], s.sample_value[i])).collect()
}

#[test]
fn pessimistic_recovers_only_when_declared_demand_changes() {
    // The stream's requests wait behind best-effort ones longer than rt_idle_ms (50 ms)
    // but it always has one outstanding: it never withdraws, so the rates, once cut,
    // are not reset while it runs (the run's end, 20 s, stops it).
    let r = run(&loaded("pessimistic", ""));
    let rec = r.records.as_ref().unwrap();
    let worst_rt_ms = (0..rec.len()).filter(|&i| rec.client[i] == 0).map(|i| (rec.done_ns[i] - rec.arrival_ns[i]) / MS).max().unwrap();
    assert!(worst_rt_ms > 50, "a stream request waited {worst_rt_ms} ms");
    assert!(host_counter(&r, "shaper_rate_cuts") > 0);
    let rate = be_rate(&r);
    assert!(rate.len() >= 39 && rate.iter().any(|x| x.1 < 400.0));
    assert!(rate.windows(2).all(|w| w[1].1 <= w[0].1), "never raised while the stream runs: {rate:?}");
    // When the stream stops (no request due from 10 s; it finishes its backlog first), it
    // withdraws 50 ms after its last completion and the rate is back.
    let r = run(&loaded("pessimistic", ", stop_ms = 10000"));
    let rate = be_rate(&r);
    let at = |t_ms: u64| rate.iter().find(|x| x.0 == t_ms * MS).unwrap().1;
    assert!(at(9500) < 400.0 && at(20000) == 400.0, "{rate:?}");
    let back = rate.iter().find(|x| x.1 == 400.0 && x.0 > 0).unwrap().0;
    let last_rt_done = (0..r.records.as_ref().unwrap().len()).filter(|&i| r.records.as_ref().unwrap().client[i] == 0)
        .map(|i| r.records.as_ref().unwrap().done_ns[i]).max().unwrap();
    assert!(back >= last_rt_done + 50 * MS && back < last_rt_done + 50 * MS + 500 * MS, "back at {back}, last stream completion {last_rt_done}");
    assert!(host_counter(&r, "shaper_rate_resets") >= 1);
}
