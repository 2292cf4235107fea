//! The drive's read-ahead: how far a read miss reads on, how far it has
//! come by a given time, and where it leaves the heads when a command stops it.

use super::*;

/// Read-ahead in progress after a read: blocks from `lbn` on, read from
/// `start` with the heads at `from`, until `limit` blocks or the next
/// command that needs the mechanism. `from`/`start`/`lbn` are a checkpoint
/// at a track-piece boundary: `readahead_progress` moves it forward as time
/// passes, so no piece is walked twice (a long stream stays linear).
#[derive(Clone, Copy, Debug)]
pub(super) struct ReadAhead {
    pub(super) segment: usize,
    pub(super) from: (u32, u32),
    pub(super) start: u64,
    pub(super) lbn: u64,
    /// Blocks still to read from `lbn`.
    pub(super) limit: u32,
    /// Blocks from `lbn` it reads before a command may stop it.
    pub(super) min: u32,
    /// The next piece it reads and when its first sector comes under the
    /// head, once laid out (a stream asks at every command; None after any
    /// change to `from`, `start`, `lbn` or `limit`).
    pub(super) next: Option<(TrackPiece, u64)>,
    /// The piece at `lbn`, when the read that started it laid it out in
    /// advance (its track's rest): `next` without mapping (None after any
    /// change to `lbn` or `limit`).
    pub(super) first: Option<TrackPiece>,
}

impl Drive {
    /// Whether a read miss of `lbn` starts a read-ahead: after every read, or
    /// (`read_ahead_when = "stream"`) only when it continues the last read.
    pub(super) fn reads_ahead_after(&self, lbn: u64) -> bool {
        match self.model.spec.controller.read_ahead_when {
            ReadAheadWhen::EveryRead => true,
            ReadAheadWhen::Stream => self.last_read_end == Some(lbn),
        }
    }

    /// How many blocks the buffer reads ahead after a read of [lbn, end):
    /// DiskSim's `Buffer continuous read` modes: 1 to the end of the track
    /// the heads are on after the request (the one holding the block after
    /// it, so a read ending at a track end reads the next track), 2 of its
    /// cylinder, 3 up to the limit, 4 to the end of the following track
    /// when the segment (from `seg_lo`) already reaches back before the track
    /// holding the block after the request (else as 1); 0 the maximum
    /// read-ahead flat. Modes 1-3 stop at DiskSim's limit: the request's end
    /// plus Maximum read-ahead, or with no maximum a segment's worth from the
    /// request's start (its data kept) or end (`read_ahead_over_requested`).
    /// The segment's window slides, so a request as large as the segment
    /// still reads ahead, up to a segment beyond its end; then at least the minimum.
    /// `known`: the LBNs of a track the request touched, if looked up already.
    pub(super) fn readahead_blocks(&self, lbn: u64, end: u64, seg_lo: u64, known: Option<(u64, u64)>) -> u32 {
        let (layout, spec) = (&self.model.layout, &self.model.spec.controller);
        let cap = layout.capacity();
        if end >= cap {
            return 0;
        }
        let track = |lbn: u64| match known {
            Some(k) => layout.track_lbns_of_near(lbn, k),
            None => layout.track_lbns_of(lbn),
        };
        let track_end = |(first, n): (u64, u64), lbn: u64| (first + n).max(lbn + 1);
        let (max, seg) = (spec.read_ahead_max_blocks as u64, self.cache.segment_blocks);
        let min = (spec.read_ahead_min_blocks as u64).min(max.max(seg));
        let limit = if max > 0 { end + max } else { (if spec.read_ahead_over_requested { end } else { lbn }) + seg };
        // The heads are on the track (cylinder) of the block after the request.
        let next = end;
        let to = match spec.continuous_read {
            0 => end + max,
            2 => {
                let cyl = layout.lbn_to_pbn(next).cylinder;
                let cyl_end = (0..layout.surfaces()).map(|h| layout.track_lbns(cyl, h)).map(|(first, n)| first + n).max().unwrap_or(end);
                cyl_end.min(limit)
            }
            3 => limit,
            4 => {
                // DiskSim: the end of the track holding the block after the
                // request, and one track further when the segment's data
                // already begins before that track (a stream, or a read that
                // crossed into it). No maximum; the window bounds it below.
                let next_track = track(next);
                let here = track_end(next_track, next);
                if seg_lo < next_track.0 && here < cap { track_end(track(here), here) } else { here }
            }
            _ => track_end(track(next), next).min(limit),
        };
        to.min(end + seg.max(1)).min(cap).saturating_sub(end).max(min).min(cap - end) as u32
    }

