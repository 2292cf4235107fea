//! Mechanics: seek curve, head switch, write settle and rotation.
//!
//! Rotation is exact integer arithmetic. The platter's angle is measured in
//! *phase units*: one revolution is [`REV`] units, and the angle at time `t`
//! is `t_ns * rpm_milli mod REV` (with `rpm_milli` = RPM x 1000), so a full
//! revolution is exactly `60e9 / rpm` ns and no rounding error accumulates.

use crate::disk::spec::{SeekSpec, DiskSpec};
use crate::error::{config_err, Result};
use crate::time::{SimDuration, SimTime, NS_PER_MS};

/// Phase units per revolution (= ns per minute x 1000).
pub const REV: u64 = 60_000_000_000_000;

#[derive(Clone, Debug)]
/// Rotation, seek and head switch timing derived from a `DiskSpec`.
pub struct Mechanics {
    /// Spindle speed in thousandths of an RPM (RPM x 1000).
    pub rpm_milli: u64,
    /// The platter's phase repeats every `phase_period_ns` ns (REV / gcd(REV,
    /// rpm_milli)): `phase_at` reduces by it first and stays in 64 bits
    /// (None: the product could overflow; 128-bit arithmetic then).
    phase_period_ns: Option<u64>,
    /// Seek time in ns for every cylinder distance 0..cylinders (index = distance).
    seek_ns: Vec<u32>,
    /// Write seek times, when the spec has a separate write curve.
    write_seek_ns: Option<Vec<u32>>,
    /// `seek_floor_ns[d]` = min over distances >= d of `seek_ns`: a monotone lower
    /// bound used to prune SPTF searches.
    seek_floor_ns: Vec<u32>,
    /// Head switch time, ns.
    pub head_switch_ns: u64,
    /// Signed: DiskSim files may shorten write seeks; the sum is floored at 0.
    pub write_settle_ns: i64,
    /// A read access that starts on the track the heads are on pays this
    /// before its rotational wait (`seek.same_track_read_ms`).
    pub same_track_read_ns: u64,
}

impl Mechanics {
    /// Validate the spec's mechanical figures and precompute the seek table.
    pub fn new(spec: &DiskSpec) -> Result<Mechanics> {
        if !(spec.rpm > 0.0 && spec.rpm < 100_000.0) {
            return Err(config_err("rpm", format!("{} is out of range (0, 100000)", spec.rpm)));
        }
        let cyls = spec.cylinders as usize;
        let seek_ms = seek_curve_ms(&spec.seek, cyls)?;
        let to_ns = |v: Vec<f64>| -> Vec<u32> { v.iter().map(|ms| (ms * NS_PER_MS as f64).round() as u32).collect() };
        let seek_ns = to_ns(seek_ms);
        let write_seek_ns = match &spec.seek.write_table {
            Some(t) => Some(to_ns(table_curve_ms(t, cyls, "seek.write_table")?)),
            None => None,
        };
        // The floor must bound writes too (a write curve or a negative settle can be faster).
        let settle_ns = (spec.seek.write_settle_ms * NS_PER_MS as f64).round() as i64;
        let mut seek_floor_ns: Vec<u32> = (0..seek_ns.len()).map(|d| {
            let w = write_seek_ns.as_ref().map_or(seek_ns[d], |w| w[d]) as u64;
            let w = if d == 0 { 0 } else { w.saturating_add_signed(settle_ns) };
            seek_ns[d].min(w.min(u32::MAX as u64) as u32)
        }).collect();
        for d in (0..cyls.saturating_sub(1)).rev() {
            seek_floor_ns[d] = seek_floor_ns[d].min(seek_floor_ns[d + 1]);
        }
        let same_track_read_ns = match spec.seek.same_track_read_ms {
            Some(v) if !(0.0..=100.0).contains(&v) => {
                return Err(config_err("seek.same_track_read_ms", format!("{v} is out of range [0, 100]")));
            }
            Some(v) => SimDuration::from_ms(v).ns(),
            None => derived_same_track_ns(&seek_ns, SimDuration::from_ms(spec.seek.head_switch_ms).ns()),
        };
        let rpm_milli = (spec.rpm * 1000.0).round() as u64;
        Ok(Mechanics {
            rpm_milli,
            phase_period_ns: phase_period_ns(rpm_milli),
            seek_ns,
            write_seek_ns,
            seek_floor_ns,
            head_switch_ns: SimDuration::from_ms(spec.seek.head_switch_ms).ns(),
            write_settle_ns: settle_ns,
            same_track_read_ns,
        })
    }

