//! Several workloads at once: `clients = [ { kind = ..., class = ..., flow = ... }, ... ]`.
//!
//! Each member is any other workload table (a mix may nest). Its clients keep
//! their own numbering, shifted to start at the member's `flow` id (default:
//! just past the previous members' clients), so client ids never collide and
//! a request's client id tells which member (flow) it came from. Every
//! request of a member carries the member's `class` (best-effort, real-time
//! or background), and, with `deadline_ms`, the deadline arrival +
//! `deadline_ms` (for EDF-style schedulers).
//!
//! The run ends when any member runs out of requests (a trace that ends),
//! just as a single workload's end ends a run.

use super::{Generator, IoSpec, SimRng, WorkloadConfig};
use crate::error::{config_err, Error, Result};
use crate::host::Class;
use crate::schema::{Param, Ty};
use crate::time::{SimDuration, SimTime};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::Path;

const MEMBERS: Param = Param::int("clients", "members", 1.0, f64::NAN, 10_000.0, "");
const DEADLINE_MS: Param = Param::float("deadline_ms", "ms", 0.0, f64::NAN, super::MAX_TIME_MS,
    "relative deadline stamped on each request (arrival + this)").open_min().default_text("absent: none");

/// `kind = "mix"` keys.
pub const PARAMS: &[Param] = &[Param::other("clients", Ty::List, "required",
    "1 to 10000 members: `[[workload.clients]]` tables, each a workload (any kind) plus the keys below")];

/// What a mix adds to each member's workload table.
pub const MEMBER_PARAMS: &[Param] = &[
    Param::other("class", Ty::Choice(&["best-effort", "real-time", "background"]), "best-effort", "class of every request of the member"),
    Param::int("flow", "client id", 0.0, f64::NAN, u32::MAX as f64,
        "first client id of the member; ids may not overlap").default_text("absent: after the previous members"),
    DEADLINE_MS,
];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `kind = "mix"`: several workloads at once.
pub struct MixConfig {
    #[serde(deserialize_with = "de_members")]
    /// The members (`[[workload.clients]]`).
    pub clients: Vec<MixMember>,
}

/// One member of a mix: a workload plus what the mix adds to it.
#[derive(Clone, Debug, Serialize)]
pub struct MixMember {
    #[serde(flatten)]
    /// The member's own workload.
    pub workload: WorkloadConfig,
    /// Class of every request of the member (default best-effort).
    pub class: Class,
    /// First client id of this member.
    pub flow: Option<u32>,
    /// Relative deadline stamped on each request, ms.
    pub deadline_ms: Option<f64>,
}

/// Members are read as plain tables first: the mix's own keys are taken out
/// and the rest must be a workload, so every error can name the member's
/// index (serde's flatten cannot do that, nor reject unknown keys).
fn de_members<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<MixMember>, D::Error> {
    let raw: Vec<serde_json::Map<String, serde_json::Value>> = Vec::deserialize(d)?;
    raw.into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            let ctx = |e: serde_json::Error| D::Error::custom(format!("workload.clients[{i}]: {e}"));
            let class = m.remove("class").map(serde_json::from_value::<Class>).transpose().map_err(ctx)?.unwrap_or_default();
            let flow = m.remove("flow").map(serde_json::from_value::<u32>).transpose().map_err(ctx)?;
            let deadline_ms = m.remove("deadline_ms").map(serde_json::from_value::<f64>).transpose().map_err(ctx)?;
            let workload = serde_json::from_value::<WorkloadConfig>(serde_json::Value::Object(m)).map_err(ctx)?;
            Ok(MixMember { workload, class, flow, deadline_ms })
        })
        .collect()
}

struct Member {
    gen: Box<dyn Generator>,
    base: u32,
    class: Class,
    deadline: Option<SimDuration>,
}

/// The mix generator: each member's generator under its own client ids.
pub struct Mix {
    members: Vec<Member>,
    /// (first client id, member index), sorted by id.
    by_base: Vec<(u32, usize)>,
    clients: u32,
}

/// `workload.x` from member `i` becomes `workload.clients[i].x`.
fn in_member(e: Error, i: usize) -> Error {
    match e {
        Error::Config { what, msg } => {
            let what = match what.strip_prefix("workload.") {
                Some(rest) => format!("workload.clients[{i}].{rest}"),
                None => format!("workload.clients[{i}]: {what}"),
            };
            Error::Config { what, msg }
        }
        e => e,
    }
}