    /// A read that starts inside the data the running read-ahead has
    /// buffered, or exactly where it is reading, joins it instead of
    /// stopping it (stopping would leave the heads just past the next
    /// sector: a lost revolution per request of a sequential stream). Its
    /// cached blocks go out at once, the rest as the heads read them, and
    /// the read-ahead then goes on from the request's end.
    pub(super) fn serve_from_readahead(&mut self, model: &DiskModel, now: SimTime, lbn: u64, blocks: u32) -> Option<Service> {
        let ra = self.readahead?;
        let end = lbn + blocks as u64;
        let seg = self.cache.segment(ra.segment)?;
        if !(seg.lo <= lbn && lbn <= seg.hi.max(ra.lbn) && end > ra.lbn) {
            return None;
        }
        let overhead_ns = model.controller.hit_overhead_ns[0][self.state.last_was_write as usize];
        let unsent = lbn.saturating_sub(ra.lbn);
        let a = model.media_access_sending(ra.from, ra.start, None, ra.lbn, (end - ra.lbn) as u32, false, Some(unsent), &mut self.pieces);
        let done = a.sent_by.max(now.0 + overhead_ns + model.controller.data_phase_ns(blocks, false));
        // Blocks up to `end` count as buffered from now on (a request arriving
        // before the media reaches them is rare with one command at a time).
        self.cache.extend(ra.segment, end);
        self.cache.touch(ra.segment);
        let max_ra = self.readahead_blocks(lbn, end, self.cache.segment(ra.segment).map_or(lbn, |s| s.lo), None);
        self.last_read_end = Some(end);
        self.readahead = (max_ra > 0).then_some(ReadAhead {
            segment: ra.segment, from: (a.cylinder, a.head), start: a.media_end, lbn: end, limit: max_ra, min: 0, next: None, first: None,
        });
        self.drop_sent_request(lbn, end);
        self.state = DriveState { head: HeadState { cylinder: a.cylinder, head: a.head, time: SimTime(a.media_end), ..Default::default() }, last_was_write: false };
        let transfer_ns = a.media_end.saturating_sub(now.0.max(ra.start));
        Some(Service { overhead_ns, transfer_ns, bus_wait_ns: done - a.media_end, done: SimTime(done), cache_hit: true, ..Default::default() })
    }

