//! A queue level's belief of the drive (`[host.belief]`,
//! `[controller.belief]`, `[freeblock.belief]`): what a scheduler outside
//! the firmware knows of the drive, configured rather than assumed.
//!
//! - absent, or every key at its default: the truth (exact; the run is
//!   unchanged, byte for byte);
//! - `model`: another disk spec (a built-in, a spec `.toml`, a DiskSim file,
//!   a datasheet disk written by `disks datasheet`);
//! - the truth (or `model`) with extraction error: per-zone skew error,
//!   seek-curve error (a uniform scale, a per-distance shape, a curve
//!   measured at a few distances and interpolated), a wrong head-switch time;
//! - `geometry = "blind"`: LBN distance only (a host that knows nothing of
//!   cylinders or rotation: SPTF there is shortest LBN distance).
//!
//! The belief never reads the truth's layout: a level with its own belief
//! maps each request's LBN, and the LBN the heads last read, with its own
//! model (`Predictor::own_layout`).

use crate::disk::spec::{DiskSpec, SeekSpec};
use crate::disk::mechanics::{seek_curve_ms, table_curve_ms};
use crate::disk::{builtin, DiskModel, Mechanics, Predictor};
use crate::time::NS_PER_MS;
use crate::error::{config_err, Result};
use crate::schema::{Param, Ty};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// `skew_error_sectors`: added to every zone's track and cylinder skew.
pub const SKEW_ERROR_SECTORS: Param = Param::float("skew_error_sectors", "sectors", -1000.0, 0.0, 1000.0,
    "extraction error: added to each zone's track and cylinder skew (`zone_skew_error_sectors` sets it per zone)");
/// `seek_error_pct`: the believed seek curve is the true one scaled by 1 + pct/100.
pub const SEEK_ERROR_PCT: Param = Param::float("seek_error_pct", "%", -90.0, 0.0, 1000.0,
    "extraction error: every seek time of the curve scaled by 1 + pct/100");
/// `seek_error_points`: extraction error by seek distance, `[[distance_cylinders, pct], ...]`.
pub const SEEK_ERROR_POINTS: Param = Param::other("seek_error_points", Ty::List, "[]",
    "extraction error by distance: `[[distance_cylinders, pct], ...]`, distances increasing in [1, 1e9] cylinders, each pct in [-90, 1000] %; \
     the believed seek at distance d is scaled by 1 + e(d)/100, e piecewise linear between the points and constant beyond the ends");
/// `seek_sample_points`: the believed seek curve is the model's measured at this many distances.
pub const SEEK_SAMPLE_POINTS: Param = Param::int("seek_sample_points", "distances", 2.0, 0.0, 100_000.0,
    "extraction: the believed seek curve is the model's measured at N distances (1 cylinder, the full stroke, log-spaced between) \
     and linearly interpolated between them; 0 = the whole curve").or_zero();
/// Bounds of a `seek_error_points` distance, cylinders.
const POINT_DISTANCE_MIN: f64 = 1.0;
const POINT_DISTANCE_MAX: f64 = 1e9;
/// `head_switch_ms`: the believed head switch time.
pub const HEAD_SWITCH_MS: Param = Param::float("head_switch_ms", "ms", 0.0, f64::NAN, 100.0,
    "extraction error: the believed head-switch time").default_text("the model's");
/// `lbn_distance_ns_per_block`: a geometry-blind belief's cost of one block of LBN distance.
pub const BLIND_NS_PER_BLOCK: Param = Param::float("lbn_distance_ns_per_block", "ns", 0.0, 1.0, 1e9,
    "geometry-blind: predicted positioning per block of LBN distance (only the order matters to a scheduler)");

