//! The predictor: a scheduler's belief about the drive.
//!
//! Schedulers never read the simulated drive; they ask a `Predictor` how long
//! a request would take from a given head state. Built on the same
//! `DiskModel` as the drive it is exact ("in firmware"); built on a different
//! model, or with seek conservatism, it is an external scheduler's view.

use crate::disk::layout::TrackPiece;
use crate::disk::mechanics::sector_phase;
use crate::disk::{Access, DiskModel, HeadState};
use crate::time::SimTime;
use std::sync::Arc;

/// Where a request's first sector is: computed once when the request arrives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// Cylinder of the first sector.
    pub cylinder: u32,
    /// Head of the first sector.
    pub head: u32,
    /// Phase (see `mechanics`) at which the first sector starts passing under the head.
    pub phase: u64,
    /// Sectors on the target's track (a write's data feed depends on it).
    pub spt: u32,
    /// The request's first LBN (`Target::ANY_LBN` for a place rather than a
    /// request): a write continuing the last command skips the minimum seek delay.
    pub lbn: u64,
}

impl Target {
    /// `lbn` of a target that is a place, not a request.
    pub const ANY_LBN: u64 = u64::MAX;
}

/// Positioning time split into its parts, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Positioning {
    /// Command processing before the heads move.
    pub overhead_ns: u64,
    /// Seek or head switch (plus settle), ns.
    pub seek_ns: u64,
    /// A write waiting, after the seek, until its data can keep ahead of the head.
    pub bus_wait_ns: u64,
    /// Rotational wait for the first sector, ns.
    pub rotation_ns: u64,
}

impl Positioning {
    /// Time from the command's start until its first sector passes under the head.
    pub fn total_ns(&self) -> u64 {
        self.ready_ns() + self.rotation_ns
    }
    /// Time from the command's start until the heads wait for the first sector.
    pub fn ready_ns(&self) -> u64 {
        self.overhead_ns + self.seek_ns + self.bus_wait_ns
    }
}

#[derive(Clone)]
/// A belief of the drive's timing: predicts positioning from a model, optionally with margins.
pub struct Predictor {
    /// The drive model the predictions come from.
    pub model: Arc<DiskModel>,
    /// Added to every predicted head movement (an external scheduler's safety margin).
    pub seek_conservatism_ns: u64,
    /// Commands wait in the drive's queue behind the one in service (an
    /// external scheduler's two-deep queueing), so their processing overhead
    /// and write data transfer overlap it: positioning counts neither.
    pub overlapped: bool,
    /// The belief has a model of its own (`disk::belief`): it maps each
    /// request's LBN, and the LBN the heads last passed, with that model
    /// instead of trusting the targets computed from the truth's layout.
    pub own_layout: bool,
    /// Geometry-blind belief: positioning is this many ns per block of LBN
    /// distance from the last LBN transferred (no cylinders, no rotation).
    pub blind_ns_per_block: Option<f64>,
    /// The belief's cylinders are not the truth's (another model, or
    /// blind): `seek_floor_ns` over the truth's cylinder distances is no
    /// bound, so it is 0 (searches then visit every request).
    pub no_floor: bool,
}

impl Predictor {
    /// A predictor that believes `model` exactly: no margin, no overlap.
    pub fn exact(model: Arc<DiskModel>) -> Predictor {
        Predictor { model, seek_conservatism_ns: 0, overlapped: false, own_layout: false, blind_ns_per_block: None, no_floor: false }
    }

    /// Where `lbn`'s sector is, as a positioning target.
    pub fn target(&self, lbn: u64) -> Target {
        let (p, spt) = self.model.layout.lbn_to_pbn_spt(lbn);
        Target { cylinder: p.cylinder, head: p.head, phase: sector_phase(p.sector, spt), spt, lbn }
    }

    /// `target(lbn)` of a request of `blocks` (> 0), and its track piece when
    /// it lies on one track (`pieces(lbn, blocks)` whole), so that a drive
    /// with this layout need not map it again (`Layout::seed_memo`).
    pub fn target_mapped(&self, lbn: u64, blocks: u32) -> (Target, Option<TrackPiece>) {
        if blocks == 0 {
            return (self.target(lbn), None);
        }
        let p = self.model.layout.first_piece(lbn, blocks);
        (Target { lbn, ..Self::piece_target(&p) }, (p.blocks == blocks).then_some(p))
    }

    /// Where a track piece starts, as a positioning target (no request LBN).
    pub fn piece_target(piece: &TrackPiece) -> Target {
        Target { cylinder: piece.cylinder, head: piece.head, phase: sector_phase(piece.first_sector, piece.sectors_per_track), spt: piece.sectors_per_track, lbn: Target::ANY_LBN }
    }

    /// Seek and rotational latency to reach `to` for a request of `blocks`,
    /// starting at `from.time` with the heads at (`from.cylinder`,
    /// `from.head`). `from_phase` must be the platter phase at `from.time`
    /// (callers predicting many requests from one state compute it once).
    #[inline(always)]
    pub fn positioning(&self, from: &HeadState, from_phase: u64, to: &Target, is_write: bool, blocks: u32) -> Positioning {
        if self.own_layout || self.blind_ns_per_block.is_some() {
            return self.believed_positioning(from, from_phase, to, is_write, blocks);
        }
        self.exact_positioning(from, from_phase, to, is_write, blocks)
    }

