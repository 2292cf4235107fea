//! The hooks the Python binding plugs into: a scheduler factory consulted
//! before the registry (`sched::with_factory`), and the step API
//! (`Simulation::step` / `switch_scheduler`). Exercised here with a Rust
//! scheduler standing in for a plug-in.
mod common;

use disksched_core::host::ReqId;
use disksched_core::sched::{self, SchedCtx, Scheduler};
use disksched_core::time::SimTime;
use disksched_core::Simulation;
use std::rc::Rc;

/// Last come, first served: the plug-in stand-in.
#[derive(Default)]
struct Lifo(Vec<ReqId>);
impl Scheduler for Lifo {
    fn name(&self) -> &'static str { "lifo_test" }
    fn insert(&mut self, id: ReqId, _: &SchedCtx) { self.0.push(id) }
    fn dispatch(&mut self, _: &SchedCtx, _: bool) -> Option<ReqId> { self.0.pop() }
    fn drain(&mut self) -> Vec<ReqId> { std::mem::take(&mut self.0) }
    fn len(&self) -> usize { self.0.len() }
}

fn factory() -> Rc<sched::Factory> {
    Rc::new(|what: &str, name: &str, settings: &[(String, f64)]| {
        (name == "lifo_test").then(|| {
            sched::check_tunables(what, &[], settings)?;
            Ok(Box::new(Lifo::default()) as Box<dyn Scheduler>)
        })
    })
}

const CONFIG: &str = r#"
    seed = 4
    [disk]
    model = "atlas10k"
    [host]
    scheduler = "lifo_test"
    queue_threshold = 1
    [workload]
    kind = "open"
    interarrival_ms = 9
    [run]
    requests = 2000
    records = true
"#;

#[test]
fn the_factory_is_consulted_before_the_registry_and_only_inside_with_factory() {
    let cfg = common::config(CONFIG);
    let outside = Simulation::with_model(&cfg, common::atlas()).err().expect("unknown outside").to_string();
    assert!(outside.contains("unknown scheduler 'lifo_test'"), "{outside}");
    let r = sched::with_factory(factory(), || Simulation::with_model(&cfg, common::atlas())).unwrap().run(&mut |_, _| true).unwrap();
    let rec = r.records.unwrap();
    assert_eq!(rec.seq.len(), 2000);
    // LIFO at a threshold-1 host queue: whenever several wait, the newest goes first,
    // so some request is dispatched from the host before one that arrived earlier.
    let mut by_dispatch: Vec<(u64, u64)> = rec.host_dispatched_ns.iter().zip(&rec.seq).map(|(&t, &s)| (t, s)).collect();
    by_dispatch.sort();
    assert!(by_dispatch.windows(2).any(|w| w[1].1 < w[0].1), "LIFO served in arrival order");
    // Settings reach the factory with their place in the config; the factory checks them.
    let err = sched::with_factory(factory(), || sched::build_as(Some("set"), "lifo_test", &[("x".into(), 1.0)])).err().unwrap();
    assert_eq!(err.to_string(), "set.x: unknown tunable (expected one of: none)");
    // Names it does not know go to the registry.
    assert_eq!(sched::with_factory(factory(), || sched::build("sptf", &[])).unwrap().name(), "sptf");
}