impl Mix {
    /// The members' generators for a disk of `capacity` blocks of `sector_bytes`; a member's config errors name it (`workload.clients[i]`).
    pub fn new(cfg: &MixConfig, capacity: u64, sector_bytes: u32, base_dir: Option<&Path>) -> Result<Mix> {
        if !MEMBERS.allows(cfg.clients.len() as f64) {
            return Err(config_err("workload.clients", format!("{} members is out of range {}", cfg.clients.len(), MEMBERS.bounds_text())));
        }
        let mut members = Vec::with_capacity(cfg.clients.len());
        let mut ranges: Vec<(u64, u64, usize)> = Vec::new();
        let mut next_free: u64 = 0;
        for (i, m) in cfg.clients.iter().enumerate() {
            let gen = m.workload.build(capacity, sector_bytes, base_dir).map_err(|e| in_member(e, i))?;
            if let Some(d) = m.deadline_ms {
                DEADLINE_MS.check(&format!("workload.clients[{i}]"), d)?;
            }
            let base = m.flow.map_or(next_free, u64::from);
            let end = base + gen.clients() as u64;
            if end > u32::MAX as u64 {
                return Err(config_err(format!("workload.clients[{i}].flow"), format!(
                    "{base} + {} clients is out of range [0, {}]", gen.clients(), u32::MAX)));
            }
            if let Some(&(lo, hi, j)) = ranges.iter().find(|&&(lo, hi, _)| base < hi && lo < end) {
                return Err(config_err(format!("workload.clients[{i}].flow"), format!(
                    "client ids {base}..{end} overlap member {j}'s {lo}..{hi}; choose flow >= {}", ranges.iter().map(|r| r.1).max().unwrap_or(0))));
            }
            ranges.push((base, end, i));
            next_free = next_free.max(end);
            members.push(Member { gen, base: base as u32, class: m.class, deadline: m.deadline_ms.map(SimDuration::from_ms) });
        }
        let mut by_base: Vec<(u32, usize)> = members.iter().enumerate().map(|(i, m)| (m.base, i)).collect();
        by_base.sort_unstable();
        Ok(Mix { members, by_base, clients: next_free as u32 })
    }

    /// (member index, the member's own client id).
    fn locate(&self, client: u32) -> (usize, u32) {
        let k = self.by_base.partition_point(|&(b, _)| b <= client) - 1;
        let i = self.by_base[k].1;
        (i, client - self.members[i].base)
    }
}

impl Generator for Mix {
    fn start(&mut self, rng: &mut SimRng) -> Vec<(SimTime, u32)> {
        let mut all = Vec::new();
        for m in &mut self.members {
            all.extend(m.gen.start(rng).into_iter().map(|(t, c)| (t, c + m.base)));
        }
        all
    }
    fn arrive(&mut self, now: SimTime, client: u32, rng: &mut SimRng) -> Option<(IoSpec, Option<SimTime>)> {
        let (i, local) = self.locate(client);
        let m = &mut self.members[i];
        let (mut io, next) = m.gen.arrive(now, local, rng)?;
        io.class = m.class;
        if let Some(d) = m.deadline {
            io.deadline = Some(now + d);
        }
        Some((io, next))
    }
    fn completed(&mut self, now: SimTime, client: u32, rng: &mut SimRng) -> Option<SimTime> {
        let (i, local) = self.locate(client);
        self.members[i].gen.completed(now, local, rng)
    }
    fn flow(&self, client: u32) -> u32 {
        let (i, local) = self.locate(client);
        self.members[i].base + self.members[i].gen.flow(local)
    }
    fn placed(&mut self, client: u32, lbn: u64, blocks: u32) {
        let (i, local) = self.locate(client);
        self.members[i].gen.placed(local, lbn, blocks);
    }
    fn clients(&self) -> u32 {
        self.clients
    }
    fn take_error(&mut self) -> Option<Error> {
        self.members.iter_mut().enumerate().find_map(|(i, m)| m.gen.take_error().map(|e| in_member(e, i)))
    }
    fn bad_lines_skipped(&self) -> u64 {
        self.members.iter().map(|m| m.gen.bad_lines_skipped()).sum()
    }
}
