//! Layout: zones, skews, spares and slips; LBN <-> physical (cylinder, head, sector).
//!
//! Within a zone, LBNs walk *slots* in order: cylinder by cylinder, the tracks
//! of a cylinder in the mapping's surface order, and on each track the sectors
//! starting at that track's first-LBN sector (set by the zone's first-block
//! offset and the accumulated track and cylinder skews). Spare space is a
//! fixed number of slots at the end of each sparing *unit* (track, cylinder,
//! range of cylinders, or the whole zone). A slipped slot is skipped by the
//! numbering and pushes the rest of its unit into that unit's spare space, so
//! every unit of a zone holds the same number of LBNs (except a shorter last
//! range of cylinders, which has no spares, as in DiskSim). The zone's first
//! `empty_front_slots` LBN positions are left empty. A defect is served from
//! the spare slot it is remapped to. Under `end-of-disk` sparing a zone has
//! no spares and each slip lowers the zone's LBN count by one. Under sparing
//! per cylinder or per track, as in DiskSim, each slip also turns the tracks
//! of later cylinders (tracks) of the zone one sector further.

use crate::disk::spec::{DiskSpec, Mapping, Sparing};
use crate::disk::tracktable::TrackTable;
pub use crate::disk::address::{Pbn, TrackPiece, TrackSpan};
use crate::error::{config_err, Result};

#[derive(Clone, Debug)]
struct Zone {
    first_cyl: u32,
    last_cyl: u32,
    spt: u32,
    first_lbn: u64,
    blocks: u64,
    /// Slots per sparing unit and LBNs per unit.
    unit_slots: u64,
    unit_blocks: u64,
    offset_sectors: f64,
    track_skew: f64,
    cyl_skew: f64,
    /// The three above when they are whole sector counts (the usual case):
    /// the same positions in integer arithmetic.
    whole_skews: Option<[u64; 3]>,
    /// LBN positions left empty at the zone's front.
    empty: u64,
    /// LBNs of the last sparing unit (fewer for a partial range).
    last_unit_blocks: u64,
    units: u64,
    /// Sorted zone-relative slip slots.
    slips: Vec<u64>,
    /// Sparing by cylinder or track (DiskSim schemes 2, 3): every slip in an
    /// earlier unit of this many slots turns later tracks one sector further
    /// (0: no turning).
    turn_slots: u64,
    /// Sorted (defective slot, spare slot) pairs; identity pairs dropped.
    defects: Vec<(u64, u64)>,
    /// LBN positions before each zone-relative track (`blocks_before` of its
    /// first slot), one past the last track included: which track holds a
    /// position, found without walking the slips (`clean_track_piece`).
    /// Empty when the zone's positions pass `u32` or the disk has more
    /// tracks than `TRACK_INDEX_MAX`.
    track_positions: Vec<u32>,
    /// One bit per zone-relative track: a slip lies on it (with the index).
    slipped_tracks: Vec<u64>,
    /// Each zone-relative track's `track_first_sector` (with the index).
    first_sectors: Vec<u16>,
    /// The zone's slots that hold no LBN position (spares and slips): how
    /// far past `position / spt` its track can be.
    unpositioned: u64,
}

/// Tracks up to which a zoned layout keeps its track index (6 bytes a
/// track: 12.6 MB at most; Atlas 10K's 60,252 tracks take 0.4 MB).
const TRACK_INDEX_MAX: u64 = 1 << 21;

#[derive(Clone, Debug)]
/// Where each LBN lies: zones (or a DiskSim 4 track table), sparing and slipped defects.
pub struct Layout {
    surfaces: u32,
    cylinders: u32,
    mapping: Mapping,
    zones: Vec<Zone>,
    /// Each zone's end LBN and last cylinder, packed for the searches that find a zone.
    zone_end_lbns: Vec<u64>,
    zone_last_cyls: Vec<u32>,
    /// By LBN bucket (`lbn >> zone_bucket_shift`, about four buckets a
    /// zone): the first zone that ends past the bucket's first LBN, where
    /// `zone_of_lbn` starts looking (one or two compares, not a search).
    zone_of_bucket: Vec<u32>,
    zone_bucket_shift: u32,
    capacity: u64,
    /// LBNs the zones can hold (>= capacity).
    mapped: u64,
    /// A table-driven layout (DiskSim 4's g4) instead of the zones; the zone
    /// code paths below are untouched when it is None.
    table: Option<Box<TrackTable>>,
    /// Some zone has a remapped defect (`piece_after` asks).
    remaps: bool,
    /// Unique per `Layout::new` (a clone keeps it: same content): what a
    /// `MappedPieces` checks that its pieces came from this layout.
    id: u64,
}

