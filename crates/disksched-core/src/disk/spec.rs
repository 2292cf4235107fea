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
    pub surfaces: u32,
    pub cylinders: u32,
    /// Number of LBNs the drive exports; must equal what the layout maps.
    pub blocks: u64,
    #[serde(default = "default_sector_bytes")]
    pub sector_bytes: u32,
    pub rpm: f64,
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
    /// For `sparing = "sectors-per-range"`: cylinders per range.
    #[serde(default = "one")]
    pub sparing_range_cylinders: u32,
    pub zones: Vec<ZoneSpec>,
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
    /// switch stays on the same surface (DiskSim scheme 1).
    Serpentine,
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
    /// Slipped sectors: zone-relative physical slot numbers skipped by the LBN numbering.
    #[serde(default)]
    pub slips: Vec<u64>,
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
    #[serde(default)]
    pub head_switch_ms: f64,
    /// Added to every write that moved the heads.
    #[serde(default)]
    pub write_settle_ms: f64,
}

/// Drive controller: command overheads, bus transfer and the in-drive queue.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerSpec {
    /// Command-processing overhead of a read (media access), after a read / after a write.
    pub read_overhead_after_read_ms: f64,
    pub read_overhead_after_write_ms: f64,
    pub write_overhead_after_read_ms: f64,
    pub write_overhead_after_write_ms: f64,
    /// Time to move one sector across the host bus.
    pub bus_sector_ms: f64,
    /// Commands the drive can hold (tagged command queue depth).
    pub queue_depth: u32,
}

impl Default for ControllerSpec {
    fn default() -> Self {
        ControllerSpec {
            read_overhead_after_read_ms: 0.0,
            read_overhead_after_write_ms: 0.0,
            write_overhead_after_read_ms: 0.0,
            write_overhead_after_write_ms: 0.0,
            bus_sector_ms: 0.0,
            queue_depth: 1024,
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
