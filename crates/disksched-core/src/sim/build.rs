//! `SimConfig` -> `Simulation`: every part built, and every check that
//! needs the disk made, before the run starts.

use super::disk_unit::DiskUnit;
use super::queue_level::QueueLevel;
use super::{Accounting, Reconfigured, Shared, Simulation};
use crate::config::SimConfig;
use crate::disk::{builtin, DiskModel, Drive, Predictor};
use crate::engine::Engine;
use crate::error::{config_err, Error, Result};
use crate::host::array::{Array, ArrayLayout, Splits};
use crate::metrics::Metrics;
use crate::sched::{self, HeadsRead, Scheduler};
use crate::time::{SimDuration, SimTime};
use crate::workload::WorkloadConfig;
use rand::SeedableRng;
use std::sync::Arc;

impl Simulation {
    /// Build a run from `cfg`, resolving its disk model.
    pub fn new(cfg: &SimConfig) -> Result<Simulation> {
        cfg.validate()?;
        let spec = builtin::resolve(&cfg.disk.model, cfg.base_dir.as_deref())?;
        let model = Arc::new(DiskModel::new(spec)?);
        Self::with_model(cfg, model)
    }

    /// Build a run from `cfg` on an already built disk model.
    pub fn with_model(cfg: &SimConfig, model: Arc<DiskModel>) -> Result<Simulation> {
        cfg.validate()?;
        let mut host_sched = build_queue_sched("host", &cfg.host.scheduler, &cfg.host.set)?;
        let series_window = cfg.run.series_window_ms.map(SimDuration::from_ms);
        // Series rows that accrue every window whether or not anything completes: the shaper's sampled rates, each freeblock task's blocks.
        let mut timed_rows = cfg.freeblock.as_ref().map_or(0, |f| f.tasks.len().max(1) as u64);
        if let Some(shaper) = &cfg.host.shaper {
            let s = crate::qos::shaper::Shaper::new(shaper, host_sched, series_window)?;
            timed_rows += s.sampled_rates();
            host_sched = Box::new(s);
        }
        // The series' memory budget as a time: the run stops with an error before an event past it (instead of sampling gigabytes).
        let series_end = match series_window {
            Some(w) if timed_rows > 0 => SimTime(w.ns().saturating_mul(crate::metrics::MAX_SERIES_ROWS / timed_rows)),
            _ => SimTime(u64::MAX),
        };
        let n = cfg.disk.count;
        let class_expire = SimDuration::from_ms(cfg.host.class_expire_ms);
        // The level that feeds the disks limits each disk; the host above a controller, the controller's total.
        let levels = match &cfg.controller {
            None => vec![QueueLevel::new("host", host_sched, class_expire, u32::MAX, cfg.host.queue_threshold, Some(Metrics::host_queue))],
            Some(c) => {
                let ctl = build_queue_sched("controller", &c.scheduler, &c.set)?;
                vec![QueueLevel::new("host", host_sched, class_expire, cfg.host.queue_threshold, u32::MAX, Some(Metrics::host_queue)),
                     QueueLevel::new("controller", ctl, class_expire, c.queue_threshold, c.per_disk(), Some(Metrics::controller_queue))]
            }
        };
        let array = Array::new(n, cfg.disk.array, cfg.disk.stripe_kb, model.layout.capacity(), model.spec.sector_bytes)?;
        let mut units = Vec::new();
        for d in 0..n {
            let sched = build_queue_sched("disk", &cfg.disk.scheduler, &cfg.disk.set)?;
            // A drive serves one command at a time: its queue's thresholds are not consulted.
            let queue = QueueLevel::new("disk", sched, class_expire, u32::MAX, u32::MAX, None);
            let mut drive = Drive::new(model.clone());
            if let Some(noise) = &cfg.disk.noise {
                // Each drive varies on its own random stream (seed ^ disk, as freeblock's tasks).
                drive.set_noise(noise, cfg.seed ^ d as u64);
            }
            let mut unit = DiskUnit::new(drive, queue, Box::new(crate::background::freeblock::Off));
            unit.prediction = cfg.disk.noise.as_ref().map(|_| crate::disk::noisy::PredictionErrors::new(model.mech.revolution_ns()));
            units.push(unit);
        }
        let depth = model.spec.controller.queue_depth;
        let (key, per_disk) = match &cfg.controller {
            None => ("host.queue_threshold", cfg.host.queue_threshold),
            Some(c) if c.per_disk_threshold.is_some() => ("controller.per_disk_threshold", c.per_disk()),
            Some(c) => ("controller.queue_threshold", c.queue_threshold),
        };
        if per_disk > depth {
            return Err(config_err(key, format!("{per_disk} exceeds the drive's command queue depth of {depth}")));
        }
        let mut workload = cfg.workload.clone();
        if let WorkloadConfig::Trace(t) = &mut workload {
            if t.device_disks && (cfg.disk.array != ArrayLayout::Concat) {
                return Err(config_err("workload.device_disks", "needs disk.array = \"concat\""));
            }
            t.array_disks = n;
        }
        let generator = workload.build(array.capacity(), model.spec.sector_bytes, cfg.base_dir.as_deref())?;
        if let (Some(w), Some(d)) = (series_window, cfg.run.duration_ms) {
            // Known before the run: every client and timed row over every window of the run's duration.
            let windows = (SimDuration::from_ms(d).ns() / w.ns().max(1)).saturating_add(1);
            let rows = (generator.clients() as u64 + timed_rows).saturating_mul(windows);
            if rows > crate::metrics::MAX_SERIES_ROWS {
                return Err(config_err("run.series_window_ms", format!(
                    "{} ms windows over run.duration_ms = {d} ms need {windows} windows x {} rows (clients, shaper rates, freeblock tasks), \
                     more than {} series rows; choose a window of at least {} ms",
                    w.as_ms_f64(), rows / windows, crate::metrics::MAX_SERIES_ROWS,
                    (d * (rows / windows) as f64 / crate::metrics::MAX_SERIES_ROWS as f64).ceil())));
            }
        }
        // Every disk of an array runs the tasks over its own blocks: in firmware
        // with the drive as its model; outside with an external scheduler of its
        // own (its belief, its noise stream `seed ^ disk`, its commands).
        let fb_belief = match cfg.freeblock.as_ref().and_then(|f| f.belief.as_ref()) {
            Some(b) => b.model("freeblock.belief", &model, cfg.base_dir.as_deref())?,
            None => model.clone(),
        };
        if cfg.freeblock.as_ref().is_some_and(|f| !f.external()) {
            units[0].clock = Some((0, 0)); // in firmware the drive's scheduler is the foreground's
        }
        for (d, unit) in units.iter_mut().enumerate() {
            unit.freeblock = crate::background::freeblock::build_with_belief(cfg.freeblock.as_ref(), &model, &fb_belief, cfg.seed ^ d as u64,
                                                                                  series_window.map(|w| w.ns()))?;
        }
        let mut reconfigure = Vec::new();
        for (i, r) in cfg.reconfigure.iter().enumerate() {
            let which = match r.queue.as_str() {
                "host" => Reconfigured::Level(0),
                "controller" => Reconfigured::Level(1),
                _ => Reconfigured::Disks,
            };
            let copies = if matches!(which, Reconfigured::Disks) { n } else { 1 };
            let s = (0..copies).map(|_| build_queue_sched(&format!("reconfigure[{i}]"), &r.scheduler, &r.set))
                .collect::<Result<Vec<_>>>()?;
            reconfigure.push((SimTime::ZERO + SimDuration::from_ms(r.at_ms), which, s));
        }
        let mut metrics = Metrics::new(cfg.run.warmup_requests, cfg.run.records, model.spec.sector_bytes);
        if let Some(w) = series_window {
            metrics.keep_series(w.ns());
        }
        if cfg.controller.is_some() {
            metrics.keep_controller_queue();
        }
        // Two commands at the drive overlap the next one's processing and data with the media access.
        let external = cfg.freeblock.as_ref().is_some_and(|f| f.external() && f.drive_queue_depth >= 2);
        // Each level above the disks believes the truth unless it has a belief of its own.
        let mut level_predictors = vec![None; levels.len()];
        // In external mode the host's scheduler is the external scheduler's foreground half: it believes `[freeblock.belief]` unless given its own.
        let fb_host = cfg.freeblock.as_ref().filter(|f| f.external()).and_then(|f| f.belief.as_ref());
        let beliefs = [("host.belief", cfg.host.belief.as_ref().or(fb_host)), ("controller.belief", cfg.controller.as_ref().and_then(|c| c.belief.as_ref()))];
        for (i, (at, b)) in beliefs.into_iter().enumerate().take(levels.len()) {
            if let Some(b) = b.filter(|b| !b.is_exact()) {
                let p = b.predictor(at, &model, cfg.base_dir.as_deref())?;
                level_predictors[i] = Some(Predictor { overlapped: external, ..p });
            }
        }
        let belief_read = belief_read(cfg, &levels, &units);
        Ok(Simulation {
            engine: Engine::new(),
            shared: Shared {
                reqs: Default::default(),
                predictor: Predictor { overlapped: external, ..Predictor::exact(model.clone()) },
                placement: Default::default(),
                sector_bytes: model.spec.sector_bytes as u64,
                level_predictors,
            },
            generator,
            rng: crate::workload::SimRng::seed_from_u64(cfg.seed),
            levels,
            units,
            heads: Vec::new(),
            array,
            splits: Splits::default(),
            pieces: Vec::new(),
            metrics,
            acct: Accounting::default(),
            limit: cfg.run.requests.unwrap_or(match cfg.workload {
                WorkloadConfig::Trace(_) => u64::MAX, // the whole trace
                WorkloadConfig::Fio(_) => u64::MAX, // the job file says when its jobs end
                _ => 10_000,
            }),
            stop_arrivals_at: cfg.run.duration_ms.map(|ms| SimTime::ZERO + SimDuration::from_ms(ms)),
            model,
            reconfigure,
            completions: Vec::new(),
            started: false,
            classifier: None,
            task_events: cfg.freeblock.as_ref().map(|f| f.schedule()).unwrap_or_default(),
            host_clock: cfg.freeblock.as_ref().filter(|f| f.external()).map(|_| (0, 0)),
            published_time: None,
            series_end,
            series_timed_rows: timed_rows,
            series_window_ns: series_window.map_or(0, |w| w.ns()),
            retired_counters: Vec::new(),
            belief_read,
        })
    }
}

