//! The project's own disk spec format (TOML), one file per drive.
//!
//! Units are in the field names. A spec describes the drive as it is (the
//! truth); a predictor may be built from the same spec (in-firmware) or from
//! a different one (an external scheduler's belief).

use crate::error::{config_err, Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// A drive: geometry, layout, seek curve and controller (see the module doc).
pub struct DiskSpec {
    /// The drive's name.
    pub name: String,
    #[serde(default)]
    /// Free text describing the drive.
    pub description: String,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
    /// What the drive was validated against (a built-in with a DiskSim
    /// validation set-up), or why not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub validated: String,
    /// Recording surfaces (heads).
    pub surfaces: u32,
    /// Cylinders.
    pub cylinders: u32,
    /// Number of LBNs the drive exports; the layout must map at least this many
    /// (LBNs it maps beyond are unused). Imported zoned drives export what the
    /// zones map (DiskSim ignores `Block count` for them); a table-driven (g4)
    /// drive exports its `Block count`.
    pub blocks: u64,
    #[serde(default = "default_sector_bytes")]
    /// Bytes per sector (default 512).
    pub sector_bytes: u32,
    /// Spindle speed, revolutions per minute.
    pub rpm: f64,
    /// DiskSim's `Percent error in rpms` (stored, not modelled).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub rpm_error_percent: f64,
    /// How LBNs are laid out on the media.
    pub layout: LayoutSpec,
    /// Seek curve and head switch.
    pub seek: SeekSpec,
    #[serde(default)]
    /// Controller overheads, bus, queue and buffer cache (DiskSim's defaults when absent).
    pub controller: ControllerSpec,
}

fn default_sector_bytes() -> u32 {
    512
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// The LBN layout: mapping order, sparing and zones (or a g4 table).
pub struct LayoutSpec {
    /// Order in which LBNs visit the tracks of a cylinder.
    #[serde(default)]
    pub mapping: Mapping,
    /// Where spare sectors are reserved.
    #[serde(default)]
    pub sparing: Sparing,
    /// For `sparing = "sectors-per-range"`: cylinders per range. Ranges count
    /// from each zone's first cylinder; a zone's last range may be shorter and
    /// then has no spares (DiskSim); a slip there costs the zone one LBN.
    #[serde(default = "one")]
    pub sparing_range_cylinders: u32,
    /// Zones (empty when `g4` describes the layout).
    #[serde(default)]
    pub zones: Vec<ZoneSpec>,
    /// A table-driven layout (DiskSim 4's `dm_layout_g4`) instead of zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub g4: Option<G4Spec>,
}

/// DiskSim 4's `dm_layout_g4`, kept as its own compact tree (see
/// docs/disksim-parameters.md for the inferred meaning). The tree numbers
/// *slots* (physical sectors that may hold an LBN); `slips` are slots the LBN
/// numbering skips.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct G4Spec {
    /// Track patterns `TP`: (first sector, last sector, slots on the track).
    pub patterns: Vec<[u32; 3]>,
    /// Index tables `IDX`; the last is the root. Each entry:
    /// [first slot, first cylinder, offset (micro-revolutions), slots per child,
    ///  cylinders per child, skew per child (micro-revolutions), slots in the run,
    ///  cylinders in the run (negative: descending), child kind (0 track pattern, 1 table),
    ///  child index, surface (tracks only; 0 for tables)]. Offsets are relative to the parent's.
    pub tables: Vec<Vec<[i64; 11]>>,
    /// Slips: (first slot, count).
    pub slips: Vec<[u64; 2]>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// Order in which LBNs visit the tracks.
pub enum Mapping {
    /// Surfaces 0..N-1 within each cylinder, cylinders ascending (DiskSim scheme 0).
    #[default]
    CylinderMajor,
    /// Surfaces alternate direction on successive cylinders, so a cylinder
    /// switch stays on the same surface; odd cylinders (absolute number) run
    /// downwards (DiskSim scheme 2).
    Serpentine,
    /// Serpentine with the parity counted from each zone's first cylinder,
    /// which runs upwards (DiskSim scheme 1).
    SerpentineZone,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// Where spare sectors are reserved (DiskSim's sparing schemes).
pub enum Sparing {
    /// No spare space.
    #[default]
    None,
    /// `spares` sectors at the end of every track.
    SectorsPerTrack,
    /// `spares` sectors at the end of every cylinder.
    SectorsPerCylinder,
    /// `spares` sectors at the end of every range of `sparing_range_cylinders` cylinders.
    SectorsPerRange,
    /// `spares` sectors at the end of the zone.
    SectorsPerZone,
    /// No spares inside zones (spare space lies past the exported blocks, at
    /// the end of the disk); a slip lowers its zone's LBN count by one.
    EndOfDisk,
    /// `spares` whole tracks at the end of the zone.
    TracksPerZone,
    /// `spares` whole cylinders at the end of the zone.
    CylindersPerZone,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// A zone: cylinders recorded with the same sectors per track.
pub struct ZoneSpec {
    /// First cylinder of the zone.
    pub first_cylinder: u32,
    /// Last cylinder of the zone (inclusive).
    pub last_cylinder: u32,
    /// Physical sectors per track in the zone.
    pub sectors_per_track: u32,
    /// Physical sector holding the zone's first LBN (may be fractional; rounded).
    #[serde(default)]
    pub first_block_offset_sectors: f64,
    /// Skew between the first LBNs of consecutive tracks in a cylinder, sectors.
    pub track_skew_sectors: f64,
    /// Skew across a cylinder switch, sectors.
    pub cylinder_skew_sectors: f64,
    /// Spare space, in the unit set by the layout's `sparing` scheme.
    #[serde(default)]
    pub spares: u32,
    /// LBN positions left empty at the front of the zone (counted in slots that
    /// would otherwise hold LBNs, i.e. spare slots are not counted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub empty_front_slots: u64,
    /// Slipped sectors: zone-relative physical slot numbers skipped by the LBN
    /// numbering (slot = (relative cylinder x surfaces + track) x sectors + sector,
    /// tracks in mapping order, sectors from the track's first-LBN sector).
    #[serde(default)]
    pub slips: Vec<u64>,
    /// Slipped whole tracks (track sparing): zone-relative track numbers in mapping order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slipped_tracks: Vec<u64>,
    /// Remapped sectors: (defective slot, spare slot it is served from), zone-relative slots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defects: Vec<(u64, u64)>,
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// The seek curve: a measured `table`, else the `hpl` formula, else the three-point curve through the single-cylinder, average and full-stroke seeks.
pub struct SeekSpec {
    /// Measured seek curve: (cylinder distance, ms), linearly interpolated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Vec<(f64, f64)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Single-cylinder seek, ms (three-point curve).
    pub single_cylinder_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Average seek, ms (three-point curve).
    pub average_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Full-stroke seek, ms (three-point curve).
    pub full_stroke_ms: Option<f64>,
    /// Write seek curve (DiskSim "dual seek": the 4th column of a .seek file);
    /// writes use it instead of `table` when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_table: Option<Vec<(f64, f64)>>,
    /// HPL seek formula (DiskSim seek types `hpl` / `hplplus10`); used when `table` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpl: Option<HplSeek>,
    #[serde(default)]
    /// Head switch, ms.
    pub head_switch_ms: f64,
    /// Fixed cost (settling, servo) of a read miss that finds the heads
    /// already on its track, before the rotational wait; the seek curve
    /// folds it into distances of one cylinder and up (DiskSim: 0). Absent:
    /// derived from the drive's own figures, the seek curve extrapolated to
    /// distance 0 from distances 1 and 2, at most the head switch and the
    /// single-cylinder seek (docs/disksim-parameters.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_track_read_ms: Option<f64>,
    /// Added to every write that moved the heads (may be negative: DiskSim's
    /// validated HP and DEC drives shorten write seeks; the sum is floored at 0).
    #[serde(default)]
    pub write_settle_ms: f64,
}

/// DiskSim's HPL seek: t(d) = a + b*sqrt(d) for 1 <= d < boundary, else
/// c + e*d (ms); `single_cylinder_ms` overrides d = 1; `first_ten_ms[k]`
/// overrides d = k + 1 (seek type `hplplus10`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HplSeek {
    /// Distance at which the short (square-root) part gives way to the long (linear) part, cylinders.
    pub boundary_cylinders: f64,
    /// `a`: constant of the short part, ms.
    pub short_const_ms: f64,
    /// `b`: square-root coefficient of the short part, ms.
    pub short_sqrt_ms: f64,
    /// `c`: constant of the long part, ms.
    pub long_const_ms: f64,
    /// `e`: per-cylinder coefficient of the long part, ms.
    pub long_linear_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Seek at distance 1, ms, overriding the formula.
    pub single_cylinder_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Seeks at distances 1, 2, ... (at most 10), ms, overriding the formula (`hplplus10`).
    pub first_ten_ms: Vec<f64>,
}

/// Drive controller: command overheads, bus transfer, the in-drive queue and
/// the buffer cache figures, as DiskSim's `.diskspecs` state them;
/// docs/disksim-parameters.md says which the model uses and how.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerSpec {
    /// Command-processing overhead of a read that misses the cache, after a read / after a write.
    pub read_overhead_after_read_ms: f64,
    /// Read miss overhead after a write, ms.
    pub read_overhead_after_write_ms: f64,
    /// Same for a write that misses (is not absorbed by) the cache.
    pub write_overhead_after_read_ms: f64,
    /// Write miss overhead after a write, ms.
    pub write_overhead_after_write_ms: f64,
    /// Overheads of cache hits.
    pub read_hit_overhead_after_read_ms: f64,
    /// Read hit overhead after a write, ms.
    pub read_hit_overhead_after_write_ms: f64,
    /// Write hit overhead after a read, ms.
    pub write_hit_overhead_after_read_ms: f64,
    /// Write hit overhead after a write, ms.
    pub write_hit_overhead_after_write_ms: f64,
    /// DiskSim `Per-request overhead time`, ms.
    pub per_request_overhead_ms: f64,
    /// DiskSim scales every processing overhead by this (not the bus
    /// transfer times, which are per block, not processing).
    pub overhead_time_scale: f64,
    /// DiskSim `Read completion overhead`, ms.
    pub read_completion_overhead_ms: f64,
    /// DiskSim `Write completion overhead`, ms.
    pub write_completion_overhead_ms: f64,
    /// DiskSim `Data preparation overhead`, ms.
    pub data_preparation_overhead_ms: f64,
    /// DiskSim `First reselect overhead`, ms.
    pub first_reselect_overhead_ms: f64,
    /// DiskSim `Other reselect overhead`, ms.
    pub other_reselect_overhead_ms: f64,
    /// DiskSim `Read disconnect afterread`, ms.
    pub read_disconnect_after_read_ms: f64,
    /// DiskSim `Read disconnect afterwrite`, ms.
    pub read_disconnect_after_write_ms: f64,
    /// DiskSim `Write disconnect overhead`, ms.
    pub write_disconnect_overhead_ms: f64,
    /// Time to move one sector across the host bus (reads; writes too unless set below).
    pub bus_sector_ms: f64,
    /// Time to move one sector of write data across the host bus, if different.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_write_sector_ms: Option<f64>,
    /// Commands the drive can hold (tagged command queue depth) in simulation.
    pub queue_depth: u32,
    /// DiskSim's `Max queue length` as the file states it (not used for timing).
    pub max_queue_length: u32,
    /// DiskSim `Number of buffer segments`.
    pub cache_segments: u32,
    /// DiskSim `Maximum number of write segments`.
    pub cache_write_segments: u32,
    /// DiskSim `Segment size (in blks)`.
    pub segment_size_blocks: u32,
    /// DiskSim `Use separate write segment`, as the file states it. The
    /// reference (Western Digital's DiskSim, where the catalogue files come
    /// from) reads it and ignores it for the buffer, and so does the model
    /// unless `dedicated_write_segment` is set; PDL's extra write disconnect
    /// (`extra_write_disconnect`) rests on it either way.
    pub separate_write_segment: bool,
    /// With `separate_write_segment`: reserve the buffer's last segment for
    /// writes, as DiskSim 4.0 (PDL) does: every write goes there, reads never
    /// take it or hit its data. false (default): reads and writes share every
    /// segment, as the reference does (docs/disksim-parameters.md).
    #[serde(skip_serializing_if = "is_false")]
    pub dedicated_write_segment: bool,
    /// DiskSim `Enable caching in buffer`.
    pub caching_enabled: bool,
    /// DiskSim `Minimum read-ahead (blks)`.
    pub read_ahead_min_blocks: u32,
    /// DiskSim `Maximum read-ahead (blks)`.
    pub read_ahead_max_blocks: u32,
    /// DiskSim `Buffer continuous read` (0 = off; other values select a read-ahead mode).
    pub continuous_read: u32,
    /// DiskSim `Fast write level`: 0 = write-through, 1 = write-back of sequential writes, 2 = write-back.
    pub fast_write_level: u32,
    /// Report completion as soon as data is in / out of the buffer.
    pub immediate_buffer_read: bool,
    /// Same for writes (DiskSim `Immediate buffer write`).
    pub immediate_buffer_write: bool,
    /// Reads may be served from write data still in the buffer.
    pub read_hits_on_write_data: bool,
    /// While waiting for a read's first sector, keep the sectors that pass before it.
    pub read_any_free_blocks: bool,
    /// DiskSim `High (read) water mark`: a read miss reconnects to the bus once
    /// this fraction is buffered (0: as soon as its first sector is).
    pub read_water_mark: f64,
    /// DiskSim `Set watermark by reqsize`: the fraction is of the request or a
    /// segment, whichever is smaller, rounded down (else of a segment, rounded up).
    pub water_mark_by_request: bool,
    /// DiskSim `Extra write disconnect` (HP C2247A/C2249A): a write miss
    /// disconnects after its command and reconnects for its data later; the
    /// four `extradisc_*` figures time that path.
    pub extra_write_disconnect: bool,
    /// DiskSim `Extradisc command overhead`, ms.
    pub extradisc_command_overhead_ms: f64,
    /// DiskSim `Extradisc disconnect overhead`, ms.
    pub extradisc_disconnect_overhead_ms: f64,
    /// DiskSim `Extradisc inter-disconnect delay`, ms.
    pub extradisc_inter_disconnect_delay_ms: f64,
    /// DiskSim `Extradisc 2nd disconnect overhead`, ms.
    pub extradisc_second_disconnect_overhead_ms: f64,
    /// DiskSim `Extradisc seek delta`: an extra-disconnect write's positioning
    /// starts this long after its command overhead (Extradisc command overhead).
    pub extradisc_seek_delta_ms: f64,
    /// DiskSim `Combine seq writes`: a write-back write that starts where the
    /// write being destaged ends joins that destage instead of waiting for it.
    pub combine_seq_writes: bool,
    /// DiskSim `Read-ahead over requested`: read-ahead may replace, in its
    /// segment, the data just returned to the host, so a segment's worth is
    /// read ahead and a re-read of that data misses (else the segment keeps
    /// the request and reads ahead only into the room left).
    pub read_ahead_over_requested: bool,
    /// DiskSim `Read-ahead over requested = -1`: once a read's data has been
    /// sent its own blocks leave the segment, so an immediate re-read misses
    /// while the read-ahead data still hits.
    #[serde(skip_serializing_if = "is_false")]
    pub read_ahead_drops_request: bool,
    /// DiskSim `Read-ahead on idle hit`: a whole hit that finds the mechanism
    /// idle restarts a read-ahead that has stopped (a new seek and rotation
    /// from the heads to the segment's end). Without it a stopped read-ahead
    /// stays stopped; a running one is extended by hits either way.
    #[serde(skip_serializing_if = "is_false")]
    pub read_ahead_on_idle_hit: bool,
    /// DiskSim `Stop prefetch in sector = 0`: a read-ahead stopped for a new
    /// command first finishes the sector under the head (the heads are free
    /// at its end); false (`= 1`): it is abandoned at once, mid-sector. A
    /// track switch under way is completed either way.
    #[serde(skip_serializing_if = "is_false")]
    pub finish_sector_on_stop: bool,
    /// When a read miss starts a read-ahead: after every read (DiskSim's
    /// behaviour, the default) or only once a read continues the previous
    /// one (`stream`: drives that detect sequential streams first). Set it
    /// only from knowledge of the drive, never to fit a trace.
    #[serde(skip_serializing_if = "ReadAheadWhen::is_default")]
    pub read_ahead_when: ReadAheadWhen,
    /// A read miss on the track of the previous read miss (a second command
    /// on the same track) makes the firmware assume locality: the read-ahead
    /// after it reads at least this many blocks before a command may stop it
    /// (Lumb et al. 2002, section 4.3, the reason for external freeblock's
    /// one-command-per-track rule). 0 (default): no such trigger. Set it
    /// only from knowledge of the drive.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub same_track_read_ahead_blocks: u32,
    /// DiskSim `Minimum seek delay`: a nonsequential write positions for at least this, even on the same track.
    pub minimum_seek_delay_ms: f64,
}

/// When a drive starts a read-ahead (`read_ahead_when`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadAheadWhen {
    /// After every read miss (DiskSim).
    #[default]
    EveryRead,
    /// Only after a read that starts where the previous read ended.
    Stream,
}

impl ReadAheadWhen {
    fn is_default(&self) -> bool {
        *self == ReadAheadWhen::EveryRead
    }
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Default for ControllerSpec {
    fn default() -> Self {
        ControllerSpec {
            read_overhead_after_read_ms: 0.0,
            read_overhead_after_write_ms: 0.0,
            write_overhead_after_read_ms: 0.0,
            write_overhead_after_write_ms: 0.0,
            read_hit_overhead_after_read_ms: 0.0,
            read_hit_overhead_after_write_ms: 0.0,
            write_hit_overhead_after_read_ms: 0.0,
            write_hit_overhead_after_write_ms: 0.0,
            per_request_overhead_ms: 0.0,
            overhead_time_scale: 1.0,
            read_completion_overhead_ms: 0.0,
            write_completion_overhead_ms: 0.0,
            data_preparation_overhead_ms: 0.0,
            first_reselect_overhead_ms: 0.0,
            other_reselect_overhead_ms: 0.0,
            read_disconnect_after_read_ms: 0.0,
            read_disconnect_after_write_ms: 0.0,
            write_disconnect_overhead_ms: 0.0,
            bus_sector_ms: 0.0,
            bus_write_sector_ms: None,
            queue_depth: 1024,
            max_queue_length: 0,
            cache_segments: 0,
            cache_write_segments: 0,
            segment_size_blocks: 0,
            separate_write_segment: false,
            dedicated_write_segment: false,
            caching_enabled: false,
            read_ahead_min_blocks: 0,
            read_ahead_max_blocks: 0,
            continuous_read: 0,
            fast_write_level: 0,
            immediate_buffer_read: false,
            immediate_buffer_write: false,
            read_hits_on_write_data: false,
            read_any_free_blocks: false,
            read_water_mark: 0.0,
            water_mark_by_request: true,
            minimum_seek_delay_ms: 0.0,
            read_ahead_over_requested: false,
            read_ahead_drops_request: false,
            read_ahead_on_idle_hit: false,
            finish_sector_on_stop: false,
            read_ahead_when: ReadAheadWhen::EveryRead,
            same_track_read_ahead_blocks: 0,
            extra_write_disconnect: false,
            extradisc_command_overhead_ms: 0.0,
            extradisc_disconnect_overhead_ms: 0.0,
            extradisc_inter_disconnect_delay_ms: 0.0,
            extradisc_second_disconnect_overhead_ms: 0.0,
            extradisc_seek_delta_ms: 0.0,
            combine_seq_writes: true,
        }
    }
}

/// What a spec may make the simulator allocate, declared once. Every way a
/// disk gets in (spec TOML, DiskSim import, datasheet) passes
/// [`DiskSpec::validate`], which checks these before anything is sized from
/// the file. Each bound is far above any drive in DiskSim's catalogue (the
/// largest: maxtor300g, 80,513 cylinders x 4 surfaces, 1,200 sectors per
/// track); raise one here if a real drive needs it.
pub mod limits {
    /// Recording surfaces (heads).
    pub const MAX_SURFACES: u64 = 1024;
    /// Cylinders; the seek curve holds one entry per distance (3 x 4 B each).
    pub const MAX_CYLINDERS: u64 = 10_000_000;
    /// Tracks (surfaces x cylinders); a g4 layout keeps a record per track
    /// (about 36 B each).
    pub const MAX_TRACKS: u64 = 1 << 24;
    /// Sectors per track (the g4 track table stores them in 16 bits).
    pub const MAX_SECTORS_PER_TRACK: u64 = u16::MAX as u64;
    /// Exported blocks (2^40 sectors = 512 TiB at 512 B); with the two bounds
    /// above, tracks x sectors per track cannot overflow 64 bits.
    pub const MAX_BLOCKS: u64 = 1 << 40;
    /// Bytes per sector.
    pub const MAX_SECTOR_BYTES: u64 = 1 << 16;
    /// Slipped, remapped or slipped-track sectors a layout may list in all
    /// (each kept as 8 or 16 B).
    pub const MAX_SLIPS: u64 = 1 << 22;
    /// Zones in a zoned layout.
    pub const MAX_ZONES: u64 = 1 << 16;
    /// Buffer cache segments (one record each, scanned on every lookup).
    pub const MAX_CACHE_SEGMENTS: u64 = 4096;
    /// Blocks per cache segment (2^24 blocks = 8 GiB at 512 B).
    pub const MAX_SEGMENT_BLOCKS: u64 = 1 << 24;
    /// g4 track patterns and index tables, entries over all tables, and the
    /// depth of the table tree (expanded recursively).
    pub const MAX_G4_PATTERNS: u64 = 1 << 16;
    /// g4 index tables.
    pub const MAX_G4_TABLES: u64 = 4096;
    /// g4 entries over all tables.
    pub const MAX_G4_ENTRIES: u64 = 1 << 20;
    /// Depth of the g4 table tree.
    pub const MAX_G4_DEPTH: u64 = 64;
    /// Points of a measured seek curve.
    pub const MAX_SEEK_POINTS: u64 = 1 << 20;

    /// A drive's time figure (an overhead, a seek, a sector's bus time), ms:
    /// none takes this long; beyond, times would saturate the clock.
    pub const MAX_FIGURE_MS: f64 = 10_000.0;

    /// `what` = `value` exceeds `max`: the one-line error every bound gives.
    pub(crate) fn check(what: &str, value: u64, max: u64) -> std::result::Result<(), String> {
        if value > max {
            return Err(format!("{what} = {value} exceeds the bound {max} (disk::spec::limits)"));
        }
        Ok(())
    }

    /// Time figure `what` = `ms` is finite and in [`min`, `MAX_FIGURE_MS`]
    /// (`min` 0, or -`MAX_FIGURE_MS` for a signed adjustment).
    pub(crate) fn check_ms(what: &str, ms: f64, min: f64) -> std::result::Result<(), String> {
        if !(ms.is_finite() && min <= ms && ms <= MAX_FIGURE_MS) {
            // (A huge value as 1e300, not three hundred digits.)
            let shown = if ms.abs() >= 1e9 { format!("{ms:e}") } else { ms.to_string() };
            return Err(format!("{what} = {shown}: expected a time in [{min}, {MAX_FIGURE_MS}] ms"));
        }
        Ok(())
    }
}

impl DiskSpec {
    /// Parse and validate a spec; errors name `origin` (the file).
    pub fn from_toml(text: &str, origin: &str) -> Result<DiskSpec> {
        let spec: DiskSpec = toml::from_str(text).map_err(|e| Error::File { path: origin.to_string(), msg: one_line(&e.to_string()) })?;
        spec.validate().map_err(|e| Error::File { path: origin.to_string(), msg: e.to_string() })?;
        Ok(spec)
    }

    /// The spec as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("disk spec serializes")
    }

    /// Exported capacity, bytes (`blocks` x `sector_bytes`).
    pub fn capacity_bytes(&self) -> u64 {
        self.blocks * self.sector_bytes as u64
    }

    /// Structure and [`limits`]: everything the simulator sizes from a spec
    /// is bounded here, before `Layout`, `Mechanics` or the cache allocate.
    pub fn validate(&self) -> Result<()> {
        if self.surfaces == 0 || self.cylinders == 0 {
            return Err(config_err(&self.name, "surfaces and cylinders must be >= 1"));
        }
        self.check_limits().map_err(|m| config_err(&self.name, m))?;
        if self.layout.g4.is_some() {
            if !self.layout.zones.is_empty() {
                return Err(config_err(format!("{}: layout", self.name), "a layout has either zones or a g4 table, not both"));
            }
            return Ok(());
        }
        if self.layout.zones.is_empty() {
            return Err(config_err(format!("{}: layout.zones", self.name), "at least one zone is required"));
        }
        for (i, z) in self.layout.zones.iter().enumerate() {
            let what = format!("{}: layout.zones[{i}]", self.name);
            if z.first_cylinder > z.last_cylinder || z.last_cylinder >= self.cylinders {
                return Err(config_err(what, format!(
                    "cylinders {}..{} must be ordered and below {}", z.first_cylinder, z.last_cylinder, self.cylinders)));
            }
            if z.sectors_per_track == 0 {
                return Err(config_err(what, "sectors_per_track must be >= 1"));
            }
            if i > 0 && z.first_cylinder <= self.layout.zones[i - 1].last_cylinder {
                return Err(config_err(what, "zones must be in increasing, non-overlapping cylinder order"));
            }
        }
        Ok(())
    }
}

impl DiskSpec {
    /// Every time figure of the seek curve and the controller: finite, not
    /// negative (but the two signed adjustments), at most `MAX_FIGURE_MS`;
    /// the water mark a fraction, the overhead scale in [0, 1000], and
    /// DiskSim's modes as its manual numbers them.
    fn check_figures(&self) -> std::result::Result<(), String> {
        use limits::{check_ms, MAX_FIGURE_MS};
        let (s, c) = (&self.seek, &self.controller);
        for (what, v) in [("seek.single_cylinder_ms", s.single_cylinder_ms), ("seek.average_ms", s.average_ms),
                          ("seek.full_stroke_ms", s.full_stroke_ms), ("seek.same_track_read_ms", s.same_track_read_ms),
                          ("controller.bus_write_sector_ms", c.bus_write_sector_ms)] {
            if let Some(v) = v {
                check_ms(what, v, 0.0)?;
            }
        }
        check_ms("seek.head_switch_ms", s.head_switch_ms, 0.0)?;
        if let Some(h) = &s.hpl {
            for (what, v) in [("seek.hpl.short_const_ms", h.short_const_ms), ("seek.hpl.short_sqrt_ms", h.short_sqrt_ms),
                              ("seek.hpl.long_const_ms", h.long_const_ms), ("seek.hpl.long_linear_ms", h.long_linear_ms)] {
                check_ms(what, v, 0.0)?;
            }
            if let Some(v) = h.single_cylinder_ms {
                check_ms("seek.hpl.single_cylinder_ms", v, 0.0)?;
            }
            for (k, &v) in h.first_ten_ms.iter().enumerate() {
                check_ms(&format!("seek.hpl.first_ten_ms[{k}]"), v, 0.0)?;
            }
        }
        for (what, v) in [
            ("read_overhead_after_read_ms", c.read_overhead_after_read_ms), ("read_overhead_after_write_ms", c.read_overhead_after_write_ms),
            ("write_overhead_after_read_ms", c.write_overhead_after_read_ms), ("write_overhead_after_write_ms", c.write_overhead_after_write_ms),
            ("read_hit_overhead_after_read_ms", c.read_hit_overhead_after_read_ms), ("read_hit_overhead_after_write_ms", c.read_hit_overhead_after_write_ms),
            ("write_hit_overhead_after_read_ms", c.write_hit_overhead_after_read_ms), ("write_hit_overhead_after_write_ms", c.write_hit_overhead_after_write_ms),
            ("per_request_overhead_ms", c.per_request_overhead_ms), ("read_completion_overhead_ms", c.read_completion_overhead_ms),
            ("write_completion_overhead_ms", c.write_completion_overhead_ms), ("data_preparation_overhead_ms", c.data_preparation_overhead_ms),
            ("first_reselect_overhead_ms", c.first_reselect_overhead_ms), ("other_reselect_overhead_ms", c.other_reselect_overhead_ms),
            ("read_disconnect_after_read_ms", c.read_disconnect_after_read_ms), ("read_disconnect_after_write_ms", c.read_disconnect_after_write_ms),
            ("write_disconnect_overhead_ms", c.write_disconnect_overhead_ms), ("bus_sector_ms", c.bus_sector_ms),
            ("extradisc_command_overhead_ms", c.extradisc_command_overhead_ms), ("extradisc_disconnect_overhead_ms", c.extradisc_disconnect_overhead_ms),
            ("extradisc_inter_disconnect_delay_ms", c.extradisc_inter_disconnect_delay_ms),
            ("extradisc_second_disconnect_overhead_ms", c.extradisc_second_disconnect_overhead_ms),
            ("minimum_seek_delay_ms", c.minimum_seek_delay_ms),
        ] {
            check_ms(&format!("controller.{what}"), v, 0.0)?;
        }
        // Adjustments that may shorten a time (the sum is floored at 0 where used).
        check_ms("seek.write_settle_ms", s.write_settle_ms, -MAX_FIGURE_MS)?;
        check_ms("controller.extradisc_seek_delta_ms", c.extradisc_seek_delta_ms, -MAX_FIGURE_MS)?;
        if !(0.0..=1.0).contains(&c.read_water_mark) {
            return Err(format!("controller.read_water_mark = {}: expected a fraction in [0, 1]", c.read_water_mark));
        }
        if !(0.0..=1000.0).contains(&c.overhead_time_scale) {
            return Err(format!("controller.overhead_time_scale = {}: expected a factor in [0, 1000]", c.overhead_time_scale));
        }
        for (what, v, max) in [("controller.continuous_read", c.continuous_read, 4), ("controller.fast_write_level", c.fast_write_level, 2)] {
            if v > max {
                return Err(format!("{what} = {v}: expected a DiskSim mode in 0..={max}"));
            }
        }
        Ok(())
    }

    fn check_limits(&self) -> std::result::Result<(), String> {
        use limits::*;
        check("surfaces", self.surfaces as u64, MAX_SURFACES)?;
        check("cylinders", self.cylinders as u64, MAX_CYLINDERS)?;
        check("surfaces x cylinders (tracks)", self.surfaces as u64 * self.cylinders as u64, MAX_TRACKS)?;
        check("blocks", self.blocks, MAX_BLOCKS)?;
        if self.sector_bytes == 0 {
            return Err("sector_bytes = 0: expected >= 1".into());
        }
        check("sector_bytes", self.sector_bytes as u64, MAX_SECTOR_BYTES)?;
        let c = &self.controller;
        check("controller.cache_segments", c.cache_segments as u64, MAX_CACHE_SEGMENTS)?;
        check("controller.cache_write_segments", c.cache_write_segments as u64, MAX_CACHE_SEGMENTS)?;
        check("controller.segment_size_blocks", c.segment_size_blocks as u64, MAX_SEGMENT_BLOCKS)?;
        check("controller.read_ahead_max_blocks", c.read_ahead_max_blocks as u64, MAX_SEGMENT_BLOCKS)?;
        check("controller.read_ahead_min_blocks", c.read_ahead_min_blocks as u64, MAX_SEGMENT_BLOCKS)?;
        for (what, t) in [("seek.table", &self.seek.table), ("seek.write_table", &self.seek.write_table)] {
            if let Some(t) = t {
                check(&format!("{what} points"), t.len() as u64, MAX_SEEK_POINTS)?;
            }
        }
        if !(self.rpm > 0.0 && self.rpm < 100_000.0) {
            return Err(format!("rpm = {}: expected in (0, 100000)", self.rpm));
        }
        self.check_figures()?;
        for (what, t) in [("seek.table", &self.seek.table), ("seek.write_table", &self.seek.write_table)] {
            let mut prev = 0.0;
            for (i, &(d, ms)) in t.iter().flatten().enumerate() {
                if !(d >= 1.0 && d > prev && d.is_finite() && ms >= 0.0 && ms.is_finite()) {
                    return Err(format!("{what}[{i}] = ({d}, {ms}): distances must increase from 1 (previous {prev}) and times be finite and >= 0"));
                }
                prev = d;
            }
        }
        let l = &self.layout;
        check("layout.zones", l.zones.len() as u64, MAX_ZONES)?;
        let mut listed = 0u64;
        for (i, z) in l.zones.iter().enumerate() {
            check(&format!("layout.zones[{i}].sectors_per_track"), z.sectors_per_track as u64, MAX_SECTORS_PER_TRACK)?;
            check(&format!("layout.zones[{i}].last_cylinder"), z.last_cylinder as u64, MAX_CYLINDERS - 1)?;
            // Slipped tracks expand to one slip per sector.
            let n = z.slips.len() as u64 + z.defects.len() as u64
                + (z.slipped_tracks.len() as u64).saturating_mul(z.sectors_per_track as u64);
            listed = listed.saturating_add(n);
            check(&format!("layout.zones[..={i}] slips + defects + slipped-track sectors"), listed, MAX_SLIPS)?;
            for (k, v) in [("first_block_offset_sectors", z.first_block_offset_sectors),
                ("track_skew_sectors", z.track_skew_sectors), ("cylinder_skew_sectors", z.cylinder_skew_sectors)] {
                if !(v.is_finite() && v >= 0.0 && v <= MAX_SECTORS_PER_TRACK as f64 * MAX_TRACKS as f64) {
                    return Err(format!("layout.zones[{i}].{k} = {v}: expected a finite number of sectors >= 0"));
                }
            }
        }
        if let Some(g4) = &l.g4 {
            g4.check_limits(self.surfaces)?;
        }
        Ok(())
    }
}

impl G4Spec {
    /// Bounds on the table tree before it is expanded: sizes, depth, the
    /// tracks it expands to (counted, not built) and the slots it slips.
    pub(crate) fn check_limits(&self, surfaces: u32) -> std::result::Result<(), String> {
        use limits::*;
        check("surfaces", surfaces as u64, MAX_SURFACES)?;
        check("layout.g4.patterns", self.patterns.len() as u64, MAX_G4_PATTERNS)?;
        check("layout.g4.tables", self.tables.len() as u64, MAX_G4_TABLES)?;
        check("layout.g4 table entries", self.tables.iter().map(|t| t.len() as u64).sum(), MAX_G4_ENTRIES)?;
        for (i, p) in self.patterns.iter().enumerate() {
            check(&format!("layout.g4.patterns[{i}] sectors"), p[2] as u64, MAX_SECTORS_PER_TRACK)?;
        }
        // Per table: tracks it expands to and tree depth (children come first).
        let mut tracks = vec![0u64; self.tables.len()];
        let mut depth = vec![0u64; self.tables.len()];
        for (ti, t) in self.tables.iter().enumerate() {
            let (mut n, mut d) = (0u64, 1u64);
            for (ei, e) in t.iter().enumerate() {
                let [first_slot, first_cyl, _, len, clen, _, run, crun, kind, child, _] = *e;
                // Keep the expansion's slot and cylinder arithmetic far from overflow.
                let at = format!("layout.g4.tables[{ti}][{ei}]");
                for (k, v, max) in [("first slot", first_slot, MAX_BLOCKS), ("slots per child", len, MAX_BLOCKS), ("slots in the run", run, MAX_BLOCKS),
                    ("first cylinder", first_cyl, MAX_CYLINDERS), ("cylinders per child", clen, MAX_CYLINDERS), ("cylinders in the run", crun, MAX_CYLINDERS)] {
                    check(&format!("{at} {k} (absolute value)"), v.unsigned_abs(), max)?;
                }
                let reps = if len > 0 && run >= 0 { (run / len) as u64 } else { 0 };
                let each = match kind {
                    0 => 1,
                    _ if child >= 0 && (child as usize) < ti => {
                        d = d.max(depth[child as usize] + 1);
                        tracks[child as usize]
                    }
                    _ => return Err(format!("layout.g4.tables[{ti}][{ei}]: child table {child} must come before its parent (below {ti})")),
                };
                n = n.saturating_add(reps.saturating_mul(each));
                check(&format!("layout.g4.tables[{ti}][{ei}]: tracks of table {ti} (run {run} / {len} slots per child)"), n, MAX_TRACKS)?;
            }
            tracks[ti] = n;
            depth[ti] = d;
            check(&format!("layout.g4.tables[{ti}] depth"), d, MAX_G4_DEPTH)?;
        }
        let mut slipped = 0u64;
        for (i, &[s, n]) in self.slips.iter().enumerate() {
            if s.checked_add(n).is_none() {
                return Err(format!("layout.g4.slips[{i}] = ({s}, {n}): slot + count overflows"));
            }
            slipped = slipped.saturating_add(n);
            check(&format!("layout.g4.slips[..={i}] slipped slots"), slipped, MAX_SLIPS)?;
        }
        Ok(())
    }
}

/// TOML errors span several lines; keep the first, which names line and column.
pub(crate) fn one_line(s: &str) -> String {
    s.lines().filter(|l| !l.trim().is_empty()).map(str::trim).collect::<Vec<_>>().join(" ")
}