/// Ids of layouts built so far (`Layout::id`).
static LAYOUTS_BUILT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_layout_id() -> u64 {
    LAYOUTS_BUILT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Layout {
    /// Validate `spec` and build its layout.
    pub fn new(spec: &DiskSpec) -> Result<Layout> {
        spec.validate()?;
        if let Some(g4) = &spec.layout.g4 {
            let t = TrackTable::new(g4, &spec.name, spec.surfaces, spec.cylinders)?;
            if t.mapped < spec.blocks {
                return Err(config_err(format!("{}: blocks", spec.name), format!(
                    "the layout maps {} blocks, fewer than the {} stated", t.mapped, spec.blocks)));
            }
            return Ok(Layout { surfaces: spec.surfaces, cylinders: spec.cylinders, mapping: spec.layout.mapping, zones: Vec::new(),
                zone_end_lbns: Vec::new(), zone_last_cyls: Vec::new(), zone_of_bucket: Vec::new(), zone_bucket_shift: 0, capacity: spec.blocks, mapped: t.mapped, table: Some(Box::new(t)), remaps: false, id: next_layout_id() });
        }
        let surfaces = spec.surfaces as u64;
        let mut zones = Vec::with_capacity(spec.layout.zones.len());
        let mut next_lbn = 0u64;
        for (i, z) in spec.layout.zones.iter().enumerate() {
            let what = format!("{}: layout.zones[{i}]", spec.name);
            let spt = z.sectors_per_track as u64;
            let ncyl = (z.last_cylinder - z.first_cylinder + 1) as u64;
            let zone_slots = ncyl * surfaces * spt;
            let spares = z.spares as u64;
            // A slipped track is a run of slipped sectors.
            let mut slips = z.slips.clone();
            for &t in &z.slipped_tracks {
                slips.extend(t * spt..(t + 1) * spt);
            }
            slips.sort_unstable();
            slips.dedup();
            let range = spec.layout.sparing_range_cylinders.max(1) as u64;
            let (unit_slots, reserved) = match spec.layout.sparing {
                Sparing::None => (zone_slots, 0),
                Sparing::SectorsPerTrack => (spt, spares),
                Sparing::SectorsPerCylinder => (surfaces * spt, spares),
                Sparing::SectorsPerRange => (range * surfaces * spt, spares),
                Sparing::SectorsPerZone => (zone_slots, spares),
                Sparing::EndOfDisk => (zone_slots, 0), // set below from the slips
                Sparing::TracksPerZone => (zone_slots, spares * spt),
                Sparing::CylindersPerZone => (zone_slots, spares * surfaces * spt),
            };
            let reserved = if spec.layout.sparing == Sparing::EndOfDisk { slips.len() as u64 } else { reserved };
            // Only ranges of cylinders may leave a shorter last unit, and
            // (as in DiskSim) such a range has no spares: all its sectors hold LBNs.
            let partial = zone_slots % unit_slots;
            let last_unit_slots = if partial == 0 { unit_slots } else { partial };
            if reserved >= unit_slots || (partial != 0 && spec.layout.sparing != Sparing::SectorsPerRange) {
                return Err(config_err(what, format!(
                    "{spares} spares do not fit the {:?} sparing unit of {unit_slots} sectors", spec.layout.sparing)));
            }
            if let Some(&s) = slips.last() {
                if s >= zone_slots {
                    return Err(config_err(what, format!("slip {s} is beyond the zone's {zone_slots} sectors")));
                }
            }
            let unit_blocks = unit_slots - reserved;
            let units = zone_slots.div_ceil(unit_slots);
            // A slip in a spare-less last range costs that range one LBN.
            let last_slips = slips.iter().filter(|&&s| s >= (units - 1) * unit_slots).count() as u64;
            let last_unit_blocks = if partial == 0 { last_unit_slots - reserved } else { last_unit_slots.saturating_sub(last_slips) };
            let positions = (units - 1) * unit_blocks + last_unit_blocks;
            if z.empty_front_slots >= positions {
                return Err(config_err(what, format!(
                    "empty_front_slots {} leaves no room in the zone's {positions} LBN positions", z.empty_front_slots)));
            }
            let blocks = positions - z.empty_front_slots;
            let mut defects: Vec<(u64, u64)> = z.defects.iter().copied().filter(|(d, s)| d != s).collect();
            defects.sort_unstable();
            zones.push(Zone {
                first_cyl: z.first_cylinder,
                last_cyl: z.last_cylinder,
                spt: z.sectors_per_track,
                first_lbn: next_lbn,
                blocks,
                unit_slots,
                unit_blocks,
                offset_sectors: z.first_block_offset_sectors,
                track_skew: z.track_skew_sectors,
                cyl_skew: z.cylinder_skew_sectors,
                whole_skews: whole_sectors([z.first_block_offset_sectors, z.track_skew_sectors, z.cylinder_skew_sectors]),
                empty: z.empty_front_slots,
                last_unit_blocks,
                units,
                slips,
                defects,
                turn_slots: match spec.layout.sparing {
                    Sparing::SectorsPerCylinder => surfaces * spt,
                    Sparing::SectorsPerTrack => spt,
                    _ => 0,
                },
                track_positions: Vec::new(),
                slipped_tracks: Vec::new(),
                first_sectors: Vec::new(),
                unpositioned: zone_slots - positions,
            });
            next_lbn += blocks;
        }
        for (i, z) in zones.iter().enumerate() {
            let what = || format!("{}: layout.zones[{i}]", spec.name);
            for u in 0..z.units {
                let lo = z.slips.partition_point(|&s| s < u * z.unit_slots);
                let hi = z.slips.partition_point(|&s| s < (u + 1) * z.unit_slots);
                // A full unit's slips must fit its spares (a spare-less last range absorbs its own).
                if u + 1 < z.units && (hi - lo) as u64 > z.unit_slots - z.unit_blocks {
                    return Err(config_err(what(),
                        format!("{} slips in sparing unit {u} exceed its {} spares", hi - lo, z.unit_slots - z.unit_blocks)));
                }
            }
            let zone_slots = (z.last_cyl - z.first_cyl + 1) as u64 * surfaces * z.spt as u64;
            for (k, &(d, sp)) in z.defects.iter().enumerate() {
                let holds = |s: u64| s < zone_slots && Self::blocks_before(z, s + 1) > Self::blocks_before(z, s)
                    && Self::blocks_before(z, s) >= z.empty;
                if !holds(d) || sp >= zone_slots || holds(sp) || z.defects.iter().skip(k + 1).any(|q| q.1 == sp || q.0 == d) {
                    return Err(config_err(what(), format!(
                        "defect ({d}, {sp}): the defective slot must hold an LBN and the spare slot must be a distinct unused slot in the zone")));
                }
            }
        }
        if next_lbn < spec.blocks {
            return Err(config_err(format!("{}: blocks", spec.name), format!(
                "the layout maps {next_lbn} blocks, fewer than the {} stated", spec.blocks)));
        }
        let tracks: u64 = zones.iter().map(|z| (z.last_cyl - z.first_cyl + 1) as u64 * surfaces).sum();
        if tracks <= TRACK_INDEX_MAX {
            for z in zones.iter_mut().filter(|z| z.blocks + z.empty <= u32::MAX as u64) {
                let (zone_tracks, spt) = ((z.last_cyl - z.first_cyl + 1) as u64 * surfaces, z.spt as u64);
                z.track_positions = (0..=zone_tracks).map(|j| Self::blocks_before(z, j * spt) as u32).collect();
                z.first_sectors = (0..zone_tracks).map(|j| Self::track_first_sector_of(spec.surfaces, z, j) as u16).collect();
                z.slipped_tracks = vec![0; zone_tracks.div_ceil(64) as usize];
                for j in z.slips.iter().map(|&slip| slip / spt) {
                    z.slipped_tracks[(j / 64) as usize] |= 1 << (j % 64);
                }
            }
        }
        // A drive may export fewer LBNs than its zones could hold; the rest are unused.
        let zone_end_lbns: Vec<u64> = zones.iter().map(|z| z.first_lbn + z.blocks).collect();
        let zone_last_cyls = zones.iter().map(|z| z.last_cyl).collect();
        let end = zone_end_lbns.last().copied().unwrap_or(0);
        let zone_bucket_shift = (end / (4 * zones.len().max(1) as u64)).max(1).ilog2();
        let zone_of_bucket = (0..=end >> zone_bucket_shift)
            .map(|b| zone_end_lbns.partition_point(|&e| e <= b << zone_bucket_shift) as u32)
            .collect();
        let remaps = zones.iter().any(|z| !z.defects.is_empty());
        Ok(Layout { surfaces: spec.surfaces, cylinders: spec.cylinders, mapping: spec.layout.mapping, zones, zone_end_lbns, zone_last_cyls,
                    zone_of_bucket, zone_bucket_shift,
                    capacity: spec.blocks, mapped: next_lbn, table: None, remaps, id: next_layout_id() })
    }

    /// LBNs the drive exposes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// LBNs the zones could hold; those at or above `capacity()` are unused.
    pub fn mapped_blocks(&self) -> u64 {
        self.mapped
    }
    /// Recording surfaces (heads).
    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }
    /// Cylinders.
    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }

    fn zone_of_lbn(&self, lbn: u64) -> &Zone {
        let bucket = self.zone_of_bucket.get((lbn >> self.zone_bucket_shift) as usize);
        let mut i = bucket.map_or(self.zones.len(), |&z| z as usize);
        while self.zone_end_lbns.get(i).is_some_and(|&end| end <= lbn) {
            i += 1;
        }
        &self.zones[i]
    }

    fn zone_of_cyl(&self, cyl: u32) -> Option<&Zone> {
        let i = self.zone_last_cyls.partition_point(|&last| last < cyl);
        self.zones.get(i).filter(|z| z.first_cyl <= cyl)
    }

    /// Sectors per track of track (`cyl`, `head`) (0 if it holds no LBNs'
    /// zone or table entry). Zoned drives ignore `head`.
    pub fn sectors_per_track(&self, cyl: u32, head: u32) -> u32 {
        if let Some(t) = &self.table {
            return t.sectors_per_track(cyl, head);
        }
        self.zone_of_cyl(cyl).map_or(0, |z| z.spt)
    }

    /// Mean sectors per track over the tracks of `cyl` (the sustained media rate's measure).
    pub fn mean_sectors_per_track(&self, cyl: u32) -> f64 {
        if let Some(t) = &self.table {
            return t.mean_sectors_per_track(cyl);
        }
        self.zone_of_cyl(cyl).map_or(0.0, |z| z.spt as f64)
    }

    /// True when the layout is table-driven (DiskSim g4) rather than zoned.
    pub fn is_table(&self) -> bool {
        self.table.is_some()
    }

    /// Every track of a table-driven layout in LBN order: (cylinder, head,
    /// first LBN, LBNs). None for zoned layouts.
    pub fn table_tracks(&self) -> Option<Vec<(u32, u32, u64, u64)>> {
        self.table.as_ref().map(|t| t.tracks().collect())
    }

    /// LBNs in sparing unit `u` of the zone.
    fn unit_blocks_of(z: &Zone, u: u64) -> u64 {
        if u + 1 >= z.units { z.last_unit_blocks } else { z.unit_blocks }
    }

    /// Zone-relative slot of LBN position `i` (empty front positions included),
    /// before defect remapping.
    fn slot_of(z: &Zone, i: u64) -> u64 {
        // The last unit may hold more LBNs than the others (a spare-less partial range).
        // (One unit, as under zone sparing: no division.)
        let unit = if z.units == 1 { 0 } else { (i / z.unit_blocks).min(z.units - 1) };
        let base = unit * z.unit_slots;
        Self::walk_slips(z, base + (i - unit * z.unit_blocks), Self::slips_below(z, base)).0
    }

    /// How many of the zone's slips lie below `slot` (none below its first: no search).
    fn slips_below(z: &Zone, slot: u64) -> usize {
        if slot == 0 { 0 } else { z.slips.partition_point(|&s| s < slot) }
    }

    /// Push candidate `slot` one further for every slip at or below it, from
    /// slip index `k` on (every earlier slip already counted): the slot and
    /// the index of the first slip above it.
    fn walk_slips(z: &Zone, mut slot: u64, mut k: usize) -> (u64, usize) {
        while k < z.slips.len() && z.slips[k] <= slot {
            slot += 1;
            k += 1;
        }
        (slot, k)
    }

    /// Number of LBN positions (empty front positions included) in slots below `slot`.
    fn blocks_before(z: &Zone, slot: u64) -> u64 {
        let unit = if z.units == 1 { (slot >= z.unit_slots) as u64 } else { slot / z.unit_slots };
        if unit >= z.units {
            return (z.units - 1) * z.unit_blocks + z.last_unit_blocks;
        }
        let slipped = z.slips.partition_point(|&s| s < slot) - Self::slips_below(z, unit * z.unit_slots);
        Self::positions_before(z, unit, slot, slipped)
    }

    /// `blocks_before` of `slot` in sparing unit `unit`, given the unit's
    /// slips below `slot`.
    fn positions_before(z: &Zone, unit: u64, slot: u64, slipped: usize) -> u64 {
        unit * z.unit_blocks + (slot - unit * z.unit_slots - slipped as u64).min(Self::unit_blocks_of(z, unit))
    }

    /// Where the LBN in `slot` is actually stored.
    fn remapped(z: &Zone, slot: u64) -> u64 {
        match z.defects.binary_search_by_key(&slot, |d| d.0) {
            Ok(k) => z.defects[k].1,
            Err(_) => slot,
        }
    }

    /// Physical sector of the first LBN on zone-relative track `j` (j = c_rel * surfaces + t).
    fn track_first_sector(&self, z: &Zone, j: u64) -> u32 {
        Self::track_first_sector_of(self.surfaces, z, j)
    }

    /// `track_first_sector` on a disk of `surfaces` surfaces.
    fn track_first_sector_of(surfaces: u32, z: &Zone, j: u64) -> u32 {
        let cyl_switches = j / surfaces as u64;
        let track_switches = j - cyl_switches;
        let pos = match z.whole_skews {
            Some([offset, track, cyl]) => offset + track_switches * track + cyl_switches * cyl,
            None => (z.offset_sectors + track_switches as f64 * z.track_skew + cyl_switches as f64 * z.cyl_skew).round() as u64,
        };
        // DiskSim turns a track one sector per slip in an earlier cylinder (track) of the zone.
        let turned = if z.turn_slots == 0 { 0 } else {
            let start = j * z.spt as u64 / z.turn_slots * z.turn_slots;
            z.slips.partition_point(|&s| s < start) as u64
        };
        ((pos + turned) % z.spt as u64) as u32
    }

    /// Surface of the `t`-th track (in LBN order) of cylinder `cyl` of zone `z`, and back.
    fn head_of(&self, z: &Zone, cyl: u32, t: u32) -> u32 {
        let odd = match self.mapping {
            Mapping::CylinderMajor => false,
            Mapping::Serpentine => cyl % 2 == 1,
            // DiskSim scheme 1: every zone's first cylinder runs the surfaces upwards.
            Mapping::SerpentineZone => (cyl - z.first_cyl) % 2 == 1,
        };
        if odd { self.surfaces - 1 - t } else { t }
    }

    fn pbn_of_slot(&self, z: &Zone, slot: u64) -> Pbn {
        let spt = z.spt as u64;
        let j = slot / spt;
        let k = slot % spt;
        let cylinder = z.first_cyl + (j / self.surfaces as u64) as u32;
        let t = (j % self.surfaces as u64) as u32;
        let first = self.track_first_sector(z, j) as u64;
        Pbn { cylinder, head: self.head_of(z, cylinder, t), sector: ((first + k) % spt) as u32 }
    }

    /// Physical location of `lbn` (which must be below `capacity()`).
    pub fn lbn_to_pbn(&self, lbn: u64) -> Pbn {
        debug_assert!(lbn < self.capacity);
        if let Some(t) = &self.table {
            return t.lbn_to_pbn(lbn);
        }
        let z = self.zone_of_lbn(lbn);
        self.pbn_of_slot(z, Self::remapped(z, Self::slot_of(z, lbn - z.first_lbn + z.empty)))
    }

    /// `lbn_to_pbn(lbn)` and the sectors per track of its track (what
    /// `sectors_per_track` says of it): a zoned layout keeps a remapped LBN in
    /// its own zone, so the zone found for the LBN gives both.
    pub fn lbn_to_pbn_spt(&self, lbn: u64) -> (Pbn, u32) {
        debug_assert!(lbn < self.capacity);
        if let Some(t) = &self.table {
            let p = t.lbn_to_pbn(lbn);
            return (p, t.sectors_per_track(p.cylinder, p.head));
        }
        let z = self.zone_of_lbn(lbn);
        (self.pbn_of_slot(z, Self::remapped(z, Self::slot_of(z, lbn - z.first_lbn + z.empty))), z.spt)
    }

    /// LBN stored at a physical sector, or None for spare, slipped or unmapped sectors.
    pub fn pbn_to_lbn(&self, p: Pbn) -> Option<u64> {
        if let Some(t) = &self.table {
            return t.pbn_to_lbn(p, self.capacity);
        }
        let z = self.zone_of_cyl(p.cylinder)?;
        if p.head >= self.surfaces || p.sector >= z.spt {
            return None;
        }
        let t = self.head_of(z, p.cylinder, p.head); // the map is its own inverse
        let j = (p.cylinder - z.first_cyl) as u64 * self.surfaces as u64 + t as u64;
        let first = self.track_first_sector(z, j);
        let k = (p.sector + z.spt - first) % z.spt;
        let mut slot = j * z.spt as u64 + k as u64;
        if z.defects.iter().any(|d| d.0 == slot) {
            return None; // served from its spare instead
        }
        if let Some(d) = z.defects.iter().find(|d| d.1 == slot) {
            slot = d.0;
        }
        let before = Self::blocks_before(z, slot);
        // A slot holds an LBN iff the count of LBNs grows across it (slips and spares do not).
        if Self::blocks_before(z, slot + 1) == before {
            return None;
        }
        if before < z.empty {
            return None;
        }
        let lbn = z.first_lbn + before - z.empty;
        (lbn < self.capacity).then_some(lbn)
    }

    /// The track pieces that `blocks` LBNs starting at `lbn` occupy, in transfer order.
    pub fn pieces(&self, lbn: u64, blocks: u32, out: &mut Vec<TrackPiece>) {
        if let Some(t) = &self.table {
            return t.pieces(lbn, blocks, self.capacity, out);
        }
        out.clear();
        let (mut lbn, mut left) = (lbn, blocks as u64);
        while left > 0 {
            let p = self.zone_piece(lbn, left);
            out.push(p);
            lbn += p.blocks as u64;
            left -= p.blocks as u64;
        }
    }

    /// `pieces(lbn, blocks)`, mapped again only if `memo` holds another
    /// range or another layout's pieces.
    #[inline]
    pub fn pieces_memo<'m>(&self, lbn: u64, blocks: u32, memo: &'m mut MappedPieces) -> &'m [TrackPiece] {
        let key = (self.id, lbn, blocks);
        if memo.key != Some(key) {
            self.pieces(lbn, blocks, &mut memo.pieces);
            memo.key = Some(key);
        }
        &memo.pieces
    }

    /// Put `piece`, the whole of `pieces(lbn, piece.blocks)` as `from` mapped
    /// it, into `memo`, if `from` is this layout (a clone keeps its id): a
    /// request mapped when it arrived is not mapped again when it is served.
    #[inline]
    pub fn seed_memo(&self, from: &Layout, lbn: u64, piece: TrackPiece, memo: &mut MappedPieces) {
        if from.id == self.id {
            memo.key = Some((self.id, lbn, piece.blocks));
            memo.pieces.clear();
            memo.pieces.push(piece);
        }
    }

    /// The first of `pieces(lbn, blocks)` (`blocks` > 0): a walk that needs
    /// one track at a time (the read-ahead) lays out no more than that.
    pub fn first_piece(&self, lbn: u64, blocks: u32) -> TrackPiece {
        debug_assert!(blocks > 0);
        if let Some(t) = &self.table {
            return t.first_piece(lbn, blocks, self.capacity);
        }
        self.zone_piece(lbn, blocks as u64)
    }

    /// `first_piece(lbn, blocks)` where `lbn` follows `prev`'s last LBN,
    /// when it tells without mapping: `lbn` on `prev`'s track, every one of
    /// its sectors an LBN of it in order (no slip, no spare) and no remapped
    /// defect on the drive. None: ask `first_piece`.
    pub fn piece_after(&self, prev: &TrackPiece, lbn: u64, blocks: u32) -> Option<TrackPiece> {
        let (first, n) = (prev.track_first_lbn, prev.track_blocks as u64);
        let spt = prev.sectors_per_track;
        if self.table.is_some() || self.remaps || n != spt as u64 || !(first <= lbn && lbn < first + n) {
            return None;
        }
        let blocks = (blocks as u64).min(first + n - lbn) as u32;
        Some(TrackPiece { first_sector: (prev.first_sector + prev.span_sectors) % spt, span_sectors: blocks, blocks, ..*prev })
    }

    /// The piece holding `lbn` and as many of the `left` LBNs after it as share its track.
    #[inline]
    fn zone_piece(&self, lbn: u64, left: u64) -> TrackPiece {
        let z = self.zone_of_lbn(lbn);
        let i = lbn - z.first_lbn + z.empty;
        if let Some(piece) = self.clean_track_piece(z, lbn, i, left) {
            return piece;
        }
        self.walked_piece(z, lbn, i, left)
    }

    /// `zone_piece` of LBN `lbn` (position `i` of zone `z`) when no slip lies
    /// on its track and the zone remaps no defect: the track found in the
    /// track index, its positions in its first slots in order (a sparing
    /// unit is whole tracks, its spares at its end), so the slot and the
    /// piece follow from the track's first position. None otherwise.
    #[inline]
    fn clean_track_piece(&self, z: &Zone, lbn: u64, i: u64, left: u64) -> Option<TrackPiece> {
        let before = &z.track_positions;
        if before.is_empty() || !z.defects.is_empty() {
            return None;
        }
        let spt = z.spt as u64;
        // Track j has at most j * spt positions before it, and at least that
        // less the zone's unpositioned slots: i's track lies in [j0, j_max].
        let j0 = (i / spt) as usize;
        let j_max = (((i + z.unpositioned) / spt) as usize).min(before.len() - 2);
        let j = j0 + before[j0 + 1..=j_max + 1].partition_point(|&b| b as u64 <= i);
        if z.slipped_tracks[j / 64] >> (j % 64) & 1 == 1 {
            return None;
        }
        let (b0, b1) = (before[j] as u64, before[j + 1] as u64);
        let n = left.min((b1 - i).min(z.first_lbn + z.blocks - lbn));
        // `pbn_of_slot` of slot j * spt + (i - b0), its track's first sector looked up.
        let surfaces = self.surfaces as u64;
        let cylinder = z.first_cyl + (j as u64 / surfaces) as u32;
        let head = self.head_of(z, cylinder, (j as u64 % surfaces) as u32);
        let first_sector = ((z.first_sectors[j] as u64 + (i - b0)) % spt) as u32;
        let (track_first_lbn, track_blocks) = self.track_of_positions(z, b0, b1);
        Some(TrackPiece {
            cylinder,
            head,
            first_sector,
            span_sectors: n as u32,
            blocks: n as u32,
            sectors_per_track: z.spt,
            track_first_lbn,
            track_blocks: track_blocks as u32,
        })
    }

    /// `zone_piece` by walking the zone's slips and defects (any track).
    fn walked_piece(&self, z: &Zone, lbn: u64, i: u64, left: u64) -> TrackPiece {
        let spt = z.spt as u64;
        // `slot_of(i)`, keeping where its walk over the slips stopped: the
        // track's other counts continue that walk instead of searching again.
        let unit = if z.units == 1 { 0 } else { (i / z.unit_blocks).min(z.units - 1) };
        let base = unit * z.unit_slots;
        let k_base = Self::slips_below(z, base);
        let (slot, k) = Self::walk_slips(z, base + (i - unit * z.unit_blocks), k_base);
        let track_end = (slot / spt + 1) * spt;
        // A track inside its sparing unit, not its last: the LBN positions
        // before `track_end` follow from the slips below it (at a unit's end,
        // or a track across units, `blocks_before` says what the next unit holds).
        let in_unit = track_end - spt >= base && track_end < base + z.unit_slots;
        let track_start = track_end - spt;
        let (before_start, before_end) = if in_unit {
            (Self::positions_before(z, unit, track_start, z.slips[k_base..k].partition_point(|&s| s < track_start)),
             Self::positions_before(z, unit, track_end, k + z.slips[k..].partition_point(|&s| s < track_end) - k_base))
        } else {
            (Self::blocks_before(z, track_start), Self::blocks_before(z, track_end))
        };
        let on_track = (before_end - i).min(z.first_lbn + z.blocks - lbn);
        let mut n = left.min(on_track);
        // A remapped defect is a piece of its own, at its spare.
        let lo = z.defects.partition_point(|d| d.0 < slot);
        if lo < z.defects.len() && z.defects[lo].0 == slot {
            n = 1;
        } else if lo < z.defects.len() && z.defects[lo].0 < track_end {
            n = n.min(Self::blocks_before(z, z.defects[lo].0) - i);
        }
        // (The same walk on: the slips it passed lie below this slot too.)
        let last_slot = if in_unit { Self::walk_slips(z, slot + n - 1, k).0 } else { Self::slot_of(z, i + n - 1) };
        let stored = Self::remapped(z, slot);
        let p = self.pbn_of_slot(z, stored);
        // The LBNs of the track it lies on (a remapped defect's: its spare's track).
        let (track_first_lbn, track_blocks) = if stored == slot {
            self.track_of_positions(z, before_start, before_end)
        } else {
            self.zone_track(z, stored / spt).map_or((0, 0), |(_, _, first_lbn, blocks, _)| (first_lbn, blocks))
        };
        TrackPiece {
            cylinder: p.cylinder,
            head: p.head,
            first_sector: p.sector,
            span_sectors: (last_slot - slot + 1) as u32,
            blocks: n as u32,
            sectors_per_track: z.spt,
            track_first_lbn,
            track_blocks: track_blocks as u32,
        }
    }
}