/// Declarations of a `belief` table's keys.
pub const BELIEF_PARAMS: &[Param] = &[
    Param::other("model", Ty::Str, "absent: the truth's spec",
        "another disk: built-in name, spec .toml, DiskSim .parv/.diskspecs/.model (with at least the truth's blocks)"),
    Param::other("geometry", Ty::Choice(&["known", "blind"]), "known", "`blind`: LBN distance only (no cylinders, no rotation)"),
    SKEW_ERROR_SECTORS,
    Param::other("zone_skew_error_sectors", Ty::List, "[]", "per-zone skew error, sectors (one per zone of the belief's model; overrides `skew_error_sectors`)"),
    SEEK_ERROR_PCT,
    SEEK_ERROR_POINTS,
    SEEK_SAMPLE_POINTS,
    HEAD_SWITCH_MS,
    BLIND_NS_PER_BLOCK,
];

/// A level's belief of the drive (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeliefConfig {
    /// Another disk spec; absent: the truth's.
    #[serde(default)]
    pub model: Option<String>,
    /// `known` (default) or `blind` (LBN distance only).
    #[serde(default)]
    pub geometry: Option<String>,
    /// Added to every zone's track and cylinder skew, sectors.
    #[serde(default)]
    pub skew_error_sectors: f64,
    /// Per-zone skew error, sectors (overrides `skew_error_sectors`).
    #[serde(default)]
    pub zone_skew_error_sectors: Vec<f64>,
    /// Seek curve scaled by 1 + pct/100.
    #[serde(default)]
    pub seek_error_pct: f64,
    /// Per-distance seek error: (distance, cylinders; pct), piecewise linear in distance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seek_error_points: Vec<(f64, f64)>,
    /// The believed seek curve is the model's sampled at this many distances (0: not sampled).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seek_sample_points: u32,
    /// The believed head switch, ms (absent: the model's).
    #[serde(default)]
    pub head_switch_ms: Option<f64>,
    /// Geometry-blind: predicted positioning per block of LBN distance, ns.
    #[serde(default)]
    pub lbn_distance_ns_per_block: Option<f64>,
}

impl BeliefConfig {
    /// `geometry = "blind"`.
    pub fn blind(&self) -> bool {
        self.geometry.as_deref() == Some("blind")
    }

    /// Whether it is exactly the truth (no model, no error, not blind).
    pub fn is_exact(&self) -> bool {
        *self == BeliefConfig::default() || (self.geometry.as_deref() == Some("known") && BeliefConfig { geometry: None, ..self.clone() } == BeliefConfig::default())
    }

    /// Check every key against its declared bounds; `at` names the table (e.g. `host.belief`).
    pub fn validate(&self, at: &str) -> Result<()> {
        if let Some(g) = &self.geometry {
            if g != "known" && g != "blind" {
                return Err(config_err(format!("{at}.geometry"), format!("'{g}' (expected known or blind)")));
            }
        }
        SKEW_ERROR_SECTORS.check(at, self.skew_error_sectors)?;
        for &e in &self.zone_skew_error_sectors {
            SKEW_ERROR_SECTORS.check(at, e).map_err(|_| config_err(format!("{at}.zone_skew_error_sectors"), format!(
                "{e} (expected each within [-1000, 1000] sectors)")))?;
        }
        SEEK_ERROR_PCT.check(at, self.seek_error_pct)?;
        let key = SEEK_ERROR_POINTS.key(at);
        let mut last = f64::NEG_INFINITY;
        for (i, &(d, pct)) in self.seek_error_points.iter().enumerate() {
            if !(POINT_DISTANCE_MIN..=POINT_DISTANCE_MAX).contains(&d) {
                return Err(config_err(format!("{key}[{i}]"), format!("distance {d} is out of range [1, 1e9] cylinders")));
            }
            if d <= last {
                return Err(config_err(format!("{key}[{i}]"), format!("distance {d} after {last} (expected distances in increasing order)")));
            }
            if !SEEK_ERROR_PCT.allows(pct) {
                return Err(config_err(format!("{key}[{i}]"), format!("{pct} % is out of range {}", SEEK_ERROR_PCT.bounds_text())));
            }
            last = d;
        }
        SEEK_SAMPLE_POINTS.check_count(at, self.seek_sample_points as u64)?;
        if let Some(h) = self.head_switch_ms {
            HEAD_SWITCH_MS.check(at, h)?;
        }
        if let Some(n) = self.lbn_distance_ns_per_block {
            BLIND_NS_PER_BLOCK.check(at, n)?;
        }
        Ok(())
    }