    /// Bring the read-ahead up to time `t`: the blocks it has read by then go
    /// into its segment, and its checkpoint moves past every track piece it
    /// has finished (timed exactly as `media_access` times them). Returns
    /// where the heads are and when it finished, if it has (None: no read-ahead).
    pub(super) fn readahead_progress(&mut self, t: u64) -> Option<((u32, u32), Option<u64>)> {
        // Moved on in place (not copied out and back: it is a dozen words).
        let ra = self.readahead.as_mut()?;
        let model = &*self.model;
        let m = &model.mech;
        if t <= ra.start {
            return Some((ra.from, None));
        }
        let mut out = None;
        // One piece at a time: a command usually comes while the first is being read.
        while ra.limit > 0 {
            let (p, tm) = match ra.next {
                Some(next) => next,
                None => {
                    let p = ra.first.unwrap_or_else(|| model.layout.first_piece(ra.lbn, ra.limit));
                    let tm = ra.start + model.position_ns(ra.from, (p.cylinder, p.head), Access::Onward { write: false }, 0);
                    (p, m.arrive_ns(tm, sector_phase(p.first_sector, p.sectors_per_track)))
                }
            };
            ra.next = Some((p, tm));
            let at = (p.cylinder, p.head);
            if tm >= t {
                out = Some((at, 0));
                break;
            }
            let piece_ns = m.sectors_ns(p.span_sectors as u64, p.sectors_per_track);
            if tm + piece_ns > t {
                // Whole sectors passed by `t` (a slip inside the piece is not told apart here).
                let sectors = m.sectors_in(t - tm, p.sectors_per_track) as u32;
                out = Some((at, sectors.min(p.blocks)));
                break;
            }
            *ra = ReadAhead { from: at, start: tm + piece_ns, lbn: ra.lbn + p.blocks as u64, limit: ra.limit - p.blocks,
                min: ra.min.saturating_sub(p.blocks), next: None, first: None, ..*ra };
        }
        let (at, got, finished) = match out {
            Some((at, got)) => (at, got, None),
            None => (ra.from, 0, Some(ra.start)),
        };
        self.cache.extend(ra.segment, ra.lbn + got as u64);
        Some((at, finished))
    }

    /// Stop the read-ahead (after its minimum) for a command that needs the
    /// mechanism at `now`: returns where the heads are and when they are free.
    pub(super) fn settle_readahead(&mut self, now: u64) -> ((u32, u32), u64) {
        self.settle_readahead_from(now, None)
    }

    /// `settle_readahead`, with the read-ahead already brought up to `now`
    /// if `progress` says so (`readahead_progress(now)`'s answer: bringing
    /// it there again would change nothing and answer the same).
    pub(super) fn settle_readahead_from(&mut self, now: u64, progress: Option<((u32, u32), Option<u64>)>) -> ((u32, u32), u64) {
        let Some(ra) = self.readahead else {
            return ((self.state.head.cylinder, self.state.head.head), self.state.head.time.0.max(now));
        };
        let min_end = if ra.min > 0 {
            self.model.media_access_sending(ra.from, ra.start, None, ra.lbn, ra.min, false, Some(0), &mut self.pieces).media_end
        } else {
            0
        };
        let stop = now.max(min_end);
        let (at, finished) = match progress.filter(|_| stop == now) {
            Some(p) => p,
            None => self.readahead_progress(stop).expect("a read-ahead"),
        };
        let ra = self.readahead.take().expect("a read-ahead");
        // A track or cylinder switch under way when it is stopped is completed
        // first (DiskSim §3.6: a seek in progress is always finished; only the
        // sector reading is abandoned at once): the heads are free at its end.
        let heads_free = match ra.next {
            Some((p, tm)) if finished.is_none() && tm >= stop && ra.from != (p.cylinder, p.head) => {
                ra.start + self.model.position_ns(ra.from, (p.cylinder, p.head), Access::Onward { write: false }, 0)
            }
            // Reading mid-track: a drive with `Stop prefetch in sector = 0`
            // reads the sector under the head to its end (and keeps it).
            Some((p, tm)) if finished.is_none() && tm < stop && self.model.spec.controller.finish_sector_on_stop => {
                let m = &self.model.mech;
                let under = m.sectors_in(stop - tm, p.sectors_per_track);
                self.cache.extend(ra.segment, ra.lbn + (under + 1).min(p.blocks as u64));
                (tm + m.sectors_ns(under + 1, p.sectors_per_track)).min(tm + m.sectors_ns(p.span_sectors as u64, p.sectors_per_track))
            }
            _ => 0,
        };
        // Finished early: free since then; else stopped mid-way at `stop`, or
        // (a command queued behind the read) where the read itself ended.
        (at, finished.map_or(stop.max(ra.start).max(heads_free), |end| end.max(now)))
    }
}