/// Skews as integers when each is a whole number of sectors in [0, 2^20]:
/// then every position (below 2^53) is exact in f64 too, and rounds to the
/// same integer, so both paths agree.
fn whole_sectors(v: [f64; 3]) -> Option<[u64; 3]> {
    v.iter().all(|x| x.fract() == 0.0 && (0.0..=(1u64 << 20) as f64).contains(x)).then(|| v.map(|x| x as u64))
}

/// The track pieces of the last range mapped through it (`Layout::pieces_memo`):
/// the drive and the host's exact belief serve the same request one after the
/// other, and share one of these so the request is mapped once.
#[derive(Clone, Debug, Default)]
pub struct MappedPieces {
    /// (layout id, first LBN, blocks) of `pieces`.
    key: Option<(u64, u64, u32)>,
    pieces: Vec<TrackPiece>,
}

impl std::ops::Deref for MappedPieces {
    type Target = [TrackPiece];
    fn deref(&self) -> &[TrackPiece] {
        &self.pieces
    }
}

impl Layout {
    /// The first LBN on track (`cylinder`, `head`) and how many it holds (0: none).
    pub fn track_lbns(&self, cylinder: u32, head: u32) -> (u64, u64) {
        if let Some(t) = &self.table {
            return t.track_lbns(cylinder, head, self.capacity);
        }
        self.track_at(cylinder, head).map_or((0, 0), |(_, _, first_lbn, blocks, _)| (first_lbn, blocks))
    }

