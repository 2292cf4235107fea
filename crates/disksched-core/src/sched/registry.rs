//! Every scheduler by name, their tunables, and how one is built from a
//! name and settings (or by a plug-in factory).

use super::*;
use crate::error::{config_err, Result};

/// A tunable parameter: name with its unit, bounds and default (GEOM_SCHED's {min, cur, max});
/// the same declaration as every other config value (`schema::Param`).
pub type Tunable = crate::schema::Param;

/// Tunable values after validation against the declarations.
#[derive(Clone, Debug, Default)]
pub struct Tunables(Vec<(&'static str, f64)>);

impl Tunables {
    /// Value of the declared tunable `name` (panics if it was not declared: a bug).
    pub fn get(&self, name: &str) -> f64 {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v).expect("declared tunable")
    }
}

/// One entry of the registry.
pub struct SchedInfo {
    /// Registry name, as used in configs and on the CLI.
    pub name: &'static str,
    /// Other names accepted for it (case-insensitive).
    pub aliases: &'static [&'static str],
    /// One-line description.
    pub summary: &'static str,
    /// Its tunables, declared with unit, bounds and default.
    pub tunables: &'static [Tunable],
    build: fn(&Tunables) -> Box<dyn Scheduler>,
}

pub(crate) const fn tunable(name: &'static str, unit: &'static str, min: f64, default: f64, max: f64, help: &'static str) -> Tunable {
    Tunable::float(name, unit, min, default, max, help)
}

/// Every scheduler, in the order the CLI lists them.
pub const REGISTRY: &[SchedInfo] = &[
    SchedInfo { name: "fcfs", aliases: &["fifo", "noop", "none"], summary: "first come, first served",
        tunables: &[], build: |_| Box::new(fcfs::Fcfs::default()) },
    SchedInfo { name: "sstf", aliases: &["sstf_cyl", "sstf-cyl"], summary: "shortest seek first, by cylinder distance",
        tunables: &[], build: |_| Box::new(sstf::Sstf::default()) },
    SchedInfo { name: "sstf_lbn", aliases: &["sstf-lbn"], summary: "shortest seek first, by LBN distance",
        tunables: &[], build: |_| Box::new(sstf_lbn::SstfLbn::default()) },
    SchedInfo { name: "scan", aliases: &[], summary: "SCAN: LOOK's order, but the arm sweeps to the disk's edge before turning",
        tunables: &[], build: |_| Box::new(scan::Scan::default()) },
    SchedInfo { name: "cscan", aliases: &["c-scan"], summary: "C-SCAN: C-LOOK's order, but the arm sweeps to the last cylinder and returns to the first",
        tunables: &[], build: |_| Box::new(cscan::CScan::default()) },
    SchedInfo { name: "look", aliases: &["elevator"], summary: "LOOK: sweep up and down in LBN order, turning at the last request",
        tunables: &[], build: |_| Box::new(look::Look::default()) },
    SchedInfo { name: "clook", aliases: &["c-look"], summary: "C-LOOK: ascending LBN sweeps, jump back to the lowest",
        tunables: &[], build: |_| Box::new(clook::CLook::default()) },
    SchedInfo { name: "vscan", aliases: &["v-r", "vr"], summary: "V(R): cylinder distance plus R x cylinders to reverse direction",
        tunables: vscan::TUNABLES,
        build: |t| Box::new(vscan::VScan::new(t)) },
    SchedInfo { name: "sptf", aliases: &["satf", "spf"], summary: "shortest positioning (seek + rotation) time first, via the predictor",
        tunables: &[], build: |_| Box::new(sptf::Sptf::default()) },
    SchedInfo { name: "sptf_cache", aliases: &["sptf-cache", "cache_aware_sptf"], summary: "cache-aware SPTF: in the drive, a read wholly in the buffer costs only the hit overhead",
        tunables: &[], build: |_| Box::new(sptf_cache::SptfCache::default()) },
    SchedInfo { name: "sptf_sw", aliases: &["sptf-sw", "sptf_swn"], summary: "SPTF-SWn: smallest seek among requests within n% of the shortest positioning time",
        tunables: sptf_sw::TUNABLES,
        build: |t| Box::new(sptf_sw::SptfSw::new(t)) },
    SchedInfo { name: "asptf", aliases: &["aged_sptf", "asatf"], summary: "aged SPTF: positioning time minus weight x waiting time",
        tunables: asptf::TUNABLES,
        build: |t| Box::new(asptf::Asptf::new(t)) },
    SchedInfo { name: "bsptf", aliases: &["batched_sptf"], summary: "batched SPTF: SPTF within batches of the requests pending at batch start",
        tunables: bsptf::TUNABLES,
        build: |t| Box::new(bsptf::Bsptf::new(t)) },
    SchedInfo { name: "hrs", aliases: &["range", "hierarchical_range"], summary: "range writes: SPTF where a range request counts its best start (hierarchical search)",
        tunables: &[], build: |_| Box::new(hrs::Hrs::default()) },
    SchedInfo { name: "ecs", aliases: &["expand_cancel"], summary: "range writes: one SPTF entry per acceptable start, the rest cancelled when one is chosen",
        tunables: &[], build: |_| Box::new(ecs::Ecs::default()) },
    SchedInfo { name: "edf", aliases: &[], summary: "earliest deadline first",
        tunables: edf::TUNABLES, build: |t| Box::new(edf::Edf::new(t)) },
    SchedInfo { name: "scan_edf", aliases: &["scan-edf"], summary: "SCAN-EDF: EDF, same-deadline-window requests in sweep order",
        tunables: scan_edf::TUNABLES,
        build: |t| Box::new(scan_edf::ScanEdf::new(t)) },
    SchedInfo { name: "mq_deadline", aliases: &["mq-deadline", "deadline"], summary: "Linux mq-deadline: sector-sorted batches, read/write expiry",
        tunables: mq_deadline::TUNABLES,
        build: |t| Box::new(mq_deadline::MqDeadline::new(t)) },
    SchedInfo { name: "rr", aliases: &["gsched_rr", "g_rr"], summary: "GEOM_SCHED round robin per client, C-SCAN within, with anticipation",
        tunables: rr::TUNABLES,
        build: |t| Box::new(rr::Rr::new(t)) },
    SchedInfo { name: "anticipatory", aliases: &["as"], summary: "Linux AS: read and write batches with expiry, C-LOOK within, idling briefly after a read for the same client's next one",
        tunables: anticipatory::TUNABLES,
        build: |t| Box::new(anticipatory::Anticipatory::new(t)) },
];

