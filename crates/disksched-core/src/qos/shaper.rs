//! The shaper: a `Scheduler` that wraps the host's scheduler (see `qos`).
//!
//! Requests of a shaped class wait in their pipe, reads and writes in
//! separate FIFOs (as blk-throttle keeps them, so a write waiting for `wiops`
//! does not hold up reads). A pipe head leaves at the moment its gates have
//! its tokens; the shaper does that bookkeeping whenever it is called
//! (insert, dispatch, complete), taking each request's tokens as of the time
//! they were there, so a bucket loses nothing while the disk is busy and no
//! call comes (the moment the request reaches the inner scheduler is the
//! call's). `dispatch` passes
//! the inner scheduler's choice through; when the inner scheduler has nothing
//! to send it returns `None` and `wake_at` says when the next token is due.
//! A forced dispatch with only gated requests left sends the oldest pipe
//! head without tokens (counted as `shaper_forced`; the simulation never
//! forces while a wake-up is pending).
//!
//! A real-time request's missed deadline is signalled when the deadline
//! passes, not when the late request completes (a starved request must
//! signal too): the shaper looks at the deadlines of the real-time requests
//! it holds or has passed on, at every call, and under a feedback policy asks
//! to be woken at the next deadline when it sends nothing. Each request
//! signals at most once. The pessimistic policy's real-time demand is the set
//! of declared real-time clients: a client declares itself with its first
//! request and withdraws once it has had nothing outstanding (queued or in
//! flight) for `rt_idle_ms`, so a starved stream, which always has a request
//! waiting, never looks idle.

use super::bucket::Bucket;
use super::{Policy, ShaperConfig, PIPE_TUNABLES, POLICY_TUNABLES};
use crate::error::Result;
use crate::host::{Class, ReqId};
use crate::sched::{check_tunables, SchedCtx, Scheduler};
use crate::time::{SimDuration, SimTime, NS_PER_S};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a gate counts and which requests it applies to.
#[derive(Clone, Copy, Debug)]
struct GateKind {
    name: &'static str,
    bytes: bool,
    reads: bool,
    writes: bool,
    /// The policy scales its rate.
    scaled: bool,
}

struct Gate {
    kind: GateKind,
    rate_per_s: f64,
    bucket: Bucket,
}

impl Gate {
    /// The rate in force when the policy runs shaped gates at `scale` of their configured rate.
    fn rate(&self, scale: f64) -> f64 {
        self.rate_per_s * if self.kind.scaled { scale } else { 1.0 }
    }
    fn applies(&self, is_write: bool) -> bool {
        if is_write { self.kind.writes } else { self.kind.reads }
    }
    /// Tokens a request of `blocks` takes.
    fn cost(&self, blocks: u32, sector_bytes: u32) -> f64 {
        if self.kind.bytes { blocks as f64 * sector_bytes as f64 } else { 1.0 }
    }
}

struct Pipe {
    class: Class,
    /// Reads, writes.
    queues: [VecDeque<ReqId>; 2],
    gates: Vec<Gate>,
}

/// The traffic shaper wrapping a scheduler (see the module doc).
pub struct Shaper {
    inner: Box<dyn Scheduler>,
    /// One per class, in release order (real-time first).
    pipes: Vec<Pipe>,
    held: usize,
    policy: Policy,
    cut_factor: f64,
    cut_holdoff: SimDuration,
    min_scale: f64,
    grow_per_ns: f64,
    rt_idle: SimDuration,
    /// Share of the configured rate the shaped gates run at.
    scale: f64,
    last_cut: Option<SimTime>,
    last_advance: SimTime,
    /// Declared real-time clients (pessimistic policy): requests outstanding, and since when none.
    rt_clients: BTreeMap<u32, (u32, SimTime)>,
    /// (deadline, seq) of real-time requests outstanding that have not yet missed.
    rt_deadlines: BTreeSet<(SimTime, u64)>,
    wake: Option<SimTime>,
    sample_every: Option<SimDuration>,
    next_sample: SimTime,
    samples: Vec<(SimTime, String, f64)>,
    delayed: u64,
    misses: u64,
    cuts: u64,
    resets: u64,
    forced: u64,
}