    /// `track_lbns` of the track that holds `lbn` (below `capacity()`), without
    /// going through its physical sector.
    pub fn track_lbns_of(&self, lbn: u64) -> (u64, u64) {
        if self.table.is_some() {
            let p = self.lbn_to_pbn(lbn);
            return self.track_lbns(p.cylinder, p.head);
        }
        let z = self.zone_of_lbn(lbn);
        // The track of the slot the LBN is stored in (a spare's, for a remapped defect).
        let j = Self::remapped(z, Self::slot_of(z, lbn - z.first_lbn + z.empty)) / z.spt as u64;
        self.zone_track(z, j).map_or((0, 0), |(_, _, first_lbn, blocks, _)| (first_lbn, blocks))
    }

    /// `track_lbns_of(lbn)`, given `known`, the `track_lbns` of a track that
    /// may hold it (a read's own track, for its read-ahead): in a zone with no
    /// remapped defects an LBN inside a track's LBNs is stored on that track,
    /// so the answer is `known` without mapping `lbn` again.
    pub fn track_lbns_of_near(&self, lbn: u64, known: (u64, u64)) -> (u64, u64) {
        let (first, n) = known;
        // (No zone remaps a defect, the usual case: no zone to look up.)
        if self.table.is_none() && first <= lbn && lbn < first + n && (!self.remaps || self.zone_of_lbn(lbn).defects.is_empty()) {
            return known;
        }
        self.track_lbns_of(lbn)
    }