    /// Time for one revolution, ns (rounded up).
    pub fn revolution_ns(&self) -> u64 {
        REV.div_ceil(self.rpm_milli)
    }

    /// Seek time for a cylinder distance (0 = no seek).
    #[inline]
    pub fn seek_ns(&self, distance: u32) -> u64 {
        self.seek_ns[distance as usize] as u64
    }

    /// Seek time of a write (the write curve if there is one).
    #[inline]
    pub fn write_seek_ns(&self, distance: u32) -> u64 {
        match &self.write_seek_ns {
            Some(w) => w[distance as usize] as u64,
            None => self.seek_ns(distance),
        }
    }

    /// Lower bound on the seek time of any distance >= `distance`.
    #[inline]
    pub fn seek_floor_ns(&self, distance: u32) -> u64 {
        self.seek_floor_ns[(distance as usize).min(self.seek_floor_ns.len() - 1)] as u64
    }

    /// Time to move the heads from (c0, h0) to (c1, h1): a seek if the cylinder
    /// changes, else a head switch if the surface changes; plus the write
    /// settle delay for writes whenever the heads moved.
    #[inline]
    pub fn reposition_ns(&self, c0: u32, h0: u32, c1: u32, h1: u32, is_write: bool) -> u64 {
        let t = if c0 != c1 {
            if is_write { self.write_seek_ns(c0.abs_diff(c1)) } else { self.seek_ns(c0.abs_diff(c1)) }
        } else if h0 != h1 {
            self.head_switch_ns
        } else {
            return 0;
        };
        if is_write { t.saturating_add_signed(self.write_settle_ns) } else { t }
    }

    /// Angle of the platter at time `t`, in phase units [0, REV).
    #[inline]
    pub fn phase_at(&self, t: SimTime) -> u64 {
        match self.phase_period_ns {
            // t * rpm_milli = (t mod period) * rpm_milli + a multiple of REV.
            Some(period) => (t.0 % period) * self.rpm_milli % REV,
            None => ((t.0 as u128 * self.rpm_milli as u128) % REV as u128) as u64,
        }
    }

    /// Phase reached `dt_ns` after a known phase (cheaper than `phase_at`).
    #[inline]
    pub fn phase_after(&self, phase: u64, dt_ns: u64) -> u64 {
        match dt_ns.checked_mul(self.rpm_milli).and_then(|x| x.checked_add(phase)) {
            Some(x) => x % REV,
            None => ((phase as u128 + dt_ns as u128 * self.rpm_milli as u128) % REV as u128) as u64,
        }
    }

    /// Time to rotate forward from phase `from` to phase `to` (0 if equal), ns, rounded up.
    /// Transfer times are rounded up to whole ns, so a head that arrives at
    /// most 2 ns after `to` has not missed it (else every back-to-back
    /// transfer on a track would lose a revolution).
    #[inline]
    pub fn rotate_ns(&self, from: u64, to: u64) -> u64 {
        let delta = if to >= from { to - from } else { REV - from + to };
        if REV - delta <= 2 * self.rpm_milli {
            return 0;
        }
        delta.div_ceil(self.rpm_milli)
    }

