//! A plausible drive from the figures a datasheet gives, for drives nobody
//! has extracted: capacity, RPM, outer and inner media rates, track-to-track,
//! average and full-stroke seek, cache size.
//!
//! Zoned recording is modelled as `zones` zones of equal cylinder count whose
//! sectors per track fall linearly from the outer to the inner rate (data
//! density is roughly constant, so bits per track fall linearly with
//! radius). The seek curve is the three-point curve through the given seeks;
//! skews are just long enough for a head switch (track) or single-cylinder
//! seek (cylinder), as drive firmware lays them out for streaming.

use crate::disk::spec::{limits, ControllerSpec, DiskSpec, LayoutSpec, Mapping, SeekSpec, Sparing, ZoneSpec};
use crate::error::{config_err, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
/// `[datasheet]` figures from which a plausible `DiskSpec` is built (see the module doc).
pub struct Datasheet {
    /// Name given to the built drive.
    pub name: String,
    /// Capacity, GB (10^9 bytes of 512-byte sectors).
    pub capacity_gb: f64,
    /// Spindle speed, revolutions per minute.
    pub rpm: f64,
    /// Sustained media rate at the outer and inner diameter, MB/s (10^6 bytes).
    pub outer_mb_s: f64,
    /// Sustained media rate at the inner diameter, MB/s (10^6 bytes).
    pub inner_mb_s: f64,
    /// Single-cylinder seek, ms.
    pub track_to_track_ms: f64,
    /// Average seek, ms.
    pub average_seek_ms: f64,
    /// Full-stroke seek, ms.
    pub full_stroke_ms: f64,
    #[serde(default = "default_head_switch")]
    /// Head switch, ms (default 0.8).
    pub head_switch_ms: f64,
    #[serde(default)]
    /// Extra settle time for writes, ms (default 0).
    pub write_settle_ms: f64,
    #[serde(default = "default_surfaces")]
    /// Recording surfaces (default 4).
    pub surfaces: u32,
    #[serde(default = "default_zones")]
    /// Zones of equal cylinder count (default 16).
    pub zones: u32,
    /// Buffer size, KB (0: no cache).
    #[serde(default)]
    pub cache_kb: u32,
    /// Write-back caching (immediate report). Unset: on when there is a cache
    /// (`cache_kb` > 0), as current drives ship; `false` (`--no-write-cache`) for write-through.
    #[serde(default)]
    pub write_cache: Option<bool>,
    /// Interface rate, MB/s (0: no bus time).
    #[serde(default)]
    pub bus_mb_s: f64,
    /// Command overhead, ms.
    #[serde(default = "default_overhead")]
    pub overhead_ms: f64,
}

fn default_head_switch() -> f64 {
    0.8
}
fn default_surfaces() -> u32 {
    4
}
fn default_zones() -> u32 {
    16
}
fn default_overhead() -> f64 {
    0.1
}

const SECTOR: f64 = 512.0;

impl Datasheet {
    /// The `DiskSpec` these figures describe; an error naming the field when one is out of range.
    pub fn build(&self) -> Result<DiskSpec> {
        let positive = [("capacity_gb", self.capacity_gb), ("rpm", self.rpm), ("outer_mb_s", self.outer_mb_s),
            ("inner_mb_s", self.inner_mb_s), ("track_to_track_ms", self.track_to_track_ms),
            ("average_seek_ms", self.average_seek_ms), ("full_stroke_ms", self.full_stroke_ms)];
        for (what, v) in positive {
            if !(v > 0.0 && v.is_finite()) {
                return Err(config_err(format!("datasheet.{what}"), format!("{v} must be > 0")));
            }
        }
        if self.inner_mb_s > self.outer_mb_s {
            return Err(config_err("datasheet.inner_mb_s", format!("{} must not exceed outer_mb_s ({})", self.inner_mb_s, self.outer_mb_s)));
        }
        if !(1..=64).contains(&self.surfaces) || !(1..=256).contains(&self.zones) {
            return Err(config_err("datasheet", format!("surfaces {} must be in [1, 64] and zones {} in [1, 256]", self.surfaces, self.zones)));
        }
        let rev_s = 60.0 / self.rpm;
        let spt = |mb_s: f64| (mb_s * 1e6 * rev_s / SECTOR).round().max(1.0);
        let (outer, inner) = (spt(self.outer_mb_s), spt(self.inner_mb_s));
        let n = self.zones as usize;
        let zone_spt: Vec<u32> = (0..n)
            .map(|i| if n == 1 { outer } else { outer + (inner - outer) * i as f64 / (n - 1) as f64 }.round() as u32)
            .collect();
        // Bounded in floating point, before any integer is sized from them.
        let blocks_f = (self.capacity_gb * 1e9 / SECTOR).ceil();
        if blocks_f > limits::MAX_BLOCKS as f64 {
            return Err(config_err("datasheet.capacity_gb", format!(
                "{} GB is {blocks_f} sectors, above the bound of {} (disk::spec::limits)", self.capacity_gb, limits::MAX_BLOCKS)));
        }
        if outer > limits::MAX_SECTORS_PER_TRACK as f64 {
            return Err(config_err("datasheet.outer_mb_s", format!(
                "{} MB/s at {} RPM is {outer} sectors per track, above the bound of {} (disk::spec::limits)",
                self.outer_mb_s, self.rpm, limits::MAX_SECTORS_PER_TRACK)));
        }
        let blocks = blocks_f as u64;
        let per_cylinder_set: u64 = zone_spt.iter().map(|&s| s as u64 * self.surfaces as u64).sum();
        let cyl_per_zone64 = blocks.div_ceil(per_cylinder_set);
        if cyl_per_zone64 * self.zones as u64 > limits::MAX_CYLINDERS {
            return Err(config_err("datasheet", format!(
                "{} GB over {} surfaces at {}-{} MB/s needs {} cylinders, above the bound of {} (disk::spec::limits)",
                self.capacity_gb, self.surfaces, self.inner_mb_s, self.outer_mb_s, cyl_per_zone64 * self.zones as u64, limits::MAX_CYLINDERS)));
        }
        let cyl_per_zone = cyl_per_zone64 as u32;
        let sector_ms = |s: u32| rev_s * 1000.0 / s as f64;
        let zones = zone_spt.iter().enumerate().map(|(i, &s)| ZoneSpec {
            first_cylinder: i as u32 * cyl_per_zone,
            last_cylinder: (i as u32 + 1) * cyl_per_zone - 1,
            sectors_per_track: s,
            first_block_offset_sectors: 0.0,
            track_skew_sectors: (self.head_switch_ms / sector_ms(s)).ceil(),
            cylinder_skew_sectors: (self.track_to_track_ms / sector_ms(s)).ceil(),
            spares: 0,
            empty_front_slots: 0,
            slips: vec![],
            slipped_tracks: vec![],
            defects: vec![],
        }).collect();
        let bus_sector_ms = if self.bus_mb_s > 0.0 { SECTOR / (self.bus_mb_s * 1e6) * 1000.0 } else { 0.0 };
        let cache_blocks = (self.cache_kb as u64 * 1024 / SECTOR as u64).min(u32::MAX as u64) as u32;
        let segments = if cache_blocks == 0 { 0 } else { (cache_blocks / 256).clamp(1, 16) };
        let spec = DiskSpec {
            name: self.name.clone(),
            description: format!("datasheet disk: {} GB, {} RPM, {}-{} MB/s", self.capacity_gb, self.rpm, self.outer_mb_s, self.inner_mb_s),
            source: "disksched datasheet model (zones, three-point seek curve, switch-sized skews)".into(),
            validated: String::new(),
            surfaces: self.surfaces,
            cylinders: cyl_per_zone * self.zones,
            blocks,
            sector_bytes: SECTOR as u32,
            rpm: self.rpm,
            rpm_error_percent: 0.0,
            layout: LayoutSpec { mapping: Mapping::CylinderMajor, sparing: Sparing::None, sparing_range_cylinders: 1, zones, g4: None },
            seek: SeekSpec {
                single_cylinder_ms: Some(self.track_to_track_ms),
                average_ms: Some(self.average_seek_ms),
                full_stroke_ms: Some(self.full_stroke_ms),
                head_switch_ms: self.head_switch_ms,
                write_settle_ms: self.write_settle_ms,
                ..Default::default()
            },
            controller: ControllerSpec {
                read_overhead_after_read_ms: self.overhead_ms,
                read_overhead_after_write_ms: self.overhead_ms,
                write_overhead_after_read_ms: self.overhead_ms,
                write_overhead_after_write_ms: self.overhead_ms,
                read_hit_overhead_after_read_ms: self.overhead_ms,
                read_hit_overhead_after_write_ms: self.overhead_ms,
                write_hit_overhead_after_read_ms: self.overhead_ms,
                write_hit_overhead_after_write_ms: self.overhead_ms,
                bus_sector_ms,
                caching_enabled: segments > 0,
                cache_segments: segments,
                segment_size_blocks: if segments > 0 { cache_blocks / segments } else { 0 },
                read_ahead_max_blocks: if segments > 0 { cache_blocks / segments } else { 0 },
                // Read ahead until the segment is full, and on while a stream hits (DiskSim mode 3).
                continuous_read: if segments > 0 { 3 } else { 0 },
                // A stream the host takes more slowly than the media brings
                // the read-ahead to its limit; current drives resume it when
                // the stream hits again (DiskSim's `Read-ahead on idle hit`).
                read_ahead_on_idle_hit: segments > 0,
                fast_write_level: if self.write_cache.unwrap_or(cache_blocks > 0) { 2 } else { 0 },
                read_hits_on_write_data: true,
                ..Default::default()
            },
        };
        crate::disk::DiskModel::new(spec.clone())?;
        Ok(spec)
    }

    /// The figures as JSON (what `disks datasheet` passes). Python's `json`
    /// writes NaN and Infinity, which JSON lacks; errors name the figure
    /// and its command-line flag, not a column of the internal string.
    pub fn from_json(text: &str) -> Result<Datasheet> {
        let v: serde_json::Value = serde_json::from_str(&quote_nonfinite(text))
            .map_err(|e| config_err("datasheet", format!("figures are not valid JSON: {e}")))?;
        let obj = v.as_object().ok_or_else(|| config_err("datasheet", "figures must be a JSON object"))?;
        for (k, x) in obj {
            let want = match k.as_str() {
                "name" => "string",
                "write_cache" => "bool",
                "surfaces" | "zones" | "cache_kb" => "u32",
                _ => "number",
            };
            let ok = match want {
                "string" => x.is_string(),
                "bool" => x.is_boolean(),
                "u32" => x.as_u64().is_some_and(|n| n <= u32::MAX as u64),
                _ => x.is_number(),
            };
            if !ok {
                let shown = x.as_str().map_or_else(|| x.to_string(), str::to_string);
                let expected = match want {
                    "u32" => format!("a whole number in [0, {}]", u32::MAX),
                    "number" => "a finite number".to_string(),
                    w => format!("a {w}"),
                };
                return Err(config_err(format!("datasheet {k} (--{})", k.replace('_', "-")), format!("{shown}: expected {expected}")));
            }
        }
        serde_json::from_value(v).map_err(|e| config_err("datasheet", e.to_string()))
    }
}

/// Quote bare NaN / Infinity / -Infinity tokens (outside strings) so they
/// parse, and are then reported by name.
fn quote_nonfinite(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_str, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_str {
            in_str = !(c == '"' && !escaped);
            escaped = c == '\\' && !escaped;
        } else if c == '"' {
            in_str = true;
        } else if let Some(tok) = ["-Infinity", "Infinity", "NaN"].iter().find(|t| rest.starts_with(**t)) {
            out.push('"');
            out.push_str(tok);
            out.push('"');
            rest = &rest[tok.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}