    /// Zone, zone-relative track index, first LBN, LBN count and the track's
    /// first LBN position of track (`cylinder`, `head`).
    fn track_at(&self, cylinder: u32, head: u32) -> Option<(&Zone, u64, u64, u64, u64)> {
        let z = self.zone_of_cyl(cylinder)?;
        let j = (cylinder - z.first_cyl) as u64 * self.surfaces as u64 + self.head_of(z, cylinder, head) as u64;
        self.zone_track(z, j)
    }

    /// `track_at` of zone-relative track `j` of zone `z`.
    fn zone_track<'a>(&self, z: &'a Zone, j: u64) -> Option<(&'a Zone, u64, u64, u64, u64)> {
        let spt = z.spt as u64;
        let (before, after) = (Self::blocks_before(z, j * spt), Self::blocks_before(z, (j + 1) * spt));
        let (first_lbn, blocks) = self.track_of_positions(z, before, after);
        (blocks > 0).then_some((z, j, first_lbn, blocks, before.max(z.empty)))
    }

    /// The first LBN and LBN count of a track of zone `z` whose slots hold
    /// the LBN positions [`before`, `after`).
    fn track_of_positions(&self, z: &Zone, before: u64, after: u64) -> (u64, u64) {
        // LBN positions below `empty` (the zone's empty front) hold no LBN.
        let (before, after) = (before.max(z.empty), after.max(z.empty));
        let first_lbn = z.first_lbn + before - z.empty;
        (first_lbn, (after - before).min(self.capacity.saturating_sub(first_lbn)))
    }

    /// The LBNs on track (`cylinder`, `head`), or None if it holds none.
    pub fn track_span(&self, cylinder: u32, head: u32) -> Option<TrackSpan> {
        if let Some(t) = &self.table {
            return t.track_span(cylinder, head, self.capacity);
        }
        let (z, j, first_lbn, blocks, before) = self.track_at(cylinder, head)?;
        let spt = z.spt as u64;
        let (start, end) = (j * spt, (j + 1) * spt);
        // The track's first LBN slot (past any empty front on this track).
        let first_slot = Self::slot_of(z, before);
        let lo = z.slips.partition_point(|&s| s < first_slot);
        let hi = z.slips.partition_point(|&s| s < end);
        Some(TrackSpan {
            first_lbn,
            blocks: blocks as u32,
            first_sector: ((self.track_first_sector(z, j) as u64 + first_slot - start) % spt) as u32,
            sectors_per_track: z.spt,
            slips: z.slips[lo..hi].iter().map(|&s| (s - first_slot) as u32).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A track the index finds clean is laid out as the walk over the slips
    /// lays it out, on every zoned catalogue drive (their sparing schemes:
    /// per track, per cylinder, per range, per zone, slipped tracks), at
    /// every track's first LBN and at random LBNs, for short and long
    /// requests; and the index does find most tracks clean.
    #[test]
    fn a_clean_track_is_laid_out_as_the_walk_lays_it_out() {
        let mut drives = 0;
        for name in crate::disk::builtin::names() {
            let l = Layout::new(&crate::disk::builtin::resolve(name, None).unwrap()).unwrap();
            if l.table.is_some() {
                continue;
            }
            drives += 1;
            let (mut clean, mut asked) = (0u64, 0u64);
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            for z in &l.zones {
                let starts = (0..z.track_positions.len().saturating_sub(1)).map(|j| z.track_positions[j] as u64);
                let randoms = (0..400).map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    z.empty + (x >> 11) % z.blocks
                });
                for i in starts.chain(randoms).filter(|&i| i >= z.empty && i < z.empty + z.blocks) {
                    let lbn = z.first_lbn + i - z.empty;
                    if lbn >= l.capacity {
                        continue;
                    }
                    for left in [1, 8, 100_000] {
                        asked += 1;
                        if let Some(p) = l.clean_track_piece(z, lbn, i, left) {
                            clean += 1;
                            assert_eq!(p, l.walked_piece(z, lbn, i, left), "{name}: lbn {lbn} left {left}");
                        }
                    }
                }
            }
            assert!(clean * 2 > asked, "{name}: {clean} of {asked} pieces on clean tracks");
        }
        assert!(drives >= 10, "{drives} zoned drives");
    }

    /// The zone `zone_of_lbn` finds from its bucket index is the one a binary
    /// search over the zones' end LBNs finds, at every zone's first and last
    /// LBN and on either side of every bucket's edge, on every zoned catalogue drive.
    #[test]
    fn the_bucket_index_finds_the_zone_a_search_finds() {
        for name in crate::disk::builtin::names() {
            let l = Layout::new(&crate::disk::builtin::resolve(name, None).unwrap()).unwrap();
            if l.table.is_some() {
                continue;
            }
            let end = *l.zone_end_lbns.last().unwrap();
            let zone_edges = l.zones.iter().flat_map(|z| [z.first_lbn, (z.first_lbn + z.blocks).saturating_sub(1)]);
            let bucket_edges = (1..=end >> l.zone_bucket_shift).flat_map(|b| [(b << l.zone_bucket_shift) - 1, b << l.zone_bucket_shift]);
            let mut checked = 0;
            for lbn in zone_edges.chain(bucket_edges).filter(|&lbn| lbn < end) {
                let searched = l.zone_end_lbns.partition_point(|&e| e <= lbn);
                assert!(std::ptr::eq(l.zone_of_lbn(lbn), &l.zones[searched]), "{name}: lbn {lbn}: zone {searched} by search");
                checked += 1;
            }
            assert!(checked > 4 * l.zones.len(), "{name}: {checked} LBNs checked");
        }
    }
}