impl Shaper {
    /// `sample_every`: the period of the rate samples in `timeline` (none if absent).
    pub fn new(cfg: &ShaperConfig, inner: Box<dyn Scheduler>, sample_every: Option<SimDuration>) -> Result<Shaper> {
        let policy = Policy::parse(&cfg.policy)?;
        let settings = |m: &BTreeMap<String, f64>| m.iter().map(|(k, v)| (k.clone(), *v)).collect::<Vec<_>>();
        let t = check_tunables("host.shaper.set", POLICY_TUNABLES, &settings(&cfg.set))?;
        let mut pipes = Vec::new();
        for class in Class::ALL {
            let what = format!("host.shaper.{}", class.name());
            let p = check_tunables(&what, PIPE_TUNABLES, &settings(cfg.pipe(class)))?;
            let io_burst_s = p.get("io_burst_ms") / 1000.0;
            let kind = |name, bytes, reads, writes, scaled| GateKind { name, bytes, reads, writes, scaled };
            let scaled = class != Class::RealTime;
            let wanted = [
                (kind("rate_per_s", false, true, true, scaled), p.get("rate_per_s"), p.get("burst")),
                (kind("rate_kb_per_s", true, true, true, scaled), p.get("rate_kb_per_s") * 1024.0, p.get("burst_kb") * 1024.0),
                (kind("rbps", true, true, false, false), p.get("rbps"), p.get("rbps") * io_burst_s),
                (kind("wbps", true, false, true, false), p.get("wbps"), p.get("wbps") * io_burst_s),
                (kind("riops", false, true, false, false), p.get("riops"), p.get("riops") * io_burst_s),
                (kind("wiops", false, false, true, false), p.get("wiops"), p.get("wiops") * io_burst_s),
            ];
            let gates = wanted.into_iter().filter(|w| w.1 > 0.0)
                .map(|(kind, rate_per_s, capacity)| Gate { kind, rate_per_s, bucket: Bucket::new(capacity) })
                .collect();
            pipes.push(Pipe { class, queues: Default::default(), gates });
        }
        if policy != Policy::Fixed && !pipes.iter().any(|p| p.gates.iter().any(|g| g.kind.scaled)) {
            return Err(crate::error::config_err("host.shaper.policy", format!(
                "'{}' needs a rate to adjust: set rate_per_s or rate_kb_per_s of best-effort or background", cfg.policy)));
        }
        let mut s = Shaper {
            inner,
            pipes,
            held: 0,
            policy,
            cut_factor: t.get("cut_factor"),
            cut_holdoff: SimDuration::from_ms(t.get("cut_holdoff_ms")),
            min_scale: t.get("min_rate_pct") / 100.0,
            grow_per_ns: if policy == Policy::Optimistic { t.get("recover_pct_per_s") / 100.0 / NS_PER_S as f64 } else { 0.0 },
            rt_idle: SimDuration::from_ms(t.get("rt_idle_ms")),
            scale: 1.0,
            last_cut: None,
            last_advance: SimTime::ZERO,
            rt_clients: BTreeMap::new(),
            rt_deadlines: BTreeSet::new(),
            wake: None,
            sample_every: sample_every.filter(|d| d.0 > 0),
            next_sample: SimTime::ZERO,
            samples: Vec::new(),
            delayed: 0,
            misses: 0,
            cuts: 0,
            resets: 0,
            forced: 0,
        };
        s.sample_until(SimTime::ZERO);
        Ok(s)
    }

    fn scale_at(&self, t: SimTime) -> f64 {
        (self.scale + self.grow_per_ns * t.0.saturating_sub(self.last_advance.0) as f64).min(1.0)
    }

    /// Rates recorded at each sample time (the rows `timeline` gains per window).
    pub fn sampled_rates(&self) -> u64 {
        self.pipes.iter().flat_map(|p| &p.gates).filter(|g| matches!(g.kind.name, "rate_per_s" | "rate_kb_per_s")).count() as u64
    }

    /// Record the shaped rates at each sample time up to `now`.
    fn sample_until(&mut self, now: SimTime) {
        let Some(every) = self.sample_every else { return };
        while self.next_sample <= now {
            let scale = self.scale_at(self.next_sample);
            for p in &self.pipes {
                for g in p.gates.iter().filter(|g| matches!(g.kind.name, "rate_per_s" | "rate_kb_per_s")) {
                    let unit = if g.kind.bytes { 1024.0 } else { 1.0 };
                    let rate = g.rate(scale) / unit;
                    self.samples.push((self.next_sample, format!("{}.{}", p.class.name(), g.kind.name), rate));
                }
            }
            self.next_sample += every;
        }
    }

