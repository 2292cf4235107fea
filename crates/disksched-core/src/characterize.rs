//! What `disksched characterize` reads off a disk model directly (the
//! request-size and seek-distance curves come from simulation runs driven
//! from Python): zones and their media rates, the seek curve at chosen
//! distances, and where each cylinder's LBNs are. DIXtrac extracts the same
//! figures from a real drive; here they come from the model itself, so a
//! user can check a spec (e.g. a datasheet disk) against what it should be.

use crate::disk::DiskModel;
use serde::Serialize;

/// A run of cylinders recorded alike: a spec zone, or, for a table-driven
/// layout, consecutive cylinders with the same mean sectors per track.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneRate {
    /// First cylinder of the run.
    pub first_cylinder: u32,
    /// Last cylinder of the run (inclusive).
    pub last_cylinder: u32,
    /// Mean over the zone's tracks that hold LBNs (one value on a zoned layout).
    pub sectors_per_track: f64,
    /// Lowest LBN in the zone and LBNs it holds (capped at the drive's capacity).
    pub first_lbn: u64,
    /// Number of LBNs in the zone.
    pub blocks: u64,
    /// Sequential media rate on one track, ignoring switches: sectors per track
    /// x sector bytes x revolutions per second, 10^6 bytes/s.
    pub media_rate_mb_s: f64,
}

/// The LBNs of each track of a cylinder, by head: (first, count), count 0
/// for a track holding none. A track's LBNs are consecutive; a cylinder's
/// need not be (a surface-major table layout).
pub fn cylinder_tracks(model: &DiskModel, cylinder: u32) -> Vec<(u64, u64)> {
    (0..model.layout.surfaces()).map(|head| model.layout.track_lbns(cylinder, head)).collect()
}

/// Zones in cylinder order, each with its media rate; cylinders holding no
/// LBN are left out.
pub fn zones(model: &DiskModel) -> Vec<ZoneRate> {
    let cylinders = model.layout.cylinders();
    let surfaces = model.layout.surfaces();
    let bounds: Vec<(u32, u32)> = if model.layout.is_table() {
        // Runs of cylinders recorded at the same density: the same largest
        // sectors per track (a track shortened by defects or slips does not
        // start a zone of its own).
        let max_spt = |c: u32| (0..surfaces).map(|h| model.layout.sectors_per_track(c, h)).max().unwrap_or(0);
        let mut b: Vec<(u32, u32)> = vec![];
        let mut prev = u32::MAX;
        for c in 0..cylinders {
            let spt = max_spt(c);
            match b.last_mut() {
                Some(last) if spt == prev => last.1 = c,
                _ => b.push((c, c)),
            }
            prev = spt;
        }
        b
    } else {
        model.spec.layout.zones.iter().map(|z| (z.first_cylinder, z.last_cylinder.min(cylinders.saturating_sub(1)))).collect()
    };
    bounds.into_iter().filter_map(|(lo, hi)| {
        let (mut first, mut blocks, mut tracks, mut sectors) = (u64::MAX, 0, 0u64, 0u64);
        for c in lo..=hi {
            for (h, (f, n)) in cylinder_tracks(model, c).into_iter().enumerate() {
                if n > 0 {
                    first = first.min(f);
                    blocks += n;
                    tracks += 1;
                    sectors += model.layout.sectors_per_track(c, h as u32) as u64;
                }
            }
        }
        // Mean sectors per track over the zone's tracks that hold LBNs.
        let spt = if tracks == 0 { 0.0 } else { sectors as f64 / tracks as f64 };
        (blocks > 0).then(|| ZoneRate {
            first_cylinder: lo,
            last_cylinder: hi,
            sectors_per_track: spt,
            first_lbn: first,
            blocks,
            media_rate_mb_s: spt * model.spec.sector_bytes as f64 * model.spec.rpm / 60.0 / 1e6,
        })
    }).collect()
}

/// Seek time of a read over `distance` cylinders, ms (distances past the
/// last cylinder are clamped to the full stroke).
pub fn seek_ms(model: &DiskModel, distance: u32) -> f64 {
    model.mech.seek_ns(distance.min(model.mech.max_seek_distance())) as f64 / 1e6
}

/// Mean seek time over uniformly random pairs of distinct cylinders, ms (the
/// datasheet "average seek": n - d of the pairs are d apart).
pub fn average_seek_ms(model: &DiskModel) -> f64 {
    let n = model.mech.max_seek_distance() as u64 + 1;
    let (mut weighted, mut pairs) = (0.0, 0.0);
    for d in 1..n {
        let w = (n - d) as f64;
        weighted += w * model.mech.seek_ns(d as u32) as f64;
        pairs += w;
    }
    if pairs == 0.0 { 0.0 } else { weighted / pairs / 1e6 }
}
