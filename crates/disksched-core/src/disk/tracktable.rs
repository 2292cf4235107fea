//! Table-driven layout: one record per physical track, built from DiskSim 4's
//! `dm_layout_g4` tree (`G4Spec`). Used instead of zones when sectors per
//! track differ by surface within a cylinder.
//!
//! The tree numbers *slots*. An index-table entry repeats its child (a track
//! pattern: one track; or another table) `slots_in_run / slots_per_child`
//! times, each repetition `slots_per_child` slots further, `cylinders_per_child`
//! cylinders further (down if the run's cylinder count is negative) and `skew`
//! revolutions further round; a child's offsets add to its parent's. Slips are
//! slots that hold no LBN: LBN = slot - slips below it.

use crate::disk::address::{Pbn, TrackPiece, TrackSpan};
use crate::disk::spec::G4Spec;
use crate::error::{config_err, Result};

const UREV: i64 = 1_000_000;

#[derive(Clone, Copy, Debug)]
struct Track {
    /// First slot and first LBN (the LBN of the first unslipped slot).
    slot: u64,
    lbn: u64,
    cyl: u32,
    head: u16,
    /// Slots on the track (<= spt) and LBNs it holds (slots minus slips).
    slots: u16,
    blocks: u16,
    spt: u16,
    /// Physical sector of the track's first slot.
    first_sector: u16,
}

#[derive(Clone, Debug)]
pub(crate) struct TrackTable {
    surfaces: u32,
    tracks: Vec<Track>,
    /// Track index by cylinder * surfaces + head (u32::MAX: no track).
    by_pos: Vec<u32>,
    /// Sorted slipped slots.
    slips: Vec<u64>,
    /// LBNs the table maps.
    pub(crate) mapped: u64,
}

struct Raw {
    slot: u64,
    cyl: i64,
    head: u32,
    slots: u32,
    spt: u32,
    urev: i64,
}

impl TrackTable {
    /// One past the highest cylinder the tree's tracks use (the tree is checked first).
    pub(crate) fn extent(g4: &G4Spec, surfaces: u32) -> std::result::Result<u32, String> {
        g4.check_limits(surfaces)?;
        Self::check(g4, surfaces)?;
        let mut raw = Vec::new();
        Self::expand(g4, g4.tables.len() - 1, 0, 0, 0, &mut raw);
        let max = raw.iter().map(|r| r.cyl).max().unwrap_or(0);
        if raw.iter().any(|r| r.cyl < 0) || max >= u32::MAX as i64 {
            return Err("a track's cylinder is out of range".into());
        }
        Ok(max as u32 + 1)
    }

    /// Check the tree: entries chain, runs are whole repetitions, children
    /// exist, come before their parents and cover what the parent says.
    /// Returns each table's slot count.
    fn check(g4: &G4Spec, surfaces: u32) -> std::result::Result<Vec<u64>, String> {
        let err = |m: String| m;
        if g4.tables.is_empty() {
            return Err(err("no index tables".into()));
        }
        // Check every table: entries chain, runs are whole repetitions, children exist and fit.
        let mut totals = vec![0u64; g4.tables.len()];
        for (ti, t) in g4.tables.iter().enumerate() {
            let mut next = 0i64;
            if t.is_empty() {
                return Err(format!("table {ti} is empty"));
            }
            for (ei, e) in t.iter().enumerate() {
                let [lbn, _cyl, _off, len, clen, _skew, run, crun, kind, child, head] = *e;
                let at = format!("table {ti} entry {ei}");
                if lbn != next {
                    return Err(err(format!("{at}: starts at slot {lbn}, the previous entry ends at {next}")));
                }
                if len <= 0 || run <= 0 || run % len != 0 || clen < 0 || (run / len) * clen != crun.abs() {
                    return Err(err(format!("{at}: a run of {run} slots / {crun} cylinders is not a whole number of {len}-slot / {clen}-cylinder children")));
                }
                match kind {
                    0 => {
                        let p = g4.patterns.get(child as usize).ok_or_else(|| err(format!("{at}: no track pattern {child}")))?;
                        if child < 0 || p[2] as i64 != len || p[1] < p[0] || (p[1] - p[0] + 1) != p[2] || clen != 1 {
                            return Err(err(format!("{at}: track pattern {child} {p:?} does not hold the entry's {len} slots on one cylinder")));
                        }
                        if head < 0 || head as u32 >= surfaces {
                            return Err(err(format!("{at}: surface {head} is not below {surfaces}")));
                        }
                    }
                    1 => {
                        if child < 0 || child as usize >= ti {
                            return Err(err(format!("{at}: child table {child} must come before its parent")));
                        }
                        if totals[child as usize] != len as u64 {
                            return Err(err(format!("{at}: child table {child} covers {} slots, the entry says {len}", totals[child as usize])));
                        }
                    }
                    _ => return Err(err(format!("{at}: child kind {kind} is neither 0 (track) nor 1 (table)"))),
                }
                next = lbn + run;
            }
            totals[ti] = next as u64;
        }
        Ok(totals)
    }

