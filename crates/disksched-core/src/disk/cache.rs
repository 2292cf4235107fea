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

#[derive(Clone, Debug)]
/// The buffer: a fixed number of segments, each empty or holding one run of blocks.
pub struct Cache {
    /// The segments; `None` is empty.
    pub segments: Vec<Option<Segment>>,
    /// Capacity of a segment, blocks.
    pub segment_blocks: u64,
    clock: u64,
    /// The segment reserved for writes (`Use separate write segment`), if any.
    write_segment: Option<usize>,
}

impl Cache {
    /// `segments` empty segments of `segment_blocks` blocks each (0 of either: no cache).
    pub fn new(segments: u32, segment_blocks: u32) -> Cache {
        Cache { segments: vec![None; segments as usize], segment_blocks: segment_blocks as u64, clock: 0, write_segment: None }
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

    /// The segments a read may hit, with their index: all but a reserved
    /// write segment, and those holding write data only if `include_writes`.
    pub fn readable(&self, include_writes: bool) -> impl Iterator<Item = (usize, &Segment)> {
        // The reserved write segment is the last: the readable ones are a prefix.
        self.read_segments().iter().enumerate().filter_map(move |(i, s)| s.as_ref().filter(|s| include_writes || !s.write).map(|s| (i, s)))
    }

    /// The segments reads may use: all but a reserved write segment (the last).
    #[inline(always)]
    fn read_segments(&self) -> &[Option<Segment>] {
        &self.segments[..self.write_segment.unwrap_or(self.segments.len())]
    }

    /// Segment `i`, if a read may hit it (see `readable`).
    #[inline(always)]
    fn readable_at(&self, i: usize, include_writes: bool) -> Option<&Segment> {
        self.read_segments().get(i)?.as_ref().filter(|s| include_writes || !s.write)
    }

    /// There is at least one segment of nonzero size.
    pub fn enabled(&self) -> bool {
        !self.segments.is_empty() && self.segment_blocks > 0
    }

    /// Blocks of [lbn, end) held from `lbn` on, in the readable segments but
    /// `except`: (segment index, cached prefix length), the longest prefix
    /// (the lowest index among equals).
    pub fn lookup_except(&self, lbn: u64, end: u64, include_writes: bool, except: Option<usize>) -> Option<(usize, u64)> {
        let mut best: Option<(usize, u64)> = None;
        for (i, s) in self.readable(include_writes) {
            if s.lo <= lbn && lbn < s.hi && Some(i) != except {
                best = Self::longer(best, Some((i, s.hi.min(end) - lbn)));
            }
        }
        best
    }

    /// `lookup_except` in segment `i` alone.
    pub fn lookup_in(&self, i: usize, lbn: u64, end: u64, include_writes: bool) -> Option<(usize, u64)> {
        let s = self.readable_at(i, include_writes)?;
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
        if let Some(s) = &mut self.segments[i] {
            s.last_used = self.clock;
        }
    }

    /// Segment `i` now holds blocks up to `hi`; its oldest blocks give way
    /// beyond the segment size.
    pub fn extend(&mut self, i: usize, hi: u64) {
        if let Some(s) = &mut self.segments[i] {
            s.hi = s.hi.max(hi);
            s.lo = s.lo.max(s.hi.saturating_sub(self.segment_blocks));
        }
    }

    /// Reuse the least recently used segment (empty ones first) for [lo, hi);
    /// a write on a drive with a reserved write segment always takes that one,
    /// and a read never does.
    pub fn allocate(&mut self, lo: u64, hi: u64, write: bool) -> usize {
        let reserved = self.write_segment;
        let i = match reserved.filter(|_| write) {
            Some(w) => w,
            None => {
                // The first empty segment, else the least recently used (each use has its own clock value).
                let (mut i, mut oldest) = (usize::MAX, u64::MAX);
                for (k, s) in self.read_segments().iter().enumerate() {
                    let Some(s) = s else { i = k; break };
                    if s.last_used < oldest {
                        (i, oldest) = (k, s.last_used);
                    }
                }
                i
            }
        };
        self.clock += 1;
        self.segments[i] = Some(Segment { lo, hi, last_used: self.clock, write });
        i
    }

    /// Drop cached copies of [lo, hi) outside segment `keep` (new data written there).
    pub fn invalidate(&mut self, lo: u64, hi: u64, keep: Option<usize>) {
        for (i, s) in self.segments.iter_mut().enumerate() {
            if Some(i) != keep && s.is_some_and(|s| s.lo < hi && lo < s.hi) {
                *s = None;
            }
        }
    }
}
