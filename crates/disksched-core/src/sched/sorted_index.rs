//! `SortedIndex`: pending requests by a key, in key order: the positional
//! index (disk, cylinder, seq) of SSTF, V(R) and the SPTF family, and the
//! LBN index (disk and LBN, seq) of C-LOOK, LOOK and SSTF by LBN. A sorted
//! vector while the queue is short, the usual case: a binary search and a
//! short move, and no node allocated and freed as a queue empties and fills
//! again, as a B-tree's root is. A B-tree once it is long: a vector's insert
//! moves every entry after it, a cost that grows with the queue (tens of
//! thousands deep in an overloaded open run). The order, and so every
//! answer, is the same in both.

use crate::host::ReqId;
use either::Either;
use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};

/// Longer than this, the vector becomes a tree.
const TREE_ABOVE: usize = 1024;
/// Shorter than this, the tree becomes a vector again (a gap between the
/// two, so a queue that stays near one length does not convert every request).
const SORTED_BELOW: usize = 256;

#[derive(Clone, Debug)]
enum Entries<K> {
    Sorted(Vec<(K, ReqId)>),
    Tree(BTreeMap<K, ReqId>),
}

/// Requests by key, in key order (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct SortedIndex<K>(Entries<K>);

impl<K> Default for SortedIndex<K> {
    fn default() -> SortedIndex<K> {
        SortedIndex(Entries::Sorted(Vec::new()))
    }
}

/// Where `key` is in the sorted vector (compared by reference: a key copied
/// out for `binary_search_by_key` measured 45-65 more instructions a request
/// on the closed SPTF workloads).
#[inline]
fn find<K: Ord>(v: &[(K, ReqId)], key: &K) -> Result<usize, usize> {
    v.binary_search_by(|e| e.0.cmp(key))
}

fn pair<K>(e: &(K, ReqId)) -> (&K, &ReqId) {
    (&e.0, &e.1)
}

impl<K: Ord + Copy> SortedIndex<K> {
    pub(crate) fn new() -> SortedIndex<K> {
        SortedIndex::default()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        match &self.0 {
            Entries::Sorted(v) => v.len(),
            Entries::Tree(t) => t.len(),
        }
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Insert `id` at `key`; the request there before, if any.
    #[inline]
    pub(crate) fn insert(&mut self, key: K, id: ReqId) -> Option<ReqId> {
        let old = match &mut self.0 {
            Entries::Sorted(v) => match find(v, &key) {
                Ok(i) => Some(std::mem::replace(&mut v[i].1, id)),
                Err(i) => {
                    v.insert(i, (key, id));
                    None
                }
            },
            Entries::Tree(t) => t.insert(key, id),
        };
        if let Entries::Sorted(v) = &mut self.0 {
            if v.len() > TREE_ABOVE {
                self.0 = Entries::Tree(std::mem::take(v).into_iter().collect());
            }
        }
        old
    }

    /// Remove the request at `key`.
    #[inline]
    pub(crate) fn remove(&mut self, key: &K) -> Option<ReqId> {
        let id = match &mut self.0 {
            Entries::Sorted(v) => find(v, key).ok().map(|i| v.remove(i).1),
            Entries::Tree(t) => t.remove(key),
        };
        self.shrunk();
        id
    }

    /// The first entry at or after `from`, taken out if `keep` holds for
    /// its key: `range(from..).next()` and `remove` in one search.
    #[inline]
    pub(crate) fn take_first_from(&mut self, from: &K, keep: impl FnOnce(&K) -> bool) -> Option<(K, ReqId)> {
        let taken = match &mut self.0 {
            Entries::Sorted(v) => {
                let i = v.partition_point(|e| e.0 < *from);
                v.get(i).is_some_and(|e| keep(&e.0)).then(|| v.remove(i))
            }
            Entries::Tree(t) => {
                let key = *t.range(from..).next().filter(|(k, _)| keep(k))?.0;
                t.remove(&key).map(|id| (key, id))
            }
        };
        self.shrunk();
        taken
    }

    /// Remove the first request in key order.
    #[inline]
    pub(crate) fn pop_first(&mut self) -> Option<(K, ReqId)> {
        let first = match &mut self.0 {
            Entries::Sorted(v) => (!v.is_empty()).then(|| v.remove(0)),
            Entries::Tree(t) => t.pop_first(),
        };
        self.shrunk();
        first
    }

    fn shrunk(&mut self) {
        if let Entries::Tree(t) = &mut self.0 {
            if t.len() < SORTED_BELOW {
                self.0 = Entries::Sorted(std::mem::take(t).into_iter().collect());
            }
        }
    }

    /// The request at `key`.
    #[inline]
    pub(crate) fn get(&self, key: &K) -> Option<&ReqId> {
        match &self.0 {
            Entries::Sorted(v) => find(v, key).ok().map(|i| &v[i].1),
            Entries::Tree(t) => t.get(key),
        }
    }

    #[inline]
    pub(crate) fn first_key_value(&self) -> Option<(&K, &ReqId)> {
        match &self.0 {
            Entries::Sorted(v) => v.first().map(pair),
            Entries::Tree(t) => t.first_key_value(),
        }
    }

    #[inline]
    pub(crate) fn last_key_value(&self) -> Option<(&K, &ReqId)> {
        match &self.0 {
            Entries::Sorted(v) => v.last().map(pair),
            Entries::Tree(t) => t.last_key_value(),
        }
    }

    /// The requests in key order.
    #[inline]
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &ReqId)> {
        match &self.0 {
            Entries::Sorted(v) => Either::Left(v.iter().map(pair)),
            Entries::Tree(t) => Either::Right(t.iter()),
        }
    }