#[test]
fn stepping_and_switching_by_hand_match_a_run_and_a_reconfigure_entry() {
    let base = CONFIG.replace("lifo_test", "fcfs");
    let cfg = common::config(&base);
    let whole = Simulation::with_model(&cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap();
    let mut sim = Simulation::with_model(&cfg, common::atlas()).unwrap();
    sim.start();
    let mut last = SimTime::ZERO;
    while let Some(t) = sim.step().unwrap() {
        assert!(t >= last);
        last = t;
    }
    assert_eq!(sim.next_event_time(), None);
    let stepped = sim.into_result().unwrap();
    assert_eq!(stepped.counters, whole.counters);
    let whole_done = whole.records.unwrap().done_ns;
    assert_eq!(stepped.records.unwrap().done_ns, whole_done);

    let switched_cfg = common::config(&format!("{base}\n[[reconfigure]]\nat_ms = 5000\nqueue = \"host\"\nscheduler = \"sptf\"\n"));
    let reconfigured = Simulation::with_model(&switched_cfg, common::atlas()).unwrap().run(&mut |_, _| true).unwrap();
    let reconfigured_done = reconfigured.records.unwrap().done_ns;
    assert_ne!(reconfigured_done, whole_done, "the switch to SPTF changes the schedule");
    let mut sim = Simulation::with_model(&cfg, common::atlas()).unwrap();
    sim.start();
    sim.run_until(SimTime(5_000_000_000)).unwrap();
    assert_eq!(sim.scheduler_names()[0], ("host", "fcfs"));
    sim.switch_scheduler("host", "sptf", &[]).unwrap();
    assert_eq!(sim.scheduler_names()[0], ("host", "sptf"));
    assert!(sim.switch_scheduler("controller", "sptf", &[]).is_err());
    while sim.step().unwrap().is_some() {}
    let by_hand = sim.into_result().unwrap();
    assert_eq!(by_hand.records.unwrap().done_ns, reconfigured_done);
}

// The Rust half of docs/writing-a-scheduler.md's worked example, as it
// would sit in `src/sched/capped_sptf.rs` (there `tunable(...)` declares the
// tunable and the registry builds it; here the factory stands in for both).
mod capped_sptf {
    use disksched_core::host::ReqId;
    use disksched_core::sched::{SchedCtx, Scheduler, Tunable, Tunables};

    /// Its tunables: name, unit, min, default, max, help.
    pub const TUNABLES: &[Tunable] = &[Tunable::float("max_wait_ms", "ms", 0.0, 100.0, 60_000.0, "a request waiting this long goes next")];

    /// SPTF, except that a request that has waited `max_wait_ms` or longer goes first (the oldest such).
    pub struct CappedSptf {
        held: Vec<ReqId>,
        max_wait_ns: f64,
        capped: u64,
    }

    impl CappedSptf {
        pub fn new(t: &Tunables) -> CappedSptf {
            CappedSptf { held: Vec::new(), max_wait_ns: t.get("max_wait_ms") * 1e6, capped: 0 }
        }
    }

    impl Scheduler for CappedSptf {
        fn name(&self) -> &'static str {
            "capped_sptf"
        }
        fn insert(&mut self, id: ReqId, _ctx: &SchedCtx) {
            self.held.push(id);
        }
        fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
            let req = |i: usize| ctx.reqs.get(self.held[i]);
            let oldest = (0..self.held.len()).min_by_key(|&i| req(i).seq)?;
            let pick = if (ctx.now.0 - req(oldest).arrival.0) as f64 >= self.max_wait_ns {
                self.capped += 1;
                oldest
            } else {
                // The least predicted positioning time; ties to the older request.
                let phase = ctx.predictor.phase_at(ctx.head.time);
                (0..self.held.len()).min_by_key(|&i| {
                    let r = req(i);
                    (ctx.predictor.positioning(&ctx.head, phase, &r.target, r.is_write, r.blocks).total_ns(), r.seq)
                })?
            };
            Some(self.held.swap_remove(pick))
        }
        fn drain(&mut self) -> Vec<ReqId> {
            std::mem::take(&mut self.held)
        }
        fn len(&self) -> usize {
            self.held.len()
        }
        fn counters(&self) -> Vec<(&'static str, u64)> {
            vec![("capped", self.capped)]
        }
    }
}

#[test]
fn the_docs_rust_example_is_fcfs_at_cap_0_and_sptf_with_a_cap_longer_than_any_wait() {
    let factory: Rc<sched::Factory> = Rc::new(|what: &str, name: &str, settings: &[(String, f64)]| {
        (name == "capped_sptf").then(|| {
            let t = sched::check_tunables(what, capped_sptf::TUNABLES, settings)?;
            Ok(Box::new(capped_sptf::CappedSptf::new(&t)) as Box<dyn Scheduler>)
        })
    });
    let run = |sched: &str, cap: Option<f64>| {
        let mut text = CONFIG.replace("lifo_test", sched);
        if let Some(ms) = cap {
            text = text.replace("queue_threshold = 1", &format!("queue_threshold = 1\nset = {{ max_wait_ms = {ms} }}"));
        }
        let cfg = common::config(&text);
        sched::with_factory(factory.clone(), || Simulation::with_model(&cfg, common::atlas())).unwrap().run(&mut |_, _| true).unwrap()
    };
    let done = |r: disksched_core::RunResult| r.records.unwrap().done_ns;
    assert_eq!(done(run("capped_sptf", Some(0.0))), done(run("fcfs", None)));
    assert_eq!(done(run("capped_sptf", Some(60_000.0))), done(run("sptf", None)));
    assert_ne!(done(run("sptf", None)), done(run("fcfs", None)), "the host's order matters in this config");
    let mid = run("capped_sptf", Some(20.0));
    let capped = mid.scheduler_counters.iter().find(|c| c.1 == "capped").unwrap().2;
    assert!(capped > 0 && capped < mid.counters.completed, "{capped}");
}