/// How much of the host's exact belief of the heads a run of `cfg` reads,
/// so the belief need follow each command only that far (timing it is
/// half a drive's work per request): nothing or the cylinder alone only on
/// one disk (over an array LBN schedulers pick a disk by when its heads are
/// free), with no reconfiguration (a later scheduler may read more), no
/// noise (its prediction errors are the belief's), no background work and
/// no range requests (placed from the heads); then what the most demanding
/// scheduler reads.
fn belief_read(cfg: &SimConfig, levels: &[QueueLevel], units: &[DiskUnit]) -> HeadsRead {
    if units.len() > 1 || !cfg.reconfigure.is_empty() || cfg.disk.noise.is_some() || cfg.freeblock.is_some() || cfg.workload.may_make_ranges() {
        return HeadsRead::Position;
    }
    levels.iter().map(|l| &l.sched).chain(units.iter().map(|u| &u.queue.sched)).map(|s| s.reads_heads()).max().unwrap_or(HeadsRead::Nothing)
}

/// The scheduler of a queue's config section (`level`: host, controller,
/// disk, reconfigure[i]); errors name `level.scheduler` or `level.set.KEY`.
fn build_queue_sched(level: &str, name: &str, set: &std::collections::BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>> {
    let settings: Vec<(String, f64)> = set.iter().map(|(k, v)| (k.clone(), *v)).collect();
    sched::build_as(Some("set"), name, &settings).map_err(|e| match e {
        Error::Config { what, msg } => Error::Config { what: format!("{level}.{what}"), msg },
        e => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(scheduler: &str, workload: &str) -> SimConfig {
        SimConfig::from_toml(&format!(r#"
seed = 3
[disk]
model = "atlas10k"
scheduler = "{scheduler}"
[host]
scheduler = "{scheduler}"
queue_threshold = 4
[workload]
{workload}
[run]
requests = 3000
"#), "test").unwrap()
    }

    /// A run that keeps only the belief its schedulers read gives the result
    /// of one that keeps it all: a scheduler that says it reads nothing, or
    /// the cylinder alone, truly does (else it would see a belief stuck at
    /// cylinder 0, or at a time that does not move, and order otherwise),
    /// and one that says it reads the heads only to dispatch orders the
    /// same when handed, at each arrival, the heads before the command in service.
    /// Over zoned drives with slips (atlas10k, cheetah4lp) and a track table
    /// (maxtor300g), and requests that cross tracks.
    #[test]
    fn a_run_keeping_only_the_belief_read_is_the_same_run() {
        let workloads = [
            "kind = \"open\"\ninterarrival_ms = 4.0\nread_fraction = 0.66",
            "kind = \"closed\"\nclients = 16\nthink_time_ms = 0.0\nread_fraction = 0.5\nsize_kb = 200.0",
        ];
        let mut checked = [0; 3];
        for model in ["atlas10k", "cheetah4lp", "maxtor300g"] {
            for s in crate::sched::REGISTRY.iter().map(|i| i.name) {
                for w in workloads {
                    let mut cfg = config(s, w);
                    cfg.disk.model = model.into();
                    let Ok(sim) = Simulation::new(&cfg) else { continue };
                    if sim.belief_read == HeadsRead::Position {
                        continue;
                    }
                    checked[sim.belief_read as usize] += 1;
                    let mut kept = Simulation::new(&cfg).unwrap();
                    kept.belief_read = HeadsRead::Position;
                    let (a, b) = (sim.run(&mut |_, _| true).unwrap(), kept.run(&mut |_, _| true).unwrap());
                    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap(), "{model} {s}: {w}");
                }
            }
        }
        // FCFS and the LBN-ordered schedulers at least without; SSTF and V(R)
        // with the cylinder alone; the SPTF family not followed at arrivals.
        assert!(checked[0] >= 3 * 2 * 8 && checked[1] >= 3 * 2 * 2 && checked[2] >= 3 * 2 * 5,
                "runs without a belief, with its cylinder, positions read only to dispatch: {checked:?}");
    }

    #[test]
    fn a_positional_scheduler_keeps_the_belief() {
        let open = "kind = \"open\"\ninterarrival_ms = 4.0";
        for (s, read) in [("sptf", HeadsRead::PositionToDispatch), ("sstf", HeadsRead::Cylinder), ("vscan", HeadsRead::Cylinder), ("fcfs", HeadsRead::Nothing)] {
            assert_eq!(Simulation::new(&config(s, open)).unwrap().belief_read, read, "{s}");
        }
        let mut cfg = config("sstf", open);
        cfg.disk.count = 2;
        assert_eq!(Simulation::new(&cfg).unwrap().belief_read, HeadsRead::Position, "over an array");
    }

    /// The cylinder a belief keeps without timing (`DiskUnit::start`) is
    /// where `DiskModel::serve` leaves the heads: the cylinder of the
    /// request's last block, for requests ending on, crossing and starting
    /// at a remapped defect (the one LBN stored off the track of the LBNs
    /// on either side) and crossing tracks and cylinders.
    #[test]
    fn the_belief_s_cylinder_is_the_last_block_s() {
        let (model, defect) = cheetah4lp_with_a_remapped_defect();
        let layout = &model.layout;
        let mut checked = 0;
        for (lbn, blocks) in [(defect - 7, 8), (defect - 7, 20), (defect, 1), (defect, 9), (0, 1), (1000, 500), (4_000_000, 2048)] {
            for is_write in [false, true] {
                let mut state = crate::disk::DriveState::default();
                model.serve(&mut state, crate::time::SimTime(0), lbn, blocks, is_write, &mut Default::default());
                assert_eq!(state.head.cylinder, layout.lbn_to_pbn(lbn + blocks as u64 - 1).cylinder, "{lbn}+{blocks} write {is_write}");
                checked += 1;
            }
        }
        assert_eq!(checked, 14);
    }

    /// Cheetah 4LP with one LBN remapped off its track, and that LBN: its one
    /// listed defect is remapped to itself, so remap one in its third zone's
    /// first sparing range to the range's last (spare) slot.
    fn cheetah4lp_with_a_remapped_defect() -> (DiskModel, u64) {
        let mut spec = builtin::resolve("cheetah4lp", None).unwrap();
        let range_slots = (spec.layout.sparing_range_cylinders * spec.surfaces * spec.layout.zones[2].sectors_per_track) as u64;
        spec.layout.zones[2].defects = vec![(5, range_slots - 1)];
        let model = DiskModel::new(spec).unwrap();
        let track = |lbn: u64| {
            let p = model.layout.lbn_to_pbn(lbn);
            (p.cylinder, p.head)
        };
        let remapped: Vec<u64> = (1..model.layout.capacity() - 1).filter(|&l| track(l) != track(l - 1) && track(l + 1) == track(l - 1)).collect();
        assert_eq!(remapped.len(), 1, "{remapped:?}");
        (model, remapped[0])
    }

    /// A belief whose last command the drive finished before it was read
    /// is placed where that command ended, untimed (`DiskUnit::settle_belief`):
    /// the track of the one piece the request was mapped to on arrival
    /// (`Predictor::target_mapped`). That is where `DiskModel::serve` leaves
    /// the heads, from any start: checked at and around a remapped defect
    /// (its piece is its spare's track), across the disk, reads and writes.
    #[test]
    fn an_untimed_belief_ends_where_serving_leaves_it() {
        use crate::disk::{DriveState, HeadState};
        use crate::time::SimTime;
        let (model, defect) = cheetah4lp_with_a_remapped_defect();
        let predictor = Predictor::exact(std::sync::Arc::new(model));
        let (model, cap) = (&predictor.model, predictor.model.layout.capacity());
        let lbns = (defect - 9..defect + 3).chain((0..200).map(|k| k * (cap / 200) + k * 37 % 101));
        let mut checked = 0;
        for lbn in lbns {
            for blocks in [1, 8, 64] {
                let Some(piece) = predictor.target_mapped(lbn, blocks).1 else { continue };
                for is_write in [false, true] {
                    for from in [DriveState::default(), DriveState { head: HeadState { cylinder: 1500, head: 3, time: SimTime(7_000_000), ..Default::default() }, last_was_write: true }] {
                        let mut state = from;
                        model.serve(&mut state, SimTime(5_000_000), lbn, blocks, is_write, &mut Default::default());
                        assert_eq!((state.head.cylinder, state.head.head, state.head.next_lbn), (piece.cylinder, piece.head, Some(lbn + blocks as u64)),
                                   "{lbn}+{blocks} write {is_write}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