    /// The requests with keys in `range`, in key order.
    #[inline]
    pub(crate) fn range<R: RangeBounds<K>>(&self, range: R) -> impl DoubleEndedIterator<Item = (&K, &ReqId)> {
        match &self.0 {
            Entries::Sorted(v) => {
                let lo = match range.start_bound() {
                    Bound::Included(k) => v.partition_point(|e| e.0 < *k),
                    Bound::Excluded(k) => v.partition_point(|e| e.0 <= *k),
                    Bound::Unbounded => 0,
                };
                let hi = match range.end_bound() {
                    Bound::Included(k) => v.partition_point(|e| e.0 <= *k),
                    Bound::Excluded(k) => v.partition_point(|e| e.0 < *k),
                    Bound::Unbounded => v.len(),
                };
                Either::Left(v[lo..hi.max(lo)].iter().map(pair))
            }
            Entries::Tree(t) => Either::Right(t.range(range)),
        }
    }

    /// The entries at or after `at` (in order) and those before it (nearest
    /// first): `range(at..)` and `range(..at).rev()` from one search.
    #[inline]
    pub(crate) fn split_at(&self, at: &K) -> (impl Iterator<Item = (&K, &ReqId)>, impl Iterator<Item = (&K, &ReqId)>) {
        match &self.0 {
            Entries::Sorted(v) => {
                let i = v.partition_point(|e| e.0 < *at);
                (Either::Left(v[i..].iter().map(pair)), Either::Left(v[..i].iter().rev().map(pair)))
            }
            Entries::Tree(t) => (Either::Right(t.range(at..)), Either::Right(t.range(..at).rev())),
        }
    }

    /// The requests, in key order, leaving the index empty.
    pub(crate) fn drain(&mut self) -> Vec<ReqId> {
        match std::mem::take(self).0 {
            Entries::Sorted(v) => v.into_iter().map(|e| e.1).collect(),
            Entries::Tree(t) => t.into_values().collect(),
        }
    }
}

impl<K: Ord + Copy> std::ops::Index<&K> for SortedIndex<K> {
    type Output = ReqId;
    fn index(&self, key: &K) -> &ReqId {
        self.get(key).expect("a key in the index")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::SimRng;
    use rand::{Rng, SeedableRng};

    /// The index answers as a B-tree of the same entries does, through
    /// runs of inserts and removals that take it across both conversions
    /// and back (every answer checked against the tree after every step).
    #[test]
    fn answers_as_a_btree_across_its_conversions() {
        let mut rng = SimRng::seed_from_u64(7);
        let (mut ix, mut bt) = (SortedIndex::new(), BTreeMap::new());
        let (mut to_tree, mut to_sorted, mut seq) = (0, 0, 0u64);
        for step in 0..9_000u32 {
            // Mostly inserts, then mostly removals, then inserts again: about 1,800 long, empty, 1,800.
            let growing = !(3_000..6_000).contains(&step);
            let was_tree = matches!(ix.0, Entries::Tree(_));
            if bt.is_empty() || rng.gen_bool(if growing { 0.8 } else { 0.2 }) {
                seq += 1;
                let key = (rng.gen_range(0..2), rng.gen_range(0..500), seq);
                let id = ReqId(seq as u32);
                assert_eq!(ix.insert(key, id), bt.insert(key, id));
            } else if rng.gen_bool(0.4) {
                assert_eq!(ix.pop_first(), bt.pop_first());
            } else if rng.gen_bool(0.3) {
                // The first at or after a point, taken only on its own disk (as C-LOOK takes it).
                let from = (rng.gen_range(0..2), rng.gen_range(0..500), 0);
                let want = bt.range(from..).next().map(|(k, v)| (*k, *v)).filter(|(k, _)| k.0 == from.0);
                if let Some((k, _)) = want {
                    bt.remove(&k);
                }
                assert_eq!(ix.take_first_from(&from, |k| k.0 == from.0), want);
            } else {
                let k = *bt.keys().nth(rng.gen_range(0..bt.len())).unwrap();
                assert_eq!(ix.remove(&k), bt.remove(&k));
            }
            match (was_tree, &ix.0) {
                (false, Entries::Tree(_)) => to_tree += 1,
                (true, Entries::Sorted(_)) => to_sorted += 1,
                _ => {}
            }
            assert_eq!(ix.len(), bt.len());
            assert_eq!(ix.first_key_value(), bt.first_key_value());
            assert_eq!(ix.last_key_value(), bt.last_key_value());
            let probe = (rng.gen_range(0..2), rng.gen_range(0..500), rng.gen_range(0..seq + 1));
            assert_eq!(ix.range(probe..).next(), bt.range(probe..).next());
            assert_eq!(ix.range(..probe).next_back(), bt.range(..probe).next_back());
            let (up, down) = ix.split_at(&probe);
            assert!(up.take(3).eq(bt.range(probe..).take(3)) && down.take(3).eq(bt.range(..probe).rev().take(3)));
            assert_eq!(ix.get(&probe), bt.get(&probe));
            if step % 500 == 0 {
                assert!(ix.iter().eq(bt.iter()));
                let (lo, hi) = (probe.min((1, 250, 0)), probe.max((1, 250, 0)));
                assert!(ix.range(lo..hi).eq(bt.range(lo..hi)));
            }
        }
        assert!(to_tree >= 2 && to_sorted >= 1, "conversions: {to_tree} to the tree, {to_sorted} back");
        let all: Vec<ReqId> = bt.values().copied().collect();
        assert_eq!(ix.drain(), all);
        assert!(ix.is_empty());
    }
}
