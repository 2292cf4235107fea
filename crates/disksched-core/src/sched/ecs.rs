//! ECS: expand-and-cancel scheduling of range requests (Anand et al., OSDI
//! 2008). Each range request is expanded on insert into one entry per
//! acceptable start; plain SPTF runs over all entries; when an entry is
//! chosen, the request's other entries are cancelled. Simple, and as exact
//! as HRS (it minimises the same key), but its queue holds every start of
//! every request: a 4096-target write is 4096 entries to insert, search and
//! cancel.

use super::{SchedCtx, Scheduler};
use crate::disk::Target;
use crate::host::range::Choice;
use crate::host::ReqId;
use std::collections::BTreeMap;

#[derive(Default)]
/// The ECS range scheduler (see the module doc).
pub struct Ecs {
    /// Entries by (cylinder, seq, start LBN).
    entries: BTreeMap<(u32, u64, u64), (ReqId, Target)>,
    requests: usize,
}

impl Ecs {
    fn entry_keys(ctx: &SchedCtx, id: ReqId) -> Vec<((u32, u64, u64), Target)> {
        let r = ctx.reqs.get(id);
        match r.range.as_deref() {
            Some(t) => t.starts().map(|(lbn, tg)| ((tg.cylinder, r.seq, lbn), tg)).collect(),
            None => vec![((r.target.cylinder, r.seq, r.lbn), r.target)],
        }
    }
}

impl Scheduler for Ecs {
    fn name(&self) -> &'static str {
        "ecs"
    }
    fn insert(&mut self, id: ReqId, ctx: &SchedCtx) {
        for (key, target) in Self::entry_keys(ctx, id) {
            self.entries.insert(key, (id, target));
        }
        self.requests += 1;
    }
    fn dispatch(&mut self, ctx: &SchedCtx, _force: bool) -> Option<ReqId> {
        let head = &ctx.head;
        let phase = ctx.predictor.phase_at(head.time);
        let c = head.cylinder;
        let mut up = self.entries.range((c, 0, 0)..).peekable();
        let mut down = self.entries.range(..(c, 0, 0)).rev().peekable();
        let mut best: Option<(Choice, ReqId)> = None;
        loop {
            // Only an unclaimed best bounds the search (see `host::range::Choice`).
            let limit = best.filter(|b| !b.0.claimed).map_or(u64::MAX, |b| b.0.positioning_ns);
            let up_next = up.peek().filter(|(k, _)| ctx.predictor.seek_floor_ns(k.0 - c) <= limit);
            let down_next = down.peek().filter(|(k, _)| ctx.predictor.seek_floor_ns(c - k.0) <= limit);
            let take_up = match (up_next, down_next) {
                (Some(u), Some(d)) => u.0 .0 - c <= c - d.0 .0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (&(_, seq, lbn), &(id, target)) = if take_up { up.next().unwrap() } else { down.next().unwrap() };
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
