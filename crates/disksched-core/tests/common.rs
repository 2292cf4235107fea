//! Helpers shared by the integration tests. Expected values come from the
//! DiskSim files themselves (read here independently), never from the code
//! under test.
#![allow(dead_code)]

use disksched_core::disk::{builtin, DiskModel};
use std::path::PathBuf;
use std::sync::Arc;

pub fn atlas() -> Arc<DiskModel> {
    Arc::new(DiskModel::new(builtin::resolve("atlas10k", None).unwrap()).unwrap())
}

pub fn shared(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/disksim").join(file)
}

/// DiskSim's measured seek curve, parsed from the .seek file: (distance, ms).
pub fn seek_points(file: &str) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(shared(file)).expect("shared DiskSim data beside the project");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split(',').map(|x| x.trim().parse::<f64>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect()
}

/// Linear interpolation of a seek curve, from (0, 0); past the last point,
/// the line through the last two points (DiskSim's extrapolation).
pub fn interp(points: &[(f64, f64)], d: f64) -> f64 {
    if d == 0.0 {
        return 0.0;
    }
    let mut prev = (0.0, 0.0);
    for &(x, y) in points {
        if d <= x {
            return prev.1 + (y - prev.1) * (d - prev.0) / (x - prev.0);
        }
        prev = (x, y);
    }
    let n = points.len();
    let (x0, y0) = if n >= 2 { points[n - 2] } else { (0.0, 0.0) };
    let (x1, y1) = points[n - 1];
    y1 + (y1 - y0) * (d - x1) / (x1 - x0)
}

pub fn config(toml: &str) -> disksched_core::SimConfig {
    disksched_core::SimConfig::from_toml(toml, "test.toml").unwrap()
}

/// The count a .seek file's `Seek distances measured: N` header states.
pub fn seek_points_stated(file: &str) -> f64 {
    let text = std::fs::read_to_string(shared(file)).unwrap();
    text.lines().next().unwrap().rsplit(':').next().unwrap().trim().parse().unwrap()
}
