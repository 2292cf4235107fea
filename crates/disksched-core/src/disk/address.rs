//! Physical addresses: a sector, a run of LBNs on one track, and the LBNs a
//! whole track holds. The layout (zones or a track table) answers in them.

/// A physical sector: `sector` counts from the track's index mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pbn {
    /// Cylinder.
    pub cylinder: u32,
    /// Head (surface).
    pub head: u32,
    /// Physical sector on the track, from the index mark.
    pub sector: u32,
}

/// A run of consecutive LBNs on one track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackPiece {
    /// Cylinder.
    pub cylinder: u32,
    /// Head (surface).
    pub head: u32,
    /// Physical sector where the run starts.
    pub first_sector: u32,
    /// Sectors the head passes over (blocks plus any slipped sectors between them).
    pub span_sectors: u32,
    /// LBNs transferred.
    pub blocks: u32,
    /// Physical sectors on the track.
    pub sectors_per_track: u32,
    /// The first LBN its track holds and how many (`Layout::track_lbns` of
    /// the track): what the drive's read-ahead asks of a read's track.
    pub track_first_lbn: u64,
    /// LBNs its track holds.
    pub track_blocks: u32,
}

/// The LBNs of one physical track, for planners that work track by track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackSpan {
    /// First LBN on the track.
    pub first_lbn: u64,
    /// LBNs on the track.
    pub blocks: u32,
    /// Physical sector holding `first_lbn`; later LBNs follow it around the track.
    pub first_sector: u32,
    /// Physical sectors on the track.
    pub sectors_per_track: u32,
    /// Slipped slots, as offsets from `first_sector` (sorted).
    pub slips: Vec<u32>,
}

impl TrackSpan {
    /// Index (0..blocks) of the LBNs held in slot offsets [k0, k1) from `first_sector`
    /// (k1 <= sectors_per_track): the half-open index range.
    pub fn index_range(&self, k0: u32, k1: u32) -> (u32, u32) {
        let idx = |k: u32| (k - self.slips.iter().filter(|&&s| s < k).count() as u32).min(self.blocks);
        (idx(k0), idx(k1))
    }
}