    pub(crate) fn new(g4: &G4Spec, name: &str, surfaces: u32, cylinders: u32) -> Result<TrackTable> {
        let what = format!("{name}: layout.g4");
        let err = |m: String| config_err(what.clone(), m);
        g4.check_limits(surfaces).map_err(err)?;
        let totals = Self::check(g4, surfaces).map_err(err)?;
        // Expand the root into tracks.
        let mut raw = Vec::new();
        Self::expand(g4, g4.tables.len() - 1, 0, 0, 0, &mut raw);
        let mut slips: Vec<u64> = Vec::new();
        for &[s, n] in &g4.slips {
            slips.extend(s..s + n);
        }
        if slips.windows(2).any(|w| w[0] >= w[1]) {
            return Err(err("slips must be in increasing order and not overlap".into()));
        }
        let total = totals[g4.tables.len() - 1];
        if slips.last().is_some_and(|&s| s >= total) {
            return Err(err(format!("a slip lies past the {total} slots the tables cover")));
        }
        let mut tracks = Vec::with_capacity(raw.len());
        let mut by_pos = vec![u32::MAX; cylinders as usize * surfaces as usize];
        let mut k = 0usize; // slips below the current track
        for r in &raw {
            if r.cyl < 0 || r.cyl >= cylinders as i64 {
                return Err(err(format!("slot {}: cylinder {} is not below {cylinders}", r.slot, r.cyl)));
            }
            if r.spt > u16::MAX as u32 {
                return Err(err(format!("slot {}: {} sectors per track is too many", r.slot, r.spt)));
            }
            let pos = r.cyl as usize * surfaces as usize + r.head as usize;
            if by_pos[pos] != u32::MAX {
                return Err(err(format!("cylinder {} surface {} holds two tracks", r.cyl, r.head)));
            }
            by_pos[pos] = tracks.len() as u32;
            let end = r.slot + r.slots as u64;
            let k1 = k + slips[k..].partition_point(|&s| s < end);
            let spt = r.spt as i64;
            let first_sector = ((r.urev.rem_euclid(UREV) * spt + UREV / 2) / UREV % spt) as u16;
            tracks.push(Track {
                slot: r.slot,
                lbn: r.slot - k as u64,
                cyl: r.cyl as u32,
                head: r.head as u16,
                slots: r.slots as u16,
                blocks: (r.slots as usize - (k1 - k)) as u16,
                spt: r.spt as u16,
                first_sector,
            });
            k = k1;
        }
        Ok(TrackTable { surfaces, tracks, by_pos, mapped: total - slips.len() as u64, slips })
    }

    /// Append the tracks of table `ti` placed at (slot, cylinder, angle).
    fn expand(g4: &G4Spec, ti: usize, slot: u64, cyl: i64, urev: i64, out: &mut Vec<Raw>) {
        let t = &g4.tables[ti];
        // A partial track (fewer slots than the previous track of its surface
        // in this table, one cylinder away) keeps that track's sector count.
        let mut last: Vec<(i64, u32)> = Vec::new();
        for e in t {
            let [lbn, c0, off, len, clen, skew, run, crun, kind, child, head] = *e;
            let step = if crun < 0 { -clen } else { clen };
            for k in 0..run / len {
                let s = slot + (lbn + k * len) as u64;
                let c = cyl + c0 + k * step;
                let a = urev + off + k * skew;
                if kind == 1 {
                    Self::expand(g4, child as usize, s, c, a, out);
                    continue;
                }
                let h = head as u32;
                if last.len() <= h as usize {
                    last.resize(h as usize + 1, (i64::MIN, 0));
                }
                let (lc, lspt) = last[h as usize];
                let spt = if (len as u32) < lspt && (c - lc).abs() == 1 { lspt } else { len as u32 };
                last[h as usize] = (c, spt);
                out.push(Raw { slot: s, cyl: c, head: h, slots: len as u32, spt, urev: a });
            }
        }
    }

    #[inline]
    fn track_of_lbn(&self, lbn: u64) -> usize {
        self.tracks.partition_point(|t| t.lbn + t.blocks as u64 <= lbn)
    }

    /// Slot of `lbn` on track `t`.
    #[inline]
    fn slot_of(&self, t: &Track, lbn: u64) -> u64 {
        let mut slot = t.slot + (lbn - t.lbn);
        let mut k = self.slips.partition_point(|&s| s < t.slot);
        while k < self.slips.len() && self.slips[k] <= slot {
            slot += 1;
            k += 1;
        }
        slot
    }

    #[inline]
    fn sector(t: &Track, slot: u64) -> u32 {
        ((t.first_sector as u64 + slot - t.slot) % t.spt as u64) as u32
    }

    pub(crate) fn sectors_per_track(&self, cyl: u32, head: u32) -> u32 {
        self.track(cyl, head).map_or(0, |t| t.spt as u32)
    }