    /// Release what was due by `now`, then bring buckets, samples and the policy's rate up to `now`.
    fn advance(&mut self, ctx: &SchedCtx) {
        self.release(ctx);
        self.settle(ctx.now);
    }

    fn settle(&mut self, now: SimTime) {
        if now < self.last_advance {
            return;
        }
        let scale = self.scale;
        for g in self.pipes.iter_mut().flat_map(|p| p.gates.iter_mut()) {
            g.bucket.refill(now, g.rate(scale));
        }
        self.sample_until(now);
        self.scale = self.scale_at(now);
        self.last_advance = now;
        if self.policy == Policy::Pessimistic {
            let before = self.rt_clients.len();
            let idle = self.rt_idle;
            self.rt_clients.retain(|_, (outstanding, since)| *outstanding > 0 || *since + idle > now);
            if self.rt_clients.len() != before {
                self.demand_changed();
            }
        }
        // Deadlines that have passed (strictly: a request done at its deadline is on time).
        while let Some(&(d, seq)) = self.rt_deadlines.first().filter(|(d, _)| *d < now) {
            self.rt_deadlines.remove(&(d, seq));
            self.missed(now);
        }
    }

    /// A real-time deadline has passed: count it, and a feedback policy cuts the shaped rates.
    fn missed(&mut self, now: SimTime) {
        self.misses += 1;
        let ready = self.last_cut.is_none_or(|t| now >= t + self.cut_holdoff);
        if self.policy != Policy::Fixed && ready {
            self.scale = (self.scale * self.cut_factor).max(self.min_scale);
            self.last_cut = Some(now);
            self.cuts += 1;
        }
    }

    /// Real-time demand changed: the pessimistic policy starts again from the configured rates.
    fn demand_changed(&mut self) {
        if self.scale < 1.0 {
            self.scale = 1.0;
            self.resets += 1;
        }
    }

    /// When the head of `q` may leave (all its gates have its tokens), and its
    /// seq; `None` if `q` is empty or a gate's tokens come beyond the clock
    /// (then only a forced dispatch sends it, and no wake-up is asked for it).
    fn head_due(p: &Pipe, q: &VecDeque<ReqId>, ctx: &SchedCtx, scale: f64) -> Option<(SimTime, u64)> {
        let r = ctx.reqs.get(*q.front()?);
        let sector_bytes = ctx.predictor.model.spec.sector_bytes;
        let mut due = r.arrival;
        for g in p.gates.iter().filter(|g| g.applies(r.is_write)) {
            due = due.max(g.bucket.available_at(g.cost(r.blocks, sector_bytes), g.rate(scale), r.arrival)?);
        }
        Some((due, r.seq))
    }

    /// Move every pipe head due by now into the inner scheduler, earliest first,
    /// each taking its tokens as of its due time.
    fn release(&mut self, ctx: &SchedCtx) {
        let (scale, sector_bytes) = (self.scale, ctx.predictor.model.spec.sector_bytes);
        for p in &mut self.pipes {
            loop {
                let due = [0, 1].map(|q| Self::head_due(p, &p.queues[q], ctx, scale));
                let Some((q, (at, _))) = due.into_iter().enumerate().filter_map(|(q, d)| Some((q, d?))).min_by_key(|&(_, d)| d)
                    .filter(|&(_, (at, _))| at <= ctx.now) else { break };
                let id = p.queues[q].pop_front().expect("a due head");
                let r = ctx.reqs.get(id);
                for g in p.gates.iter_mut().filter(|g| g.applies(r.is_write)) {
                    g.bucket.refill(at, g.rate(scale));
                    g.bucket.take(g.cost(r.blocks, sector_bytes));
                }
                self.held -= 1;
                self.inner.insert(id, ctx);
            }
        }
    }

    /// The earliest time a pipe head will have all its tokens.
    fn next_token(&self, ctx: &SchedCtx) -> Option<SimTime> {
        self.pipes.iter().flat_map(|p| p.queues.iter().filter_map(move |q| Self::head_due(p, q, ctx, self.scale))).map(|d| d.0).min()
    }
}

