//! The drive's buffer cache: segments of consecutive blocks, LRU.
//!
//! A segment holds one run [lo, hi) of blocks: data read for a request, the
//! sectors that passed under the head while it waited for the request
//! (`read_any_free_blocks`), read-ahead beyond it, or write data not yet
//! on the media (write-back). A read is a hit when a segment holds all its
//! blocks, a partial hit when a segment holds its first blocks.
//!
//! A drive with `Use separate write segment` (DiskSim's manual: "a single
//! segment is statically designated for use by all write requests") keeps
//! its last segment for writes: every write goes there, reads never use it
//! and never hit its data (DiskSim 4.0 as PDL released it), so reads have
//! one segment fewer.

/// One buffer segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First block held.
    pub lo: u64,
    /// One past the last block held.
    pub hi: u64,
    /// Cache clock at the last use (for LRU replacement).
    pub last_used: u64,
    /// Holds write data (until destaged, and after, as DiskSim keeps it).
    pub write: bool,
}

impl Segment {
    /// A segment holding nothing: no block lies in [lo, hi), no range
    /// overlaps it, and it is the least recently used (0 before any use).
    const EMPTY: Segment = Segment { lo: u64::MAX, hi: 0, last_used: 0, write: false };

    /// It holds a run of blocks (it was allocated and not invalidated since).
    #[inline(always)]
    fn is_used(&self) -> bool {
        self.last_used > 0
    }

    /// A read may hit it: it holds blocks, and not write data unless `include_writes`.
    #[inline(always)]
    fn readable(&self, include_writes: bool) -> bool {
        self.is_used() && (include_writes || !self.write)
    }
}

#[derive(Clone, Debug)]
/// The buffer: a fixed number of segments, each empty or holding one run of blocks.
pub struct Cache {
    /// The segments; an empty one is `Segment::EMPTY` (plain values, so a
    /// lookup is one loop over them).
    segments: Vec<Segment>,
    /// Capacity of a segment, blocks.
    pub segment_blocks: u64,
    clock: u64,
    /// The segment reserved for writes (`Use separate write segment`), if any.
    write_segment: Option<usize>,
}

impl Cache {
    /// `segments` empty segments of `segment_blocks` blocks each (0 of either: no cache).
    pub fn new(segments: u32, segment_blocks: u32) -> Cache {
        Cache { segments: vec![Segment::EMPTY; segments as usize], segment_blocks: segment_blocks as u64, clock: 0, write_segment: None }
    }

    /// The same buffer with its last segment reserved for writes (DiskSim's
    /// `Use separate write segment`). A buffer of fewer than two segments
    /// keeps its one segment for both (no catalogue drive has that).
    pub fn with_write_segment(mut self) -> Cache {
        if self.segments.len() >= 2 && self.segment_blocks > 0 {
            self.write_segment = Some(self.segments.len() - 1);
        }
        self
    }

    /// The segment reserved for writes, if the drive has one.
    pub fn write_segment(&self) -> Option<usize> {
        self.write_segment
    }

    /// Segment `i`, if it holds blocks.
    #[inline]
    pub fn segment(&self, i: usize) -> Option<Segment> {
        self.segments.get(i).filter(|s| s.is_used()).copied()
    }

    /// The segments a read may hit, with their index: all but a reserved
    /// write segment, and those holding write data only if `include_writes`.
    pub fn readable(&self, include_writes: bool) -> impl Iterator<Item = (usize, &Segment)> {
        self.read_segments().iter().enumerate().filter(move |(_, s)| s.readable(include_writes))
    }

    /// The segments reads may use: all but a reserved write segment (the last).
    #[inline(always)]
    fn read_segments(&self) -> &[Segment] {
        &self.segments[..self.write_segment.unwrap_or(self.segments.len())]
    }

    /// There is at least one segment of nonzero size.
    pub fn enabled(&self) -> bool {
        !self.segments.is_empty() && self.segment_blocks > 0
    }

    /// Blocks of [lbn, end) held from `lbn` on, in the readable segments but
    /// `except`: (segment index, cached prefix length), the longest prefix
    /// (the lowest index among equals).
    #[inline]
    pub fn lookup_except(&self, lbn: u64, end: u64, include_writes: bool, except: Option<usize>) -> Option<(usize, u64)> {
        let mut best: Option<(usize, u64)> = None;
        // An empty segment's [lo, hi) holds no block: the range test alone passes it by.
        for (i, s) in self.read_segments().iter().enumerate() {
            if s.lo <= lbn && lbn < s.hi && s.readable(include_writes) && Some(i) != except {
                best = Self::longer(best, Some((i, s.hi.min(end) - lbn)));
            }
        }
        best
    }

