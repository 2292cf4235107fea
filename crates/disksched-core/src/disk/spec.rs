//! The project's own disk spec format (TOML), one file per drive.
//!
//! Units are in the field names. A spec describes the drive as it is (the
//! truth); a predictor may be built from the same spec (in-firmware) or from
//! a different one (an external scheduler's belief).

use crate::error::{config_err, Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Where the figures come from.
    #[serde(default)]
    pub source: String,
    /// What the drive was validated against (a built-in with a DiskSim
    /// validation set-up), or why not.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub validated: String,
    pub surfaces: u32,
    pub cylinders: u32,
    /// Number of LBNs the drive exports; the layout must map at least this many
    /// (LBNs it maps beyond are unused). Imported zoned drives export what the
    /// zones map (DiskSim ignores `Block count` for them); a table-driven (g4)
    /// drive exports its `Block count`.
    pub blocks: u64,
    #[serde(default = "default_sector_bytes")]
    pub sector_bytes: u32,
    pub rpm: f64,
    /// DiskSim's `Percent error in rpms` (stored, not modelled).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub rpm_error_percent: f64,
    pub layout: LayoutSpec,
    pub seek: SeekSpec,
    #[serde(default)]
    pub controller: ControllerSpec,
}

fn default_sector_bytes() -> u32 {
    512
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
pub struct ZoneSpec {
    pub first_cylinder: u32,
    pub last_cylinder: u32,
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

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeekSpec {
    /// Measured seek curve: (cylinder distance, ms), linearly interpolated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Vec<(f64, f64)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_cylinder_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_stroke_ms: Option<f64>,
    /// Write seek curve (DiskSim "dual seek": the 4th column of a .seek file);
    /// writes use it instead of `table` when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_table: Option<Vec<(f64, f64)>>,
    /// HPL seek formula (DiskSim seek types `hpl` / `hplplus10`); used when `table` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpl: Option<HplSeek>,
    #[serde(default)]
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
    pub boundary_cylinders: f64,
    pub short_const_ms: f64,
    pub short_sqrt_ms: f64,
    pub long_const_ms: f64,
    pub long_linear_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_cylinder_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
    pub read_overhead_after_write_ms: f64,
    /// Same for a write that misses (is not absorbed by) the cache.
    pub write_overhead_after_read_ms: f64,
    pub write_overhead_after_write_ms: f64,
    /// Overheads of cache hits.
    pub read_hit_overhead_after_read_ms: f64,
    pub read_hit_overhead_after_write_ms: f64,
    pub write_hit_overhead_after_read_ms: f64,
    pub write_hit_overhead_after_write_ms: f64,
    pub per_request_overhead_ms: f64,
    /// DiskSim scales every overhead by this.
    pub overhead_time_scale: f64,
    pub read_completion_overhead_ms: f64,
    pub write_completion_overhead_ms: f64,
    pub data_preparation_overhead_ms: f64,
    pub first_reselect_overhead_ms: f64,
    pub other_reselect_overhead_ms: f64,
    pub read_disconnect_after_read_ms: f64,
    pub read_disconnect_after_write_ms: f64,
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
    pub cache_segments: u32,
    pub cache_write_segments: u32,
    pub segment_size_blocks: u32,
    pub separate_write_segment: bool,
    pub caching_enabled: bool,
    pub read_ahead_min_blocks: u32,
    pub read_ahead_max_blocks: u32,
    /// DiskSim `Buffer continuous read` (0 = off; other values select a read-ahead mode).
    pub continuous_read: u32,
    /// DiskSim `Fast write level`: 0 = write-through, 1 = write-back of sequential writes, 2 = write-back.
    pub fast_write_level: u32,
    /// Report completion as soon as data is in / out of the buffer.
    pub immediate_buffer_read: bool,
    pub immediate_buffer_write: bool,
    /// Reads may be served from write data still in the buffer.
    pub read_hits_on_write_data: bool,
    /// While waiting for a read's first sector, keep the sectors that pass before it.
    pub read_any_free_blocks: bool,
    /// DiskSim `High (read) water mark`: a read miss reconnects to the bus once
    /// this fraction is buffered (0: as soon as its first sector is).
    pub read_water_mark: f64,
    /// DiskSim `Set watermark by reqsize`: the fraction is of the request (else of a segment).
    pub water_mark_by_request: bool,
    /// DiskSim `Extra write disconnect` (HP C2247A/C2249A): a write miss
    /// disconnects after its command and reconnects for its data later; the
    /// four `extradisc_*` figures time that path.
    pub extra_write_disconnect: bool,
    pub extradisc_command_overhead_ms: f64,
    pub extradisc_disconnect_overhead_ms: f64,
    pub extradisc_inter_disconnect_delay_ms: f64,
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
    /// When a read miss starts a read-ahead: after every read (DiskSim's
    /// behaviour, the default) or only once a read continues the previous
    /// one (`stream`: drives that detect sequential streams first). Set it
    /// only from knowledge of the drive, never to fit a trace.
    #[serde(skip_serializing_if = "ReadAheadWhen::is_default")]
    pub read_ahead_when: ReadAheadWhen,
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
            read_ahead_when: ReadAheadWhen::EveryRead,
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

impl DiskSpec {
    pub fn from_toml(text: &str, origin: &str) -> Result<DiskSpec> {
        toml::from_str(text).map_err(|e| Error::File { path: origin.to_string(), msg: one_line(&e.to_string()) })
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("disk spec serializes")
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.blocks * self.sector_bytes as u64
    }

    pub fn validate(&self) -> Result<()> {
        if self.surfaces == 0 || self.cylinders == 0 {
            return Err(config_err(&self.name, "surfaces and cylinders must be >= 1"));
        }
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

/// TOML errors span several lines; keep the first, which names line and column.
pub(crate) fn one_line(s: &str) -> String {
    s.lines().filter(|l| !l.trim().is_empty()).map(str::trim).collect::<Vec<_>>().join(" ")
}