impl Scheduler for Shaper {
    fn name(&self) -> &'static str {
        "shaper"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        self.advance(ctx);
        let r = ctx.reqs.get(id);
        if r.class == Class::RealTime {
            if let Some(d) = r.deadline {
                self.rt_deadlines.insert((d, r.seq));
                if d < ctx.now {
                    self.settle(ctx.now); // issued already late: it misses now
                }
            }
            if self.policy == Policy::Pessimistic {
                // A new real-time client declares its demand (one back within rt_idle_ms never withdrew).
                let declared = !self.rt_clients.contains_key(&r.client);
                self.rt_clients.entry(r.client).or_insert((0, ctx.now)).0 += 1;
                if declared {
                    self.demand_changed();
                }
            }
        }
        let i = self.pipes.iter().position(|p| p.class == r.class).expect("a pipe per class");
        if self.pipes[i].gates.is_empty() {
            self.inner.insert(id, ctx);
            return;
        }
        let q = r.is_write as usize;
        self.pipes[i].queues[q].push_back(id);
        self.held += 1;
        self.release(ctx);
        // Pipes only release from the front: still at the back means it waits.
        if self.pipes[i].queues[q].back() == Some(&id) {
            self.delayed += 1;
        }
    }
    fn dispatch(&mut self, ctx: &SchedCtx, force: bool) -> Option<ReqId> {
        self.advance(ctx);
        self.wake = None;
        if force && self.inner.is_empty() {
            // Work conservation when the owner insists: the oldest head goes without tokens.
            let q = self.pipes.iter_mut().flat_map(|p| p.queues.iter_mut()).filter(|q| !q.is_empty())
                .min_by_key(|q| ctx.reqs.get(q[0]).seq)?;
            let id = q.pop_front().expect("non-empty queue");
            self.held -= 1;
            self.forced += 1;
            self.inner.insert(id, ctx);
        }
        if let Some(id) = self.inner.dispatch(ctx, force) {
            return Some(id);
        }
        let mut wake = self.inner.wake_at().into_iter().chain(self.next_token(ctx)).min();
        if self.held > 0 && self.policy == Policy::Pessimistic && self.scale < 1.0 {
            // A real-time client withdrawing raises the rates: look again then.
            let withdraw = self.rt_clients.values().filter(|c| c.0 == 0).map(|c| c.1 + self.rt_idle).min();
            wake = wake.into_iter().chain(withdraw).min();
        }
        if self.policy != Policy::Fixed {
            // The next real-time deadline to pass cuts the rates: be there (just after it).
            let next_miss = self.rt_deadlines.first().map(|&(d, _)| d + SimDuration(1));
            wake = wake.into_iter().chain(next_miss).min();
        }
        self.wake = wake;
        None
    }
    fn complete(&mut self, id: ReqId, ctx: &SchedCtx) {
        // A late request has signalled its miss here (advance) or before.
        self.advance(ctx);
        let r = ctx.reqs.get(id);
        if r.class == Class::RealTime {
            if let Some(d) = r.deadline {
                self.rt_deadlines.remove(&(d, r.seq));
            }
            if let Some(c) = self.rt_clients.get_mut(&r.client) {
                c.0 = c.0.saturating_sub(1);
                if c.0 == 0 {
                    c.1 = ctx.now;
                }
            }
        }
        self.inner.complete(id, ctx);
        self.release(ctx);
    }
    fn wake_at(&self) -> Option<SimTime> {
        self.wake
    }
    fn drain(&mut self) -> Vec<ReqId> {
        self.held = 0;
        let mut all: Vec<ReqId> = self.pipes.iter_mut().flat_map(|p| p.queues.iter_mut()).flat_map(|q| q.drain(..)).collect();
        all.extend(self.inner.drain());
        all
    }
    fn len(&self) -> usize {
        self.held + self.inner.len()
    }
    fn init_class(&mut self, flow: u32) {
        self.inner.init_class(flow);
    }
    fn travel_first(&mut self) -> crate::sched::Travel {
        self.inner.travel_first()
    }
    fn uses_classes(&self) -> bool {
        self.inner.uses_classes()
    }
    fn fini_class(&mut self, flow: u32) {
        self.inner.fini_class(flow);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut c = self.inner.counters();
        c.extend([("shaper_delayed", self.delayed), ("shaper_rt_misses", self.misses), ("shaper_rate_cuts", self.cuts),
                  ("shaper_rate_resets", self.resets), ("shaper_forced", self.forced)]);
        c
    }
    fn timeline(&mut self, end: SimTime) -> Vec<(SimTime, String, f64)> {
        self.settle(end);
        let mut t = self.inner.timeline(end);
        t.append(&mut self.samples);
        t
    }
}