    /// `lookup_except` in segment `i` alone.
    pub fn lookup_in(&self, i: usize, lbn: u64, end: u64, include_writes: bool) -> Option<(usize, u64)> {
        let s = self.read_segments().get(i).filter(|s| s.readable(include_writes))?;
        (s.lo <= lbn && lbn < s.hi).then(|| (i, s.hi.min(end) - lbn))
    }

    /// Of two lookups' answers, the longer prefix; the lower index among equals.
    pub fn longer(a: Option<(usize, u64)>, b: Option<(usize, u64)>) -> Option<(usize, u64)> {
        match (a, b) {
            (Some((i, n)), Some((j, m))) => Some(if m > n || (m == n && j < i) { (j, m) } else { (i, n) }),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// Mark segment `i` most recently used.
    pub fn touch(&mut self, i: usize) {
        self.clock += 1;
        let s = &mut self.segments[i];
        if s.is_used() {
            s.last_used = self.clock;
        }
    }

    /// Segment `i` now holds blocks up to `hi`; its oldest blocks give way
    /// beyond the segment size.
    pub fn extend(&mut self, i: usize, hi: u64) {
        let s = &mut self.segments[i];
        if s.is_used() {
            s.hi = s.hi.max(hi);
            s.lo = s.lo.max(s.hi.saturating_sub(self.segment_blocks));
        }
    }

    /// Reuse the least recently used segment (empty ones first) for [lo, hi);
    /// a write on a drive with a reserved write segment always takes that one,
    /// and a read never does.
    pub fn allocate(&mut self, lo: u64, hi: u64, write: bool) -> usize {
        let i = match self.write_segment.filter(|_| write) {
            Some(w) => w,
            None => {
                // The first empty segment (last used at 0), else the least
                // recently used (each use has its own clock value).
                let (mut i, mut oldest) = (usize::MAX, u64::MAX);
                for (k, s) in self.read_segments().iter().enumerate() {
                    if s.last_used < oldest {
                        (i, oldest) = (k, s.last_used);
                    }
                }
                i
            }
        };
        self.clock += 1;
        self.segments[i] = Segment { lo, hi, last_used: self.clock, write };
        i
    }

    /// Drop cached copies of [lo, hi) outside segment `keep` (new data written there).
    pub fn invalidate(&mut self, lo: u64, hi: u64, keep: Option<usize>) {
        for (i, s) in self.segments.iter_mut().enumerate() {
            if Some(i) != keep && s.lo < hi && lo < s.hi {
                *s = Segment::EMPTY;
            }
        }
    }

    /// A read of [lbn, end) has been sent: read segments that hold it up to
    /// `end` or beyond now start at `end` (DiskSim's `Read-ahead over requested = -1`).
    pub fn drop_sent(&mut self, lbn: u64, end: u64) {
        for s in self.segments.iter_mut().filter(|s| s.is_used() && !s.write) {
            if s.lo < end && lbn < s.hi && s.hi >= end {
                s.lo = s.lo.max(end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Empty segments are taken first, in order, then the least recently
    /// used; an invalidated segment is empty again (taken first, never hit),
    /// and touching or extending an empty one leaves it empty.
    #[test]
    fn empty_segments_first_then_the_least_recently_used() {
        let mut c = Cache::new(3, 100);
        assert_eq!([c.allocate(0, 10, false), c.allocate(20, 30, false), c.allocate(40, 50, false)], [0, 1, 2]);
        c.touch(0);
        assert_eq!(c.allocate(60, 70, false), 1, "segment 1 is the least recently used");
        c.invalidate(5, 6, None);
        assert_eq!(c.segment(0), None);
        assert_eq!(c.lookup_except(5, 6, true, None), None);
        c.touch(0);
        c.extend(0, 99);
        assert_eq!(c.segment(0), None, "an empty segment stays empty");
        assert_eq!(c.allocate(80, 90, false), 0, "the empty segment goes first");
        assert_eq!(c.lookup_except(85, 95, true, None), Some((0, 5)));
        assert_eq!(c.lookup_except(65, 95, true, Some(1)), None);
        assert_eq!(c.readable(true).map(|(i, _)| i).collect::<Vec<_>>(), [0, 1, 2]);
    }
}