    /// The believed model: `truth` itself when exact, else the spec with its errors applied.
    pub fn model(&self, at: &str, truth: &Arc<DiskModel>, base_dir: Option<&Path>) -> Result<Arc<DiskModel>> {
        if self.model.is_none() && self.skew_error_sectors == 0.0 && self.zone_skew_error_sectors.is_empty()
            && self.seek_error_pct == 0.0 && self.seek_error_points.is_empty() && self.seek_sample_points == 0 && self.head_switch_ms.is_none() {
            return Ok(truth.clone());
        }
        let mut spec = match &self.model {
            Some(m) => builtin::resolve(m, base_dir).map_err(|e| config_err(format!("{at}.model"), e.to_string()))?,
            None => truth.spec.clone(),
        };
        self.apply_errors(at, &mut spec)?;
        let model = DiskModel::new(spec).map_err(|e| config_err(at, e.to_string()))?;
        if model.layout.capacity() < truth.layout.capacity() {
            return Err(config_err(format!("{at}.model"), format!("'{}' holds {} blocks, fewer than the drive's {} (expected at least as many)",
                self.model.as_deref().unwrap_or(""), model.layout.capacity(), truth.layout.capacity())));
        }
        Ok(Arc::new(model))
    }

    fn apply_errors(&self, at: &str, spec: &mut DiskSpec) -> Result<()> {
        let zones = &mut spec.layout.zones;
        if !self.zone_skew_error_sectors.is_empty() && self.zone_skew_error_sectors.len() != zones.len() {
            return Err(config_err(format!("{at}.zone_skew_error_sectors"), format!(
                "{} values (expected one per zone of the belief's model: {})", self.zone_skew_error_sectors.len(), zones.len())));
        }
        if (self.skew_error_sectors != 0.0 || !self.zone_skew_error_sectors.is_empty()) && zones.is_empty() {
            return Err(config_err(format!("{at}.skew_error_sectors"), "the model has a table-driven (g4) layout, no zone skews (expected a zoned model)"));
        }
        for (i, z) in zones.iter_mut().enumerate() {
            let e = self.zone_skew_error_sectors.get(i).copied().unwrap_or(self.skew_error_sectors);
            z.track_skew_sectors += e;
            z.cylinder_skew_sectors += e;
        }
        if !self.seek_error_points.is_empty() || self.seek_sample_points > 0 {
            extract_seek(at, spec, &self.seek_error_points, self.seek_sample_points)?;
        }
        if self.seek_error_pct != 0.0 {
            scale_seek(&mut spec.seek, 1.0 + self.seek_error_pct / 100.0);
        }
        if let Some(h) = self.head_switch_ms {
            spec.seek.head_switch_ms = h;
        }
        Ok(())
    }

