//! Which blocks are still wanted: a bit per LBN, and counts per cylinder
//! so that idle time finds the nearest work quickly.

/// Blocks still wanted, one bit per LBN, plus per-cylinder counts so idle
/// time can find the nearest work quickly.
#[derive(Clone, Debug)]
pub struct Wanted {
    bits: Vec<u64>,
    count: u64,
    capacity: u64,
}

impl Wanted {
    /// No block wanted, on a disk of `capacity` LBNs.
    pub fn new(capacity: u64) -> Wanted {
        Wanted { bits: vec![0; capacity.div_ceil(64) as usize], count: 0, capacity }
    }
    /// Blocks on the disk (wanted or not).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Number of blocks wanted.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// `lbn` is wanted.
    pub fn get(&self, lbn: u64) -> bool {
        self.bits[(lbn / 64) as usize] >> (lbn % 64) & 1 == 1
    }
    /// Set bits in [lo, hi); returns how many changed.
    pub fn set_range(&mut self, lo: u64, hi: u64) -> u64 {
        self.update(lo, hi, true)
    }
    /// Clear bits in [lo, hi); returns how many were set.
    pub fn clear_range(&mut self, lo: u64, hi: u64) -> u64 {
        self.update(lo, hi, false)
    }
    fn update(&mut self, lo: u64, hi: u64, set: bool) -> u64 {
        let mut changed = 0;
        for (w, mask) in word_masks(lo, hi) {
            let before = self.bits[w];
            self.bits[w] = if set { before | mask } else { before & !mask };
            changed += (before ^ self.bits[w]).count_ones() as u64;
        }
        if set { self.count += changed } else { self.count -= changed }
        changed
    }
    /// Number of set bits in [lo, hi).
    pub fn count_range(&self, lo: u64, hi: u64) -> u64 {
        word_masks(lo, hi).map(|(w, mask)| (self.bits[w] & mask).count_ones() as u64).sum()
    }
}

/// The 64-bit words covering bits [lo, hi), each with the mask of its bits in range.
fn word_masks(lo: u64, hi: u64) -> impl Iterator<Item = (usize, u64)> {
    let first = lo / 64;
    let last = hi.div_ceil(64);
    (first..last).map(move |w| {
        let start = lo.max(w * 64) - w * 64;
        let end = hi.min(w * 64 + 64) - w * 64;
        let mask = if end - start == 64 { u64::MAX } else { ((1u64 << (end - start)) - 1) << start };
        (w as usize, mask)
    })
}