    /// When phase `to` first passes under the head at or after `t`: the first
    /// whole ns at or after the exact instant. A `t` up to 2 ns past `to` (a
    /// transfer time rounded up) counts as on time and is moved back to that
    /// ns, so times chained sector to sector never drift from the platter
    /// (`t + rotate_ns` would keep the drift and, a few ns later, lose a revolution).
    #[inline]
    pub fn arrive_ns(&self, t: u64, to: u64) -> u64 {
        let from = self.phase_at(SimTime(t));
        let late = if from >= to { from - to } else { REV - to + from };
        if late <= 2 * self.rpm_milli {
            return t - late / self.rpm_milli;
        }
        t + (REV - late).div_ceil(self.rpm_milli)
    }

    /// `sectors_ns(1, spt)` in 64-bit arithmetic (hot in write predictions).
    #[inline]
    pub fn sector_ns(&self, spt: u32) -> u64 {
        REV.div_ceil(spt as u64 * self.rpm_milli)
    }

    /// Time for `sectors` sector-widths of rotation on a track of `spt` sectors, ns.
    #[inline]
    pub fn sectors_ns(&self, sectors: u64, spt: u32) -> u64 {
        // (The same quotient in 64 bits while the product fits: any real track.)
        match sectors.checked_mul(REV).zip((spt as u64).checked_mul(self.rpm_milli)) {
            Some((n, d)) => n.div_ceil(d),
            None => (sectors as u128 * REV as u128).div_ceil(spt as u128 * self.rpm_milli as u128) as u64,
        }
    }

    /// Whole sector-widths of rotation in `dt_ns` on a track of `spt`
    /// sectors (rounded down): the inverse of `sectors_ns`.
    #[inline]
    pub fn sectors_in(&self, dt_ns: u64, spt: u32) -> u64 {
        // (The same quotient in 64 bits while the product fits: any time under a few revolutions.)
        match dt_ns.checked_mul(spt as u64).and_then(|x| x.checked_mul(self.rpm_milli)) {
            Some(n) => n / REV,
            None => (dt_ns as u128 * spt as u128 * self.rpm_milli as u128 / REV as u128) as u64,
        }
    }

    /// Longest seek distance in the table, cylinders.
    pub fn max_seek_distance(&self) -> u32 {
        (self.seek_ns.len() - 1) as u32
    }
}

/// The fixed part of a short seek: the seek curve extrapolated to distance 0
/// from distances 1 and 2, no more than the head switch (a settle on
/// another surface) or the single-cylinder seek.
pub fn derived_same_track_ns(seek_ns: &[u32], head_switch_ns: u64) -> u64 {
    let t = |d: usize| seek_ns.get(d).copied().unwrap_or(0) as u64;
    (2 * t(1)).saturating_sub(t(2)).min(head_switch_ns).min(t(1))
}

/// The period of the platter phase in ns, if every product `t * rpm_milli`
/// with `t` below it fits 64 bits.
fn phase_period_ns(rpm_milli: u64) -> Option<u64> {
    let (mut a, mut b) = (REV, rpm_milli);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let period = REV / a.max(1);
    (rpm_milli > 0 && (period - 1).checked_mul(rpm_milli).is_some()).then_some(period)
}

/// Phase of the start of physical sector `sector` on a track of `spt` sectors.
#[inline]
pub fn sector_phase(sector: u32, spt: u32) -> u64 {
    sector as u64 * REV / spt as u64
}