    /// Mean sectors per track over the surfaces of `cyl` that hold a track.
    pub(crate) fn mean_sectors_per_track(&self, cyl: u32) -> f64 {
        let (n, s) = (0..self.surfaces).filter_map(|h| self.track(cyl, h)).fold((0u32, 0u64), |(n, s), t| (n + 1, s + t.spt as u64));
        if n == 0 { 0.0 } else { s as f64 / n as f64 }
    }

    fn track(&self, cyl: u32, head: u32) -> Option<&Track> {
        if head >= self.surfaces {
            return None;
        }
        let i = *self.by_pos.get(cyl as usize * self.surfaces as usize + head as usize)?;
        self.tracks.get(i as usize)
    }

    pub(crate) fn lbn_to_pbn(&self, lbn: u64) -> Pbn {
        let t = &self.tracks[self.track_of_lbn(lbn)];
        Pbn { cylinder: t.cyl, head: t.head as u32, sector: Self::sector(t, self.slot_of(t, lbn)) }
    }

    pub(crate) fn pbn_to_lbn(&self, p: Pbn, capacity: u64) -> Option<u64> {
        let t = self.track(p.cylinder, p.head)?;
        if p.sector >= t.spt as u32 {
            return None;
        }
        let k = (p.sector + t.spt as u32 - t.first_sector as u32) % t.spt as u32;
        if k >= t.slots as u32 {
            return None;
        }
        let slot = t.slot + k as u64;
        let below = self.slips.partition_point(|&s| s < slot);
        if self.slips.get(below) == Some(&slot) {
            return None;
        }
        let lbn = slot - below as u64;
        (lbn < capacity).then_some(lbn)
    }

    pub(crate) fn pieces(&self, lbn: u64, blocks: u32, capacity: u64, out: &mut Vec<TrackPiece>) {
        out.clear();
        let (mut lbn, mut left) = (lbn, blocks as u64);
        let mut i = self.track_of_lbn(lbn);
        while left > 0 {
            let t = &self.tracks[i];
            let on_track = t.lbn + t.blocks as u64 - lbn;
            let n = left.min(on_track);
            if n > 0 {
                let slot = self.slot_of(t, lbn);
                let last = self.slot_of(t, lbn + n - 1);
                out.push(TrackPiece {
                    cylinder: t.cyl,
                    head: t.head as u32,
                    first_sector: Self::sector(t, slot),
                    span_sectors: (last - slot + 1) as u32,
                    blocks: n as u32,
                    sectors_per_track: t.spt as u32,
                    track_first_lbn: t.lbn,
                    track_blocks: (t.blocks as u64).min(capacity - t.lbn) as u32,
                });
            }
            lbn += n;
            left -= n;
            i += 1;
        }
    }

    /// The first piece `pieces(lbn, blocks)` gives (`blocks` > 0).
    pub(crate) fn first_piece(&self, lbn: u64, blocks: u32, capacity: u64) -> TrackPiece {
        let mut i = self.track_of_lbn(lbn);
        loop {
            let t = &self.tracks[i];
            let n = (blocks as u64).min(t.lbn + t.blocks as u64 - lbn);
            if n > 0 {
                let slot = self.slot_of(t, lbn);
                let last = self.slot_of(t, lbn + n - 1);
                return TrackPiece {
                    cylinder: t.cyl,
                    head: t.head as u32,
                    first_sector: Self::sector(t, slot),
                    span_sectors: (last - slot + 1) as u32,
                    blocks: n as u32,
                    sectors_per_track: t.spt as u32,
                    track_first_lbn: t.lbn,
                    track_blocks: (t.blocks as u64).min(capacity - t.lbn) as u32,
                };
            }
            i += 1;
        }
    }

    pub(crate) fn track_lbns(&self, cyl: u32, head: u32, capacity: u64) -> (u64, u64) {
        match self.track(cyl, head) {
            Some(t) if t.lbn < capacity => (t.lbn, (t.blocks as u64).min(capacity - t.lbn)),
            _ => (0, 0),
        }
    }

    pub(crate) fn track_span(&self, cyl: u32, head: u32, capacity: u64) -> Option<TrackSpan> {
        let t = self.track(cyl, head)?;
        let (first_lbn, blocks) = self.track_lbns(cyl, head, capacity);
        if blocks == 0 {
            return None;
        }
        let first_slot = self.slot_of(t, t.lbn);
        let lo = self.slips.partition_point(|&s| s < first_slot);
        let hi = self.slips.partition_point(|&s| s < t.slot + t.slots as u64);
        Some(TrackSpan {
            first_lbn,
            blocks: blocks as u32,
            first_sector: Self::sector(t, first_slot),
            sectors_per_track: t.spt as u32,
            slips: self.slips[lo..hi].iter().map(|&s| (s - first_slot) as u32).collect(),
        })
    }

    /// Tracks in LBN order: (cylinder, head, first LBN, LBNs) — for tests and tools.
    pub(crate) fn tracks(&self) -> impl Iterator<Item = (u32, u32, u64, u64)> + '_ {
        self.tracks.iter().map(|t| (t.cyl, t.head as u32, t.lbn, t.blocks as u64))
    }
}
