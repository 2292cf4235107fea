//! One place times a media access: how long the heads take to get from
//! where they are to an access's first sector (seek or head switch, write
//! settle, the fixed cost of a new read on the heads' own track, the minimum
//! seek delay of a write, a belief's seek conservatism), the rotational wait
//! for that sector, and the transfer track piece by track piece. The drive
//! (the truth), every predictor (a scheduler's belief), the external
//! freeblock host's model and the freeblock planner all ask here, so a
//! change to the mechanism changes them all alike.

use crate::disk::layout::{MappedPieces, TrackPiece};
use crate::disk::mechanics::sector_phase;
use crate::disk::{DiskModel, WriteData};

/// What the heads are moving for: it decides which fixed costs a move pays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A new read: a seek or head switch, or on the heads' own track the
    /// same-track cost (`seek.same_track_read_ms`: settling and servo, which
    /// the extracted seek curves fold into distances of one cylinder and up).
    Read,
    /// A new write: seek or head switch plus write settle, and no less than
    /// the minimum seek delay (DiskSim's `Minimum seek delay`, applied to every write).
    Write,
    /// A write appending to the media write in progress: no minimum seek delay.
    AppendedWrite,
    /// The heads going on to the next track of work already under way (an
    /// access's later track pieces, a running read-ahead, a read joining
    /// it, an empty travel, a freeblock visit): seek or head switch, plus
    /// write settle for a write; nothing when the track does not change.
    Onward {
        /// The work under way is a write (adds the write settle).
        write: bool,
    },
}

impl DiskModel {
    /// Time from when the heads may move at `from` (cylinder, head) until
    /// they may start transferring on track `to`, ns. `conservatism_ns`
    /// (a belief's margin) is added to any actual movement of the heads.
    #[inline]
    pub fn position_ns(&self, from: (u32, u32), to: (u32, u32), access: Access, conservatism_ns: u64) -> u64 {
        let write = matches!(access, Access::Write | Access::AppendedWrite | Access::Onward { write: true });
        let moved = self.mech.reposition_ns(from.0, from.1, to.0, to.1, write);
        let moved = if moved > 0 { moved + conservatism_ns } else { 0 };
        match access {
            Access::Read if from == to => self.mech.same_track_read_ns,
            Access::Write => moved.max(self.controller.min_seek_ns),
            _ => moved,
        }
    }
}

/// The mechanical part of one access, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediaAccess {
    /// Seek or head switch (plus settle), ns.
    pub seek_ns: u64,
    /// Rotational wait for the first sector, ns.
    pub rotation_ns: u64,
    /// First sector starts passing under the head.
    pub media_start: u64,
    /// Last sector has passed.
    pub media_end: u64,
    /// A read's high-water-mark block has passed (its data may go out).
    pub mark_at: u64,
    /// A read: when its last block could have crossed the bus, each block
    /// sent once read and once the one before it has gone (the start of
    /// the data phase, `mark_at`, comes on top: `read_bus_done`).
    pub sent_by: u64,
    /// Where the heads end up.
    pub cylinder: u32,
    /// Head the heads end up on.
    pub head: u32,
}

impl DiskModel {
    /// Move the heads from `from` starting at `t` and transfer `blocks` from
    /// `lbn`. `write`: a write miss's data still to cross the bus (None: a
    /// read, or write data already buffered). The media write starts once
    /// the head reaches the first sector with its data in the buffer; a
    /// sector whose data has not arrived when the head reaches it waits a
    /// revolution (DiskSim's sector-by-sector write), so a bus slower than
    /// the media can cost a revolution.
    #[allow(clippy::too_many_arguments)]
    pub fn media_access(&self, from: (u32, u32), t: u64, write: Option<WriteData>, lbn: u64, blocks: u32,
                        is_write: bool, pieces: &mut Vec<TrackPiece>) -> MediaAccess {
        self.layout.pieces(lbn, blocks, pieces);
        self.time_pieces(from, t, write, blocks, is_write, None, pieces)
    }

