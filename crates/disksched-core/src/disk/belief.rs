//! A queue level's belief of the drive (`[host.belief]`,
//! `[controller.belief]`, `[freeblock.belief]`): what a scheduler outside
//! the firmware knows of the drive, configured rather than assumed.
//!
//! - absent, or every key at its default: the truth (exact; the run is
//!   unchanged, byte for byte);
//! - `model`: another disk spec (a built-in, a spec `.toml`, a DiskSim file,
//!   a datasheet disk written by `disks datasheet`);
//! - the truth (or `model`) with extraction error: per-zone skew error,
//!   seek-curve error, a wrong head-switch time;
//! - `geometry = "blind"`: LBN distance only (a host that knows nothing of
//!   cylinders or rotation: SPTF there is shortest LBN distance).
//!
//! The belief never reads the truth's layout: a level with its own belief
//! maps each request's LBN, and the LBN the heads last read, with its own
//! model (`Predictor::own_layout`).

use crate::disk::spec::{DiskSpec, SeekSpec};
use crate::disk::{builtin, DiskModel, Predictor};
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
            && self.seek_error_pct == 0.0 && self.head_switch_ms.is_none() {
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