/// The registry entry whose name or alias is `name` (case-insensitive); an error listing the names otherwise.
pub fn lookup(name: &str) -> Result<&'static SchedInfo> {
    let key = name.to_ascii_lowercase();
    REGISTRY.iter().find(|s| s.name == key || s.aliases.contains(&key.as_str())).ok_or_else(|| {
        let names: Vec<_> = REGISTRY.iter().map(|s| s.name).collect();
        config_err("scheduler", format!("unknown scheduler '{name}' (expected one of: {})", names.join(", ")))
    })
}

/// Schedulers from outside the registry (plug-ins: the Python binding's).
/// Called with (what, name, settings) as `build_as` gets them (`what`: the
/// settings' place in the config, or the name); `None` if it knows no
/// scheduler of that name, which then goes to the registry. The factory
/// checks the settings against its own declared tunables (`check_tunables`).
pub type Factory = dyn Fn(&str, &str, &[(String, f64)]) -> Option<Result<Box<dyn Scheduler>>>;

thread_local! {
    // Per thread, like the record sink: a run is built on one thread, and
    // the factory need not be `Send` (the binding's holds Python objects).
    static FACTORY: std::cell::RefCell<Option<std::rc::Rc<Factory>>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with `factory` consulted before the registry by every `build` /
/// `build_as` on this thread (the previous factory, if any, comes back after).
pub fn with_factory<R>(factory: std::rc::Rc<Factory>, f: impl FnOnce() -> R) -> R {
    crate::scoped::with(&FACTORY, factory, f)
}

/// Build a scheduler by name with `key=value` settings checked against its tunables.
pub fn build(name: &str, settings: &[(String, f64)]) -> Result<Box<dyn Scheduler>> {
    build_as(None, name, settings)
}

/// `build`, with tunable errors naming `what.key` (e.g. `set.wait_ms`, the
/// key's place in the config) instead of `<scheduler>.key`.
pub fn build_as(what: Option<&str>, name: &str, settings: &[(String, f64)]) -> Result<Box<dyn Scheduler>> {
    if let Some(factory) = FACTORY.with(|s| s.borrow().clone()) {
        if let Some(built) = factory(what.unwrap_or(name), name, settings) {
            return built;
        }
    }
    let info = lookup(name)?;
    Ok((info.build)(&check_tunables(what.unwrap_or(info.name), info.tunables, settings)?))
}

/// `key=value` settings checked against `decls` (defaults for the rest);
/// errors name `what.key`, the value and the allowed range.
pub fn check_tunables(what: &str, decls: &'static [Tunable], settings: &[(String, f64)]) -> Result<Tunables> {
    let mut values: Vec<(&'static str, f64)> = decls.iter().map(|t| (t.name, t.default)).collect();
    for (key, value) in settings {
        let Some(t) = decls.iter().find(|t| t.name == key) else {
            let names: Vec<_> = decls.iter().map(|t| t.name).collect();
            return Err(config_err(format!("{what}.{key}"), format!(
                "unknown tunable (expected one of: {})", if names.is_empty() { "none".into() } else { names.join(", ") })));
        };
        t.check(what, *value)?;
        values.iter_mut().find(|(n, _)| *n == t.name).unwrap().1 = *value;
    }
    Ok(Tunables(values))
}

/// Dispatch decisions per second of a scheduler holding `depth` requests on
/// `model`: each decision dispatches one request and inserts a fresh random
/// one, the heads moving to each dispatched request. Requests are 8-block
/// reads, or with `range_blocks > 0` one-block range writes that accept any
/// block of a random `range_blocks`-block range (placed as the drive would).
/// For `disksched bench`.
pub fn dispatch_rate(name: &str, depth: usize, decisions: u64, range_blocks: u32,
                     model: std::sync::Arc<crate::disk::DiskModel>) -> Result<f64> {
    dispatch_rate_of(build(name, &[])?, depth, decisions, range_blocks, model)
}

/// `dispatch_rate` of a scheduler already built (a plug-in's).
pub fn dispatch_rate_of(mut s: Box<dyn Scheduler>, depth: usize, decisions: u64, range_blocks: u32,
                        model: std::sync::Arc<crate::disk::DiskModel>) -> Result<f64> {
    use crate::host::range::{best_start, RangeSpec, Targets};
    use crate::host::Request;
    use rand::{Rng, SeedableRng};
    let predictor = Predictor::exact(model.clone());
    let mut reqs = RequestTable::default();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(1);
    let cap = model.layout.capacity() - 8.max(range_blocks as u64);
    let mut seq = 0u64;
    let mut add = |reqs: &mut RequestTable, now: SimTime| {
        seq += 1;
        let lbn = rng.gen_range(0..cap);
        let r = if range_blocks == 0 {
            Request { seq, lbn, blocks: 8, target: predictor.target(lbn), arrival: now, ..Default::default() }
        } else {
            let spec = RangeSpec { spans: vec![(lbn, lbn + range_blocks as u64)], align_blocks: 1 };
            let range = Targets::new(&spec, 1, &model.layout).map(Box::new);
            Request { seq, lbn, blocks: 1, is_write: true, target: predictor.target(lbn), arrival: now, range, ..Default::default() }
        };
        reqs.insert(r)
    };
    let mut head = HeadState::default();
    for _ in 0..depth {
        let id = add(&mut reqs, head.time);
        s.insert(id, &SchedCtx::standalone(&reqs, &predictor, head));
    }
    let clock = std::time::Instant::now();
    for _ in 0..decisions {
        let ctx = SchedCtx::standalone(&reqs, &predictor, head);
        let id = s.dispatch(&ctx, true).ok_or_else(|| crate::error::Error::Invariant(format!(
            "{}: nothing from a forced dispatch holding {} requests", s.name(), s.len())))?;
        let r = reqs.remove(id);
        let target = match r.range.as_deref() {
            Some(t) => {
                let c = best_start(&r, t, &head, predictor.phase_at(head.time), &predictor, &NO_CLAIMS, None).expect("a start");
                predictor.target(c.lbn)
            }
            None => r.target,
        };
        head = HeadState { cylinder: target.cylinder, head: target.head, time: SimTime(head.time.0 + 5_000_000), ..Default::default() };
        let id = add(&mut reqs, head.time);
        s.insert(id, &SchedCtx::standalone(&reqs, &predictor, head));
    }
    Ok(decisions as f64 / clock.elapsed().as_secs_f64())
}