    /// `media_access`, the range's pieces mapped through `memo` (once for the drive and its exact belief).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn media_access_mapped(&self, from: (u32, u32), t: u64, write: Option<WriteData>, lbn: u64, blocks: u32,
                                      is_write: bool, memo: &mut MappedPieces) -> MediaAccess {
        self.media_access_sending(from, t, write, lbn, blocks, is_write, None, memo)
    }

    /// `media_access`, or with `joined = Some(unsent)` the continuation of a
    /// running read-ahead that a read joins: no new positioning, and its first
    /// `unsent` blocks are read but not sent to the host.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn media_access_sending(&self, from: (u32, u32), t: u64, write: Option<WriteData>, lbn: u64, blocks: u32,
                                       is_write: bool, joined: Option<u64>, memo: &mut MappedPieces) -> MediaAccess {
        let pieces = self.layout.pieces_memo(lbn, blocks, memo);
        self.time_pieces(from, t, write, blocks, is_write, joined, pieces)
    }

    /// `media_access_sending` of the `blocks` LBNs laid out as `pieces`.
    #[allow(clippy::too_many_arguments)]
    fn time_pieces(&self, from: (u32, u32), t: u64, write: Option<WriteData>, blocks: u32,
                   is_write: bool, joined: Option<u64>, pieces: &[TrackPiece]) -> MediaAccess {
        let m = &self.mech;
        let first = pieces[0];
        let unsent = joined.unwrap_or(0);
        let access = match (is_write, write, joined) {
            (false, _, Some(_)) => Access::Onward { write: false },
            (false, _, None) => Access::Read,
            (true, Some(w), _) if !w.appends => Access::Write,
            (true, _, _) => Access::AppendedWrite,
        };
        let seek_ns = self.position_ns(from, (first.cylinder, first.head), access, 0);
        let bus = self.controller.bus_write_sector_ns;
        let write_data_from = write.map(|w| w.data_from);
        let first_blocks = write.map_or(1, |w| w.first_blocks.max(1)) as u64;
        let ready = (t + seek_ns).max(write_data_from.map_or(0, |from| from + first_blocks * bus));
        let media_start = m.arrive_ns(ready, sector_phase(first.first_sector, first.sectors_per_track));
        let mut tm = media_start;
        let (mut cyl, mut hd) = (first.cylinder, first.head);
        let mut done_blocks = 0u64;
        let mark = if is_write { 0 } else { unsent + self.controller.read_mark_blocks(blocks - unsent as u32) as u64 };
        let mut mark_at = 0;
        let read_bus = self.controller.bus_sector_ns;
        let mut sent_by = 0;
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 {
                tm += self.position_ns((cyl, hd), (p.cylinder, p.head), Access::Onward { write: is_write }, 0);
                tm = m.arrive_ns(tm, sector_phase(p.first_sector, p.sectors_per_track));
                cyl = p.cylinder;
                hd = p.head;
            }
            if let Some(bus_start) = write_data_from {
                // Write data that has not arrived when the head reaches its
                // sector: the write waits a revolution for that sector.
                let last_at = |tm: u64| tm + m.sectors_ns(p.span_sectors.saturating_sub(1) as u64, p.sectors_per_track);
                let first_in = bus_start + (done_blocks + 1).max(first_blocks) * bus;
                let last_in = bus_start + (done_blocks + p.blocks as u64) * bus;
                while first_in > tm || last_in > last_at(tm) {
                    tm += m.revolution_ns();
                }
            }
            if (done_blocks + 1..=done_blocks + p.blocks as u64).contains(&mark) {
                // (A slip inside the piece before the mark is not told apart here.)
                mark_at = tm + m.sectors_ns(mark - done_blocks, p.sectors_per_track);
            }
            let piece_ns = m.sectors_ns(p.span_sectors as u64, p.sectors_per_track);
            if !is_write && done_blocks + p.blocks as u64 > unsent {
                // Each block goes out once it is buffered and the one before
                // it has gone: within a piece blocks come evenly, so the
                // bound is set by its first or its last sent block (a head
                // switch or seek between pieces lets the bus catch up, but
                // never get ahead of the head).
                let skip = unsent.saturating_sub(done_blocks);
                let k = p.blocks as u64 - skip;
                let first_in = tm + m.sectors_ns(skip + 1, p.sectors_per_track);
                sent_by = (sent_by + k * read_bus).max(first_in + k * read_bus).max(tm + piece_ns + read_bus);
            }
            done_blocks += p.blocks as u64;
            tm += piece_ns;
        }
        MediaAccess {
            seek_ns, rotation_ns: media_start.saturating_sub(t + seek_ns), media_start, media_end: tm, mark_at, sent_by,
            cylinder: cyl, head: hd,
        }
    }

    /// When a read miss's data has all crossed the bus (DiskSim §2.1): the
    /// drive reconnects once the high water mark's blocks are buffered (and
    /// not before its disconnect after the command, `disconnected_at`, has
    /// ended), takes the first reselect and data preparation, then sends
    /// each block no sooner than it has been read and the one before it
    /// sent (the bus is held to the end). The reselect comes before the
    /// data: where the head, not the bus, sets the pace it is hidden.
    pub(crate) fn read_bus_done(&self, a: &MediaAccess, blocks: u32, disconnected_at: u64) -> u64 {
        let ctl = &self.controller;
        a.sent_by.max(a.mark_at.max(disconnected_at) + ctl.reselect_ns[0] + ctl.data_phase_ns(blocks, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::DiskSpec;

    /// A read that joins a running read-ahead (`joined = Some(unsent)`) on a
    /// drive with a high water mark: the mark counts from the unsent blocks,
    /// over the blocks still to send (hp_c2247a's 0.75). Mutation testing
    /// (docs/mutation-testing.md) found no test with a nonzero mark here.
    #[test]
    fn a_joined_read_sets_its_water_mark_over_the_blocks_it_sends() {
        // 6000 RPM, 100 sectors a track: 0.1 ms a sector, sector 30 at 3.0 ms.
        let text = r#"
name = "hand"
surfaces = 2
cylinders = 10
blocks = 2000
rpm = 6000.0
[seek]
table = [[1, 1.0], [9, 1.0]]
head_switch_ms = 0.5
[layout]
[[layout.zones]]
first_cylinder = 0
last_cylinder = 9
sectors_per_track = 100
track_skew_sectors = 0.0
cylinder_skew_sectors = 0.0
[controller]
read_water_mark = 0.75
water_mark_by_request = true
segment_size_blocks = 300
"#;
        let m = DiskModel::new(DiskSpec::from_toml(text, "hand").unwrap()).unwrap();
        let mut pieces = MappedPieces::default();
        // 20 blocks from LBN 30, the first 8 already buffered (not sent): the
        // mark is 8 + floor(0.75 x 12) = 17 blocks, passed 1.7 ms after 3.0.
        let a = m.media_access_sending((0, 0), 0, None, 30, 20, false, Some(8), &mut pieces);
        assert_eq!((a.seek_ns, a.media_start), (0, 3_000_000));
        assert_eq!(a.mark_at, 4_700_000);
        // A new read of the same 20 blocks: floor(0.75 x 20) = 15 blocks, at 4.5 ms
        // (0.3 ms same-track cost first: still sector 30 at 3.0 ms).
        let a = m.media_access_sending((0, 0), 0, None, 30, 20, false, None, &mut pieces);
        assert_eq!(a.mark_at, 4_500_000);
    }
}
