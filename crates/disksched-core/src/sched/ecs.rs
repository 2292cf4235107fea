//! ECS: expand-and-cancel scheduling of range requests (Anand et al., OSDI
//! 2008). Each range request is expanded on insert into one entry per
//! acceptable start; plain SPTF runs over all entries; when an entry is
//! chosen, the request's other entries are cancelled. Simple, and as exact
//! as HRS (it minimises the same key), but its queue holds every start of
//! every request: a 4096-target write is 4096 entries to insert, search and
//! cancel.

use super::{SchedCtx, Scheduler, HeadsRead};
use crate::disk::Target;
use crate::host::range::Choice;
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The ECS range scheduler (see the module doc).
pub struct Ecs {
    /// Entries by (disk, cylinder, seq, start LBN).
    entries: BTreeMap<(u32, u32, u64, u64), (ReqId, Target)>,
    requests: usize,
}

impl Ecs {
    fn entry_keys(ctx: &SchedCtx, id: ReqId) -> Vec<((u32, u32, u64, u64), Target)> {
        let r = ctx.reqs.get(id);
        match r.range.as_deref() {
            Some(t) => t.starts().map(|(lbn, tg)| ((r.disk, tg.cylinder, r.seq, lbn), tg)).collect(),
            None => vec![((r.disk, r.target.cylinder, r.seq, r.lbn), r.target)],
        }
    }
}

impl Scheduler for Ecs {
    fn name(&self) -> &'static str {
        "ecs"
    }
    fn reads_heads(&self) -> HeadsRead {
        HeadsRead::PositionToDispatch
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        for (key, target) in Self::entry_keys(ctx, id) {
            self.entries.insert(key, (id, target));
        }
        self.requests += 1;
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let mut best: Option<(Choice, ReqId)> = None;
        // One disk after another (over an array), each walked outward from its own heads.
        let mut disk = self.entries.keys().next().map(|k| k.0);
        while let Some(d) = disk {
            let head = ctx.head_of(d);
            let phase = ctx.predictor.phase_at(head.time);
            let c = head.cylinder;
            let mut up = self.entries.range((d, c, 0, 0)..=(d, u32::MAX, u64::MAX, u64::MAX)).peekable();
            let mut down = self.entries.range((d, 0, 0, 0)..(d, c, 0, 0)).rev().peekable();
            loop {
                // Only an unclaimed best bounds the search (see `host::range::Choice`).
                let limit = best.filter(|b| !b.0.claimed).map_or(u64::MAX, |b| b.0.positioning_ns);
                let up_next = up.peek().filter(|(k, _)| ctx.predictor.seek_floor_ns(k.1 - c) <= limit);
                let down_next = down.peek().filter(|(k, _)| ctx.predictor.seek_floor_ns(c - k.1) <= limit);
                let take_up = match (up_next, down_next) {
                    (Some(u), Some(d)) => u.0 .1 - c <= c - d.0 .1,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => break,
                };
                let (&(_, _, seq, lbn), &(id, target)) = if take_up { up.next().unwrap() } else { down.next().unwrap() };
                let r = ctx.reqs.get(id);
                let p = ctx.predictor.positioning(head, phase, &target, r.is_write, r.blocks);
                let mut choice = Choice { claimed: false, positioning_ns: p.total_ns(), seq, lbn };
                if best.is_some_and(|b| choice >= b.0) {
                    continue;
                }
                // Ordinary requests ignore claims; a range request's claimed start ranks last.
                choice.claimed = r.range.is_some() && ctx.claims.blocks(r, lbn);
                if best.is_none_or(|b| choice < b.0) {
                    best = Some((choice, id));
                }
            }
            disk = d.checked_add(1).and_then(|n| self.entries.range((n, 0, 0, 0)..).next().map(|(k, _)| k.0));
        }
        let (_, id) = best?;
        // Cancel the request's other entries.
        for (key, _) in Self::entry_keys(ctx, id) {
            self.entries.remove(&key);
        }
        self.requests -= 1;
        Some(id)
    }
    fn drain(&mut self) -> Vec<ReqId> {
        let mut ids: Vec<ReqId> = std::mem::take(&mut self.entries).into_values().map(|(id, _)| id).collect();
        ids.sort_unstable();
        ids.dedup();
        self.requests = 0;
        ids
    }
    fn len(&self) -> usize {
        self.requests
    }
}