    /// The predictor of this belief: exact on `truth` when the belief is the truth.
    pub fn predictor(&self, at: &str, truth: &Arc<DiskModel>, base_dir: Option<&Path>) -> Result<Predictor> {
        let model = self.model(at, truth, base_dir)?;
        let own_layout = !Arc::ptr_eq(&model, truth);
        let blind_ns_per_block = if self.blind() { Some(self.lbn_distance_ns_per_block.unwrap_or(1.0)) } else { None };
        let no_floor = self.model.is_some() || blind_ns_per_block.is_some();
        Ok(Predictor { own_layout, blind_ns_per_block, no_floor, ..Predictor::exact(model) })
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The seek curve as an extraction tool (DIXtrac) leaves it: the model's
/// curve (any form: table, three-point, HPL) evaluated at every distance,
/// sampled at `samples` distances and interpolated between them (0: not
/// sampled), each distance's time scaled by 1 + e(d)/100 with e the
/// piecewise-linear `points`; written back as a table with a point at every
/// distance (the write curve, if any, the same way). The same-track read
/// cost, a figure of its own, stays the model's (it would otherwise be
/// re-derived from the reshaped curve's first two distances).
fn extract_seek(at: &str, spec: &mut DiskSpec, points: &[(f64, f64)], samples: u32) -> Result<()> {
    let cylinders = spec.cylinders as usize;
    if cylinders < 2 {
        return Ok(()); // one cylinder: no seek to believe wrongly
    }
    let err = |e: crate::error::Error| config_err(at, e.to_string());
    if spec.seek.same_track_read_ms.is_none() {
        let ns = Mechanics::new(spec).map_err(err)?.same_track_read_ns;
        spec.seek.same_track_read_ms = Some(ns as f64 / NS_PER_MS as f64);
    }
    let distances = sample_distances(samples, cylinders - 1);
    let reshape = |curve: Vec<f64>| -> Vec<(f64, f64)> {
        let measured: Vec<(f64, f64)> = distances.iter().map(|&s| (s as f64, curve[s])).collect();
        (1..cylinders).map(|d| {
            let t = if measured.is_empty() { curve[d] } else { interpolate(&measured, d as f64) };
            let e = if points.is_empty() { 0.0 } else { interpolate(points, d as f64) };
            (d as f64, t * (1.0 + e / 100.0))
        }).collect()
    };
    let read = reshape(seek_curve_ms(&spec.seek, cylinders).map_err(err)?);
    let write = match &spec.seek.write_table {
        Some(t) => Some(reshape(table_curve_ms(t, cylinders, "seek.write_table").map_err(err)?)),
        None => None,
    };
    let s = &mut spec.seek;
    (s.table, s.write_table) = (Some(read), write);
    (s.single_cylinder_ms, s.average_ms, s.full_stroke_ms, s.hpl) = (None, None, None, None);
    Ok(())
}

/// The distances an extraction with `n` samples measures on a disk whose
/// longest seek is `max` cylinders: 1, `max`, and log-spaced between
/// (rounded; repeats dropped, so short strokes may give fewer). Empty for `n` = 0.
pub fn sample_distances(n: u32, max: usize) -> Vec<usize> {
    if n == 0 || max == 0 {
        return Vec::new();
    }
    let mut out: Vec<usize> = (0..n).map(|i| {
        if n == 1 { 1 } else { ((max as f64).powf(i as f64 / (n - 1) as f64).round() as usize).clamp(1, max) }
    }).collect();
    out.push(max);
    out.sort_unstable();
    out.dedup();
    out
}

/// `pts` (x increasing) linearly interpolated at `x`, constant beyond the ends.
fn interpolate(pts: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (pts[0], pts[pts.len() - 1]);
    if x <= first.0 {
        return first.1;
    }
    if x >= last.0 {
        return last.1;
    }
    let k = pts.partition_point(|p| p.0 <= x); // pts[k-1].0 <= x < pts[k].0
    let ((x0, y0), (x1, y1)) = (pts[k - 1], pts[k]);
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

/// Every seek time of `seek` scaled by `k` (table, write table, three-point
/// curve, HPL formula); the head switch is its own key.
fn scale_seek(seek: &mut SeekSpec, k: f64) {
    for t in [&mut seek.table, &mut seek.write_table].into_iter().flatten() {
        for p in t.iter_mut() {
            p.1 *= k;
        }
    }
    for v in [&mut seek.single_cylinder_ms, &mut seek.average_ms, &mut seek.full_stroke_ms].into_iter().flatten() {
        *v *= k;
    }
    if let Some(h) = &mut seek.hpl {
        h.short_const_ms *= k;
        h.short_sqrt_ms *= k;
        h.long_const_ms *= k;
        h.long_linear_ms *= k;
        if let Some(s) = &mut h.single_cylinder_ms {
            *s *= k;
        }
        for v in &mut h.first_ten_ms {
            *v *= k;
        }
    }
}
