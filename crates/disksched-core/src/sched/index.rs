//! The indexes schedulers keep their requests in: positional (by disk,
//! cylinder and arrival) and by LBN, with the walks over them that the
//! algorithms share.

use super::sorted_index;
use super::SchedCtx;
use crate::host::{ReqId, Request};

/// A positional index: requests by (disk, cylinder, seq). One disk's
/// requests are a contiguous range, walked outward from that disk's heads.
pub(crate) type CylKey = (u32, u32, u64);

/// Requests by `CylKey`: the index of SSTF, V(R) and the SPTF family.
pub(crate) type ByCylinder = sorted_index::SortedIndex<CylKey>;

/// A request's key in a positional index: its disk, its first block's cylinder, its arrival order.
#[inline]
pub(crate) fn cyl_key(r: &Request) -> CylKey {
    (r.disk, r.target.cylinder, r.seq)
}

/// The disks with requests in a positional index, in order.
#[inline]
pub(crate) fn disks_of(map: &ByCylinder) -> impl Iterator<Item = u32> + '_ {
    // (The last key's disk ends the walk without a search: one disk's index, the usual case, needs none.)
    let last = map.last_key_value().map(|(k, _)| k.0);
    std::iter::successors(map.first_key_value().map(|(k, _)| k.0), move |&d| {
        (Some(d) != last).then(|| map.range((d + 1, 0, 0)..).next().map(|k| k.0 .0)).flatten()
    })
}

/// An LBN index over the disks (`ByLbn`): requests by (disk and first block, seq).
/// Over an array a request's `lbn` is a block of its own disk, so each
/// disk's requests are one ordered run, swept on its own. The disk sits in
/// the bits above the largest LBN, keeping the key two words, as cheap to
/// compare as one disk's (LBN, seq).
pub(crate) type LbnKey = (u64, u64);

/// Requests by `LbnKey`: the index every LBN-ordered scheduler keeps.
pub(crate) type ByLbn = sorted_index::SortedIndex<LbnKey>;

const DISK_SHIFT: u32 = 40;
const _: () = assert!(crate::disk::spec::limits::MAX_BLOCKS <= 1 << DISK_SHIFT && crate::host::array::DISK_COUNT.max < (1u64 << (64 - DISK_SHIFT)) as f64);

/// Where block `lbn` of disk `disk` sorts in an LBN index.
#[inline]
pub(crate) fn lbn_at(disk: u32, lbn: u64) -> u64 {
    (disk as u64) << DISK_SHIFT | lbn
}

/// A request's key in an LBN index.
#[inline]
pub(crate) fn lbn_key(r: &Request) -> LbnKey {
    (lbn_at(r.disk, r.lbn), r.seq)
}

/// The disk and the LBN of a key of an LBN index.
#[inline]
pub(crate) fn lbn_of(k: LbnKey) -> (u32, u64) {
    ((k.0 >> DISK_SHIFT) as u32, k.0 & ((1 << DISK_SHIFT) - 1))
}

/// The disk an LBN-ordered scheduler serves next: of the disks with
/// requests, the one whose heads are believed free first (the lowest
/// number on a tie). Without per-disk heads there is one disk
/// (`SchedCtx::heads`), found without the walk.
pub(crate) fn next_disk(map: &ByLbn, ctx: &SchedCtx) -> Option<u32> {
    if ctx.heads.is_empty() {
        return map.first_key_value().map(|(&k, _)| lbn_of(k).0);
    }
    lbn_disks(map, ctx).min_by_key(|&d| (ctx.head_of(d).time, d))
}

/// The disks with requests in an LBN index, in order (the first alone
/// without per-disk heads: there is one).
pub(crate) fn lbn_disks<'a>(map: &'a ByLbn, ctx: &SchedCtx) -> impl Iterator<Item = u32> + 'a {
    let one = ctx.heads.is_empty();
    std::iter::successors(map.first_key_value().map(|(&k, _)| lbn_of(k).0), move |&d| {
        (!one).then(|| map.range((lbn_at(d + 1, 0), 0)..).next().map(|(&k, _)| lbn_of(k).0)).flatten()
    })
}

/// Disk `disk`'s next request in an LBN index from `lbn` up (`up`), or
/// below it (`!up`, nearest first): the next one in that direction of a sweep.
#[inline]
pub(crate) fn next_on_disk(map: &ByLbn, disk: u32, lbn: u64, up: bool) -> Option<LbnKey> {
    let at = (lbn_at(disk, lbn), 0);
    if up { map.range(at..).next() } else { map.range(..at).next_back() }
        .map(|(k, _)| *k)
        .filter(|&k| lbn_of(k).0 == disk)
}

/// Disk `disk`'s requests in a positional index at cylinder `cylinder` or
/// above (nearest first), and below it (nearest first).
#[inline]
pub(crate) fn outward(map: &ByCylinder, disk: u32, cylinder: u32)
    -> (impl Iterator<Item = (&CylKey, &ReqId)>, impl Iterator<Item = (&CylKey, &ReqId)>) {
    // Both sides from one search; the disk's own keys end each walk.
    let (up, down) = map.split_at(&(disk, cylinder, 0));
    (up.take_while(move |(k, _)| k.0 == disk), down.take_while(move |(k, _)| k.0 == disk))
}

/// Disk `disk`'s nearest requests at or above and below `cylinder` in a
/// positional index: the oldest at the nearest cylinder on each side.
pub(crate) fn nearest_on_disk(map: &ByCylinder, disk: u32, cylinder: u32) -> [Option<CylKey>; 2] {
    let (mut up, mut down) = outward(map, disk, cylinder);
    let up = up.next().map(|(k, _)| *k);
    // The nearest below is the newest at its cylinder; the oldest is the next
    // one down unless that one is at the cylinder too (then searched for: a
    // walk down a long run would cost as the run).
    let down = down.next().map(|(k, _)| *k).and_then(|newest| match down.next() {
        Some((k, _)) if k.1 == newest.1 => map.range((disk, newest.1, 0)..).next().map(|(k, _)| *k),
        _ => Some(newest),
    });
    [up, down]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::SimRng;
    use rand::{Rng, SeedableRng};

    /// `nearest_on_disk` against a scan of every key: on each side the
    /// nearest cylinder's oldest request, through runs of several requests at
    /// one cylinder, several disks, and both of the index's forms.
    #[test]
    fn nearest_on_disk_is_each_sides_oldest_at_the_nearest_cylinder() {
        let mut rng = SimRng::seed_from_u64(3);
        for len in [5usize, 40, 1500] {
            let mut map = ByCylinder::new();
            for seq in 0..len as u64 {
                // Few cylinders: runs at one cylinder are common.
                map.insert((rng.gen_range(0..2), rng.gen_range(0..(len as u32 / 3).max(4)), seq), ReqId(seq as u32));
            }
            let keys: Vec<CylKey> = map.iter().map(|(k, _)| *k).collect();
            for _ in 0..300 {
                let (disk, c) = (rng.gen_range(0..2), rng.gen_range(0..(len as u32 / 3).max(4) + 2));
                let on = |up: bool| {
                    let side = keys.iter().filter(|k| k.0 == disk && if up { k.1 >= c } else { k.1 < c });
                    let nearest = side.clone().map(|k| k.1.abs_diff(c)).min()?;
                    side.filter(|k| k.1.abs_diff(c) == nearest).min_by_key(|k| k.2).copied()
                };
                assert_eq!(nearest_on_disk(&map, disk, c), [on(true), on(false)], "{len} keys, disk {disk}, cylinder {c}");
            }
        }
    }
}