    /// `positioning` with `from` and `to` taken as given (in this model's coordinates).
    #[inline(always)]
    fn exact_positioning(&self, from: &HeadState, from_phase: u64, to: &Target, is_write: bool, blocks: u32) -> Positioning {
        let m = &self.model.mech;
        let ctl = &self.model.controller;
        if !is_write {
            // The heads move only once the controller has processed the command.
            let overhead_ns = if self.overlapped { 0 } else { ctl.overhead_ns[0][from.last_was_write as usize] };
            let seek_ns = self.model.position_ns((from.cylinder, from.head), (to.cylinder, to.head), Access::Read, self.seek_conservatism_ns);
            let arrive = m.phase_after(from_phase, overhead_ns + seek_ns);
            return Positioning { overhead_ns, seek_ns, bus_wait_ns: 0, rotation_ns: m.rotate_ns(arrive, to.phase) };
        }
        self.write_positioning(from, from_phase, to, blocks)
    }

    /// A belief with a model of its own, or none (blind): `from` and `to`
    /// re-mapped with the belief's own layout from their LBNs. Out of line:
    /// the exact path above stays small.
    #[inline(never)]
    fn believed_positioning(&self, from: &HeadState, from_phase: u64, to: &Target, is_write: bool, blocks: u32) -> Positioning {
        if let Some(k) = self.blind_ns_per_block {
            // Only LBN distance is known: from the block after the last one transferred.
            let at = from.next_lbn.unwrap_or(0);
            let d = if to.lbn == Target::ANY_LBN { 0 } else { at.abs_diff(to.lbn) };
            return Positioning { seek_ns: (d as f64 * k).round() as u64, ..Default::default() };
        }
        let to = if to.lbn == Target::ANY_LBN { *to } else { self.target(to.lbn) };
        let mut from = *from;
        if let Some(n) = from.next_lbn.filter(|&n| n > 0) {
            let p = self.model.layout.lbn_to_pbn((n - 1).min(self.model.layout.capacity() - 1));
            (from.cylinder, from.head) = (p.cylinder, p.head);
        }
        self.exact_positioning(&from, from_phase, &to, is_write, blocks)
    }

    /// A write's positioning as the drive times it (`ControllerTiming::write_plan`:
    /// on a write-back drive, its destage): the minimum seek delay unless it
    /// appends to a destage, and the wait for its data. The drive starts
    /// once the first blocks are in and loses a revolution if the rest falls
    /// behind the head; on one track that is the same as starting once the
    /// rest can keep ahead, which does not depend on where the platter is
    /// (searches over many targets rely on that). `from.time` is when the
    /// heads are free (a destage's end). Kept out of line so the read path
    /// of `positioning` stays small enough to inline.
    #[inline(never)]
    fn write_positioning(&self, from: &HeadState, from_phase: u64, to: &Target, blocks: u32) -> Positioning {
        let (m, ctl) = (&self.model.mech, &self.model.controller);
        let continues = from.next_lbn == Some(to.lbn);
        let appends = ctl.fast_write && from.last_was_write && continues && self.model.spec.controller.combine_seq_writes;
        let plan = ctl.write_plan(0, from.last_was_write, continues, blocks, None, appends);
        let overhead_ns = if self.overlapped { 0 } else { plan.overhead_ns };
        let access = if appends { Access::AppendedWrite } else { Access::Write };
        let seek_ns = self.model.position_ns((from.cylinder, from.head), (to.cylinder, to.head), access, self.seek_conservatism_ns);
        let bus_wait_ns = if self.overlapped { 0 } else {
            let (bus, sector) = (ctl.bus_write_sector_ns, m.sector_ns(to.spt));
            let n = blocks.clamp(1, to.spt) as u64;
            let first = plan.data.first_blocks as u64;
            let keeps_ahead = (first * bus).max((n * bus).saturating_sub((n - 1) * sector));
            (plan.data.data_from + keeps_ahead).saturating_sub(overhead_ns + seek_ns)
        };
        let arrive = m.phase_after(from_phase, overhead_ns + seek_ns + bus_wait_ns);
        Positioning { overhead_ns, seek_ns, bus_wait_ns, rotation_ns: m.rotate_ns(arrive, to.phase) }
    }

    /// Positioning time from a head state at a time: the convenient form.
    pub fn positioning_at(&self, from: &HeadState, to: &Target, is_write: bool, blocks: u32) -> Positioning {
        self.positioning(from, self.model.mech.phase_at(from.time), to, is_write, blocks)
    }

    /// A lower bound on the positioning time to any request `distance` or
    /// more cylinders away (for pruning searches over deep queues).
    #[inline]
    pub fn seek_floor_ns(&self, distance: u32) -> u64 {
        if distance == 0 || self.no_floor { 0 } else { self.model.mech.seek_floor_ns(distance) + self.seek_conservatism_ns }
    }

    /// Phase at a time (cache it when predicting many requests from one state).
    pub fn phase_at(&self, t: SimTime) -> u64 {
        self.model.mech.phase_at(t)
    }
}