/// Seek time in ms for every distance 0..cylinders (a belief's extraction
/// error reshapes this curve: `disk::belief`).
pub(crate) fn seek_curve_ms(seek: &SeekSpec, cylinders: usize) -> Result<Vec<f64>> {
    if let Some(table) = &seek.table {
        return table_curve_ms(table, cylinders, "seek.table");
    }
    let mut out = vec![0.0; cylinders.max(1)];
    if let Some(h) = &seek.hpl {
        // DiskSim's HPL seek (Ruemmler & Wilkes' two-piece curve), ms.
        if !(h.boundary_cylinders >= 1.0) || h.first_ten_ms.len() > 10 {
            return Err(config_err("seek.hpl", "boundary_cylinders must be >= 1 and first_ten_ms hold at most 10 values"));
        }
        for (d, slot) in out.iter_mut().enumerate().skip(1) {
            let x = d as f64;
            let mut t = if x < h.boundary_cylinders { h.short_const_ms + h.short_sqrt_ms * x.sqrt() } else { h.long_const_ms + h.long_linear_ms * x };
            if d == 1 {
                if let Some(s) = h.single_cylinder_ms {
                    t = s;
                }
            }
            if let Some(&f) = h.first_ten_ms.get(d - 1) {
                t = f;
            }
            *slot = t.max(0.0);
        }
        return Ok(out);
    }
    // Three-point curve: t(d) = a*sqrt(d-1) + b*(d-1) + c for d >= 1 (Lee &
    // Katz / Ruemmler & Wilkes), with c = single-cylinder time, t(max) =
    // full-stroke time and the mean over uniformly random cylinder pairs = average.
    let (Some(c), Some(avg), Some(full)) = (seek.single_cylinder_ms, seek.average_ms, seek.full_stroke_ms) else {
        return Err(config_err("seek", "needs either `table` or all of single_cylinder_ms, average_ms, full_stroke_ms"));
    };
    if !(c > 0.0 && c <= avg && avg <= full) {
        return Err(config_err("seek", format!("need 0 < single_cylinder_ms ({c}) <= average_ms ({avg}) <= full_stroke_ms ({full})")));
    }
    let n = cylinders as f64;
    let (mut w, mut s1, mut s2) = (0.0, 0.0, 0.0);
    for d in 1..cylinders {
        let p = n - d as f64; // number of ordered pairs at distance d, halved
        w += p;
        s1 += p * ((d - 1) as f64).sqrt();
        s2 += p * (d - 1) as f64;
    }
    let (e1, e2) = (s1 / w, s2 / w);
    let m = (cylinders - 1) as f64;
    let (f1, f2) = ((m - 1.0).sqrt(), m - 1.0);
    // Solve a*e1 + b*e2 = avg - c ; a*f1 + b*f2 = full - c.
    let det = e1 * f2 - e2 * f1;
    let a = ((avg - c) * f2 - e2 * (full - c)) / det;
    let b = (e1 * (full - c) - (avg - c) * f1) / det;
    for (d, slot) in out.iter_mut().enumerate().skip(1) {
        *slot = (a * ((d - 1) as f64).sqrt() + b * (d - 1) as f64 + c).max(0.0);
    }
    Ok(out)
}

/// A measured (distance, ms) curve, linearly interpolated from (0, 0); past
/// its last point extended along the line through its last two points
/// (DiskSim's `extracted` seek: atlas10k's curve stops 20 cylinders short of
/// the full stroke, barracuda's 185).
pub(crate) fn table_curve_ms(table: &[(f64, f64)], cylinders: usize, what: &str) -> Result<Vec<f64>> {
    let mut out = vec![0.0; cylinders.max(1)];
    if table.is_empty() {
        return Err(config_err(what, "a seek table needs at least one (distance, ms) point"));
    }
    let mut pts: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    for (i, &(d, ms)) in table.iter().enumerate() {
        if !(ms >= 0.0) || d < 1.0 || d <= pts.last().unwrap().0 {
            return Err(config_err(
                format!("{what}[{i}]"),
                format!("({d}, {ms}): distances must increase from 1 and times be >= 0"),
            ));
        }
        pts.push((d, ms));
    }
    let mut j = 0;
    for (d, slot) in out.iter_mut().enumerate().skip(1) {
        let d = d as f64;
        while j + 1 < pts.len() && pts[j + 1].0 < d {
            j += 1;
        }
        // Past the end, j + 1 == len: use the last two points (with (0, 0) for a one-point curve).
        let k = j.min(pts.len() - 2);
        let (d0, t0) = pts[k];
        let (d1, t1) = pts[k + 1];
        *slot = (t0 + (t1 - t0) * (d - d0) / (d1 - d0)).max(0.0);
    }
    Ok(out)
}
