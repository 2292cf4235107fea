//! The simulated drive: the truth that requests are timed against.
//!
//! Service of one command: controller overhead, then the heads move to the
//! first track piece (seek or head switch, plus write settle), wait for the
//! first sector, and transfer every piece in turn (each further piece is a head
//! switch or single-cylinder seek and the rotational wait that the skews
//! leave). Bus and media overlap: read data goes out on the bus once the
//! high water mark's share is in the buffer (the first sector by default);
//! write data comes in while the heads seek, the media write starts once
//! its first block is in, and a sector whose data is not there yet when the
//! head reaches it waits a revolution.

use crate::disk::cache::Cache;
use crate::disk::controller::WritePlan;
use crate::disk::layout::{MappedPieces, TrackPiece};
use crate::disk::mechanics::sector_phase;
use crate::disk::spec::ReadAheadWhen;
use crate::disk::timing::{Access, MediaAccess};
use crate::disk::{DiskModel, HeadState};
use crate::time::SimTime;
use std::sync::Arc;

mod readahead;
use readahead::ReadAhead;

/// How one command was served, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Service {
    /// Command processing overhead before the heads move.
    pub overhead_ns: u64,
    /// Seek (or head switch) to the first sector's track.
    pub seek_ns: u64,
    /// Rotational wait for the first sector.
    pub rotation_ns: u64,
    /// Media transfer from the first sector to the last, including track switches.
    pub transfer_ns: u64,
    /// Time spent after the media finished, waiting for the bus.
    pub bus_wait_ns: u64,
    /// When the command completes (is reported to the host).
    pub done: SimTime,
    /// Served (at least partly) from the drive's cache.
    pub cache_hit: bool,
    /// When the request's first sector passed under the head (0: no media access).
    pub media_start: SimTime,
    /// Time the command waited for the mechanism to finish a destage
    /// (earlier write-back data going to the media) before its own work.
    pub destage_wait_ns: u64,
    /// This write's own destage (write-back: done after it was reported,
    /// charged to no part of its service): positioning, rotation (with any
    /// wait for its data), media transfer.
    pub destage_seek_ns: u64,
    /// Rotational wait of this write's destage.
    pub destage_rotation_ns: u64,
    /// Media transfer of this write's destage.
    pub destage_transfer_ns: u64,
}

/// The drive's mutable state between commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriveState {
    /// Where the heads are and when the mechanism is free.
    pub head: HeadState,
    /// The last command was a write.
    pub last_was_write: bool,
}

impl DriveState {
    /// The state `DiskModel::serve` leaves after a command of the LBNs up
    /// to `end`: the heads on (`cylinder`, `head`), the track of its last
    /// piece, free at `time`.
    pub fn after_command(cylinder: u32, head: u32, time: SimTime, end: u64, is_write: bool) -> DriveState {
        DriveState { head: HeadState { cylinder, head, time, next_lbn: Some(end), ..Default::default() }, last_was_write: is_write }
    }
}

impl DiskModel {
    /// Time one command starting at `now` from `state` with no read cache,
    /// and advance `state`. Predictors (beliefs) time requests this way; the
    /// drive adds its cache on top. A write-back drive's write is believed
    /// as the drive does it: reported once its data is in, its destage
    /// positioning from the end of the command overhead (after a destage in
    /// progress that it does not continue), the heads free at the destage's end.
    pub fn serve(&self, state: &mut DriveState, now: SimTime, lbn: u64, blocks: u32, is_write: bool,
                 pieces: &mut MappedPieces) -> Service {
        let ctl = &self.controller;
        let from = (state.head.cylinder, state.head.head);
        let busy = state.head.time.0;
        let end = lbn + blocks as u64;
        if is_write {
            let continues = state.head.next_lbn == Some(lbn);
            let destaging = ctl.fast_write && state.last_was_write && busy > now.0;
            let appends = destaging && continues && self.spec.controller.combine_seq_writes;
            let plan = ctl.write_plan(now.0, state.last_was_write, continues, blocks, (destaging && !appends).then_some(busy), appends);
            let start = plan.mech_from.max(busy);
            let a = self.media_access_mapped(from, start, Some(plan.data), lbn, blocks, true, pieces);
            let done = plan.done(a.media_end);
            *state = DriveState::after_command(a.cylinder, a.head, SimTime(a.media_end), end, true);
            return write_service(&plan, now.0, start, &a, done, ctl.fast_write);
        }
        let overhead_ns = ctl.overhead_ns[0][state.last_was_write as usize];
        let start = (now.0 + overhead_ns).max(busy);
        let a = self.media_access_mapped(from, start, None, lbn, blocks, false, pieces);
        let done = self.read_bus_done(&a, blocks, now.0 + overhead_ns + ctl.read_disconnect_ns[state.last_was_write as usize]);
        *state = DriveState::after_command(a.cylinder, a.head, SimTime(done), end, false);
        Service {
            overhead_ns,
            seek_ns: a.seek_ns,
            rotation_ns: a.rotation_ns,
            transfer_ns: a.media_end - a.media_start,
            bus_wait_ns: done - a.media_end,
            done: SimTime(done),
            media_start: SimTime(a.media_start),
            destage_wait_ns: start - (now.0 + overhead_ns),
            ..Default::default()
        }
    }
}

/// A write's service from its plan, positioning start `start`, media access
/// `a` and report time `done`. A write-back write's media access is its
/// destage, charged to it as destage figures, not as its service.
fn write_service(plan: &WritePlan, now: u64, start: u64, a: &MediaAccess, done: u64, write_back: bool) -> Service {
    let transfer_ns = a.media_end - a.media_start;
    if write_back {
        return Service {
            overhead_ns: plan.overhead_ns, destage_wait_ns: plan.wait_ns,
            bus_wait_ns: done - now - plan.overhead_ns - plan.wait_ns, done: SimTime(done), cache_hit: true,
            destage_seek_ns: a.seek_ns, destage_rotation_ns: a.rotation_ns, destage_transfer_ns: transfer_ns,
            ..Default::default()
        };
    }
    Service {
        overhead_ns: plan.overhead_ns, destage_wait_ns: start - plan.mech_from,
        seek_ns: a.seek_ns, rotation_ns: a.rotation_ns, transfer_ns,
        bus_wait_ns: done - a.media_end, done: SimTime(done), media_start: SimTime(a.media_start),
        ..Default::default()
    }
}

/// How far before a destage's (rounded) end a joining write's media write is
/// timed from, ns.
const JOIN_SLACK_NS: u64 = 16;

/// The write being destaged (write-back): its data ends at `end_lbn`, in
/// `segment`, `blocks` of them since the destage began (writes that joined
/// it included); the media write ends at `media_end` with the heads at `at`.
#[derive(Clone, Copy, Debug)]
struct Destage {
    segment: usize,
    end_lbn: u64,
    blocks: u64,
    media_end: u64,
    at: (u32, u32),
}

/// The simulated drive: a model, its mechanism and its buffer cache.
pub struct Drive {
    /// The drive's geometry and timing.
    pub model: Arc<DiskModel>,
    /// Where the heads are and when the mechanism is free (read-ahead aside).
    pub state: DriveState,
    /// Heads' position and time when the mechanism began the last command's media access.
    pub last_source: HeadState,
    cache: Cache,
    readahead: Option<ReadAhead>,
    /// The last range the drive mapped (its exact belief reuses it: `pieces_mut`).
    pieces: MappedPieces,
    /// The last write-back write's destage (in progress while `media_end` is ahead).
    destage: Option<Destage>,
    /// End of the last read served (the stream test of read-ahead mode 4).
    last_read_end: Option<u64>,
    /// Track of the last read miss's first sector (`same_track_read_ahead_blocks`).
    last_read_track: Option<(u32, u32)>,
    /// `[disk.noise]`: how this drive varies from its spec (None: it is its spec).
    noise: Option<Box<crate::disk::noisy::NoisyTruth>>,
}

impl Drive {
    /// An idle drive at cylinder 0, head 0, time 0, with an empty cache (none when the spec disables caching).
    pub fn new(model: Arc<DiskModel>) -> Drive {
        let c = &model.spec.controller;
        let cache = match c.caching_enabled {
            // The reference ignores `Use separate write segment` for the buffer; PDL's reading is the option.
            true if c.separate_write_segment && c.dedicated_write_segment => Cache::new(c.cache_segments, c.segment_size_blocks).with_write_segment(),
            true => Cache::new(c.cache_segments, c.segment_size_blocks),
            false => Cache::new(0, 0),
        };
        Drive { model, state: DriveState::default(), last_source: HeadState::default(), cache, readahead: None, pieces: MappedPieces::default(), destage: None, last_read_end: None, last_read_track: None, noise: None }
    }

    /// The drive varies from its spec as `noise` says (`[disk.noise]`), from `seed`'s random stream.
    pub fn set_noise(&mut self, noise: &crate::disk::noisy::NoiseConfig, seed: u64) {
        self.noise = Some(Box::new(crate::disk::noisy::NoisyTruth::new(noise, seed, self.model.mech.revolution_ns())));
    }

    /// The drive's own noise, if it has one.
    pub fn noise(&self) -> Option<&crate::disk::noisy::NoisyTruth> {
        self.noise.as_deref()
    }

    /// Move the heads to `cylinder` with nothing to transfer (SCAN's sweep to
    /// the edge): an empty seek once the mechanism is free.
    pub fn travel(&mut self, now: SimTime, cylinder: u32) {
        let ((from_cyl, head), free) = self.settle_readahead(now.0);
        let seek_ns = self.model.position_ns((from_cyl, head), (cylinder, head), Access::Onward { write: false }, 0);
        self.state.head = HeadState { cylinder, head, time: SimTime(free + seek_ns), ..self.state.head };
    }

    /// The drive's mapping of the last range it accessed: a belief that
    /// times the same request next maps it through this, once.
    pub(crate) fn pieces_mut(&mut self) -> &mut MappedPieces {
        &mut self.pieces
    }

    /// A request's track piece as `from` mapped it on arrival: used in place
    /// of mapping it again if `from` is the drive's own layout.
    pub(crate) fn seed_mapped(&mut self, from: &crate::disk::layout::Layout, lbn: u64, piece: crate::disk::layout::TrackPiece) {
        self.model.layout.seed_memo(from, lbn, piece, &mut self.pieces);
    }

    /// The buffer's segments (what a cache-aware scheduler in the firmware sees).
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// When the last write-back destage ends (its data on the media), if one was planned.
    pub fn destage_end(&self) -> Option<SimTime> {
        self.destage.map(|d| SimTime(d.media_end))
    }

    /// Serve a command that arrives at `now` (no other command in service).
    /// The bus phases of a SCSI drive come on top of the access: a command
    /// that went to the media disconnected from the bus and reselects the
    /// host before its data or status, and every command ends with the
    /// completion (status) overhead. A drive with noise (`set_noise`)
    /// varies from this as `disk::noisy` says.
    pub fn serve(&mut self, now: SimTime, lbn: u64, blocks: u32, is_write: bool) -> Service {
        match self.noise.take() {
            None => self.serve_exact(now, lbn, blocks, is_write),
            Some(mut noise) => {
                let s = noise.serve_resyncing(self, now, lbn, blocks, is_write);
                self.noise = Some(noise);
                s
            }
        }
    }

    /// `serve` exactly as the spec says, without the drive's noise.
    pub fn serve_exact(&mut self, now: SimTime, lbn: u64, blocks: u32, is_write: bool) -> Service {
        if is_write {
            // Only consecutive reads on one track look like locality to the prefetcher.
            self.last_read_track = None;
            return self.serve_write(&self.model.clone(), now.0, lbn, blocks);
        }
        let mut svc = self.serve_read(&self.model.clone(), now, lbn, blocks);
        self.state.head.next_lbn = Some(lbn + blocks as u64);
        // (A read miss's reselect is part of its data phase: `read_bus_done`.)
        let extra = self.model.controller.completion_ns[0];
        svc.done.0 += extra;
        svc.bus_wait_ns += extra;
        svc
    }

    /// A read, before its status phase: from the buffer if it can be, else
    /// with the mechanism once the read-ahead has stopped.
    fn serve_read(&mut self, model: &DiskModel, now: SimTime, lbn: u64, blocks: u32) -> Service {
        if !self.cache.enabled() {
            let mut s = self.state;
            s.head.time = s.head.time.max(now);
            self.last_source = s.head;
            let start = s.head.time;
            let svc = self.model.serve(&mut s, start, lbn, blocks, false, &mut self.pieces);
            self.state = s;
            return svc;
        }
        // The read-ahead brought up to now once: the buffer's answer and, on a miss, its stop use it.
        let progress = self.readahead_progress(now.0);
        // Stopping the read-ahead changes its segment alone: the others are looked up once.
        let (end, writes) = (lbn + blocks as u64, model.spec.controller.read_hits_on_write_data);
        let ra_segment = self.readahead.map(|ra| ra.segment);
        let others = self.cache.lookup_except(lbn, end, writes, ra_segment);
        let held = |cache: &Cache| Cache::longer(others, ra_segment.and_then(|i| cache.lookup_in(i, lbn, end, writes)));
        if let Some(svc) = self.serve_read_from_buffer(model, now, lbn, blocks, progress, held(&self.cache)) {
            return svc;
        }
        let (from, mech_free) = self.settle_readahead_from(now.0, progress);
        self.last_source = HeadState { cylinder: from.0, head: from.1, time: SimTime(mech_free), ..Default::default() };
        let cached = held(&self.cache).map_or(0, |(_, n)| n) as u32;
        self.serve_read_miss(model, now, lbn, blocks, from, mech_free, cached)
    }

    /// A read that needs the mechanism (a miss, or a partial hit whose rest
    /// the read-ahead is not reading): the heads are at `from`, free at `mech_free`.
    /// `cached`: the blocks of it the buffer holds from `lbn` on (`Cache::lookup_except`).
    fn serve_read_miss(&mut self, model: &DiskModel, now: SimTime, lbn: u64, blocks: u32, from: (u32, u32), mech_free: u64, cached: u32) -> Service {
        let (ctl, spec) = (&model.controller, &model.spec.controller);
        let end = lbn + blocks as u64;
        let last_w = self.state.last_was_write as usize;
        let bus_total = ctl.data_phase_ns(blocks, false);
        // The cached first blocks of a partial hit go out on the bus at once
        // (DiskSim: Read hit overhead + data preparation) while the rest is
        // read; the mechanism may start after the miss overhead either way.
        let miss_ns = ctl.overhead_ns[0][last_w];
        let overhead_ns = if cached > 0 { ctl.hit_overhead_ns[0][last_w] } else { miss_ns };
        if cached == blocks {
            // The read-ahead's minimum, finished before it stopped, brought it all in.
            self.state.last_was_write = false;
            self.last_read_end = Some(end);
            let done = (now.0 + overhead_ns + bus_total).max(mech_free + ctl.bus_sector_ns);
            self.drop_sent_request(lbn, end);
            return Service { overhead_ns, bus_wait_ns: bus_total, done: SimTime(done), cache_hit: true, ..Default::default() };
        }
        let start = (now.0 + miss_ns).max(mech_free);
        let first = lbn + cached as u64;
        let a = model.media_access_mapped(from, start, None, first, blocks - cached, false, &mut self.pieces);
        // A partial hit stays connected and sends each further block as it is
        // read (no disconnect, so no water mark and no reselect); a miss
        // reconnects once the water mark's share is in.
        let disconnected_at = now.0 + miss_ns + ctl.read_disconnect_ns[last_w];
        let done = if cached > 0 { a.sent_by } else { model.read_bus_done(&a, blocks, disconnected_at) }.max(now.0 + overhead_ns + bus_total);
        // The segment: this request, plus the sectors that passed while waiting for it.
        let mut lo = lbn;
        // The LBNs of the request's first track, once looked up (the read-ahead's track is often the same).
        let mut own_track = None;
        if spec.read_any_free_blocks && cached == 0 {
            // (The piece knows its track's LBNs: `track_lbns` of its track.)
            let (track_first_lbn, track_blocks) = (self.pieces[0].track_first_lbn, self.pieces[0].track_blocks as u64);
            own_track = Some((track_first_lbn, track_blocks));
            if track_blocks > 0 {
                let spt = self.pieces[0].sectors_per_track;
                let passed = model.mech.sectors_in(a.rotation_ns, spt);
                let room = self.cache.segment_blocks.saturating_sub(blocks as u64);
                lo = lbn - passed.min(lbn - track_first_lbn).min(room);
            }
        }
        let segment = self.cache.allocate(lo, end, false);
        // Drives that read ahead only for a detected stream do so once a read continues the last one.
        // A second read on a track may trigger a read-ahead that does not yield (off unless the spec sets it).
        let track = (self.pieces[0].cylinder, self.pieces[0].head);
        let same_track = spec.same_track_read_ahead_blocks > 0 && self.last_read_track.replace(track) == Some(track);
        let max_ra = if same_track || self.reads_ahead_after(lbn) { self.readahead_blocks(lbn, end, lo, own_track) } else { 0 };
        let min_ra = if same_track { spec.same_track_read_ahead_blocks.max(spec.read_ahead_min_blocks) } else { spec.read_ahead_min_blocks };
        self.last_read_end = Some(end);
        // The read-ahead's first piece is often the rest of the read's last track, laid out without mapping.
        let first = self.pieces.last().filter(|_| max_ra > 0).and_then(|last| model.layout.piece_after(last, end, max_ra));
        self.readahead = (max_ra > 0).then_some(ReadAhead {
            segment,
            from: (a.cylinder, a.head),
            start: a.media_end,
            lbn: end,
            limit: max_ra,
            min: min_ra.min(max_ra),
            next: None,
            first,
        });
        self.drop_sent_request(lbn, end);
        self.state = DriveState { head: HeadState { cylinder: a.cylinder, head: a.head, time: SimTime(a.media_end), ..Default::default() }, last_was_write: false };
        Service {
            overhead_ns, seek_ns: a.seek_ns, rotation_ns: a.rotation_ns, transfer_ns: a.media_end - a.media_start,
            bus_wait_ns: done - a.media_end, done: SimTime(done), cache_hit: cached > 0, media_start: SimTime(a.media_start),
            destage_wait_ns: start - (now.0 + miss_ns), ..Default::default()
        }
    }

    /// DiskSim's `Read-ahead over requested = -1`: once a read's data has
    /// been sent its own blocks leave the segment (the segment now starts at
    /// the request's end), so a re-read misses while read-ahead data still hits.
    fn drop_sent_request(&mut self, lbn: u64, end: u64) {
        if !self.model.spec.controller.read_ahead_drops_request {
            return;
        }
        self.cache.drop_sent(lbn, end);
    }

    /// Serve a write (the whole write path). Write-through: command, data
    /// while the heads position, media write, status. Write-back (DiskSim
    /// §2.1, §3.5): reported once its data is in; its media write (the
    /// destage) positions from the end of the command overhead, overlapping
    /// the data phase, and writes each sector as its data arrives. A write
    /// arriving during a destage waits for its end, unless it starts where
    /// the destage's data ends (`Combine seq writes`) and joins it (once the
    /// media write has made room for it in the segment). One
    /// destage at a time: with no write prebuffering, a write needs the
    /// mechanism, so `Maximum number of write segments` never binds.
    fn serve_write(&mut self, model: &DiskModel, now: u64, lbn: u64, blocks: u32) -> Service {
        let (ctl, spec) = (&model.controller, &model.spec.controller);
        let end = lbn + blocks as u64;
        // (Only while the destage is the mechanism's last work: a SCAN sweep
        // or idle background work after it has moved the heads on.)
        let destaging = self.destage.filter(|d| ctl.fast_write && d.media_end > now && d.media_end == self.state.head.time.0);
        // It joins if it fits the segment beside the destage's data still to
        // be written (counted at the media rate from the destage's end).
        let unwritten = |d: &Destage| {
            let sector_ns = model.mech.sector_ns(model.layout.sectors_per_track(d.at.0, d.at.1)).max(1);
            ((d.media_end - now) / sector_ns + 1).min(d.blocks)
        };
        // A write that continues the destage but does not fit yet joins it
        // once the media write has freed room for it: the drive disconnects
        // and takes the data when the space is there, and the media write
        // goes on without a break, as a write-back drive streams a
        // sequential writer at its media rate. (It used to wait for the
        // destage's end and start a new media write a sector late: a
        // revolution lost every segment's worth, half the media rate.)
        let continues_destage = destaging.filter(|d| spec.combine_seq_writes && d.end_lbn == lbn && (blocks as u64) < self.cache.segment_blocks);
        let appends = continues_destage;
        let room_at = continues_destage.filter(|d| unwritten(d) + blocks as u64 > self.cache.segment_blocks).map(|d| {
            let sector_ns = model.mech.sector_ns(model.layout.sectors_per_track(d.at.0, d.at.1)).max(1);
            d.media_end.saturating_sub((self.cache.segment_blocks - blocks as u64 - 1) * sector_ns)
        });
        let (from, mech_free) = match appends {
            // The destage's end is rounded up by a ns or so per track piece;
            // going on a few ns before it keeps the continuation on the very
            // next sector (sectors are microseconds apart) instead of letting
            // the rounding, summed over joins, cost a revolution.
            Some(d) => (d.at, d.media_end.saturating_sub(JOIN_SLACK_NS)),
            None => self.settle_readahead(now),
        };
        self.last_source = HeadState { cylinder: from.0, head: from.1, time: SimTime(mech_free), ..Default::default() };
        let continues = self.state.head.next_lbn == Some(lbn);
        let busy_until = destaging.filter(|_| appends.is_none()).map(|d| d.media_end).or(room_at);
        let plan = ctl.write_plan(now, self.state.last_was_write, continues, blocks, busy_until, appends.is_some());
        let start = plan.mech_from.max(mech_free);
        let a = model.media_access_mapped(from, start, Some(plan.data), lbn, blocks, true, &mut self.pieces);
        let done = plan.done(a.media_end);
        let segment = match appends {
            Some(d) => {
                self.cache.extend(d.segment, end);
                d.segment
            }
            None if self.cache.enabled() => self.cache.allocate(lbn, end, true),
            None => 0,
        };
        if self.cache.enabled() {
            self.cache.invalidate(lbn, end, Some(segment));
            self.cache.touch(segment);
        }
        self.destage = ctl.fast_write.then_some(Destage {
            segment, end_lbn: end, blocks: appends.map_or(0, |d| d.blocks) + blocks as u64, media_end: a.media_end, at: (a.cylinder, a.head),
        });
        self.state = DriveState {
            head: HeadState { cylinder: a.cylinder, head: a.head, time: SimTime(a.media_end), next_lbn: Some(end), ..Default::default() },
            last_was_write: true,
        };
        write_service(&plan, now, start, &a, done, ctl.fast_write)
    }

    /// A read wholly in the buffer. During a destage it cannot use the bus
    /// at once (DiskSim §3.5): it takes the miss path (command, disconnect),
    /// waits for the destage to end and reselects for its data.
    fn read_hit(&mut self, now: u64, bus_ns: u64) -> Service {
        let ctl = &self.model.controller;
        let last_w = self.state.last_was_write as usize;
        self.state.last_was_write = false;
        let Some(d) = self.destage.filter(|d| d.media_end > now) else {
            let overhead_ns = ctl.hit_overhead_ns[0][last_w];
            return Service { overhead_ns, bus_wait_ns: bus_ns, done: SimTime(now + overhead_ns + bus_ns), cache_hit: true, ..Default::default() };
        };
        let overhead_ns = ctl.overhead_ns[0][last_w];
        let back = (now + overhead_ns + ctl.read_disconnect_ns[last_w]).max(d.media_end);
        let bus_wait_ns = ctl.reselect_ns[0] + bus_ns;
        Service { overhead_ns, destage_wait_ns: back - now - overhead_ns, bus_wait_ns, done: SimTime(back + bus_wait_ns), cache_hit: true, ..Default::default() }
    }

    /// Serve a read from the buffer without the mechanism: a hit an external
    /// scheduler did not expect (the firmware had prefetched the blocks).
    pub fn serve_from_buffer(&mut self, now: SimTime, blocks: u32) -> Service {
        let ctl = &self.model.controller;
        let overhead_ns = ctl.hit_overhead_ns[0][self.state.last_was_write as usize];
        let bus = ctl.data_phase_ns(blocks, false);
        self.state.last_was_write = false;
        Service { overhead_ns, bus_wait_ns: bus, done: SimTime(now.0 + overhead_ns + bus), cache_hit: true, ..Default::default() }
    }

    /// Move the last command's media access by `delta_ns` (the noise of an
    /// external view: a seek's variation, a revolution missed or gained).
    pub fn shift_last(&mut self, delta_ns: i64) {
        self.state.head.time = SimTime(self.state.head.time.0.saturating_add_signed(delta_ns));
        if let Some(d) = &mut self.destage {
            d.media_end = d.media_end.saturating_add_signed(delta_ns);
        }
        if let Some(ra) = &mut self.readahead {
            *ra = ReadAhead { start: ra.start.saturating_add_signed(delta_ns), next: None, ..*ra };
        }
    }

    /// A read served without new positioning, if it can be: wholly in the
    /// buffer (the read-ahead counted as far as it got by `now`), or starting
    /// in data a still-running read-ahead has buffered or is reading.
    /// `progress`: the read-ahead brought up to `now` (`readahead_progress`).
    fn serve_read_from_buffer(&mut self, model: &DiskModel, now: SimTime, lbn: u64, blocks: u32,
                              progress: Option<((u32, u32), Option<u64>)>, held: Option<(usize, u64)>) -> Option<Service> {
        let (ctl, spec) = (&model.controller, &model.spec.controller);
        let end = lbn + blocks as u64;
        let last_w = self.state.last_was_write as usize;
        let bus_total = ctl.data_phase_ns(blocks, false);
        let running = progress.is_some_and(|(_, finished)| finished.is_none());
        if let Some((i, n)) = held {
            if n == blocks as u64 {
                self.cache.touch(i);
                let seg_lo = self.cache.segment(i).map_or(lbn, |s| s.lo);
                let want = end + self.readahead_blocks(lbn, end, seg_lo, None) as u64;
                if spec.continuous_read > 0 {
                    match self.readahead {
                        // A hit extends a read-ahead still running on its segment.
                        Some(ra) if running && ra.segment == i => {
                            let ra = self.readahead.as_mut().expect("checked");
                            let limit = ra.limit.max(want.saturating_sub(ra.lbn) as u32);
                            if limit != ra.limit {
                                *ra = ReadAhead { limit, next: None, first: None, ..*ra };
                            }
                        }
                        // A stopped one is restarted only by a hit that finds
                        // the mechanism idle, and only if the drive does that
                        // (`Read-ahead on idle hit`): from the segment's end,
                        // with its own seek and rotation.
                        _ if !running && spec.read_ahead_on_idle_hit => {
                            let (from, free) = match progress {
                                Some((at, finished)) => (at, finished.unwrap_or(now.0)),
                                None => ((self.state.head.cylinder, self.state.head.head), self.state.head.time.0),
                            };
                            let hi = self.cache.segment(i).map_or(end, |s| s.hi);
                            if free <= now.0 && want > hi && hi < model.layout.capacity() {
                                let limit = (want - hi).min(model.layout.capacity() - hi) as u32;
                                let start = now.0 + ctl.overhead_ns[0][last_w];
                                self.readahead = Some(ReadAhead { segment: i, from, start, lbn: hi, limit, min: 0, next: None, first: None });
                            }
                        }
                        _ => {}
                    }
                }
                self.last_read_end = Some(end);
                self.drop_sent_request(lbn, end);
                return Some(self.read_hit(now.0, bus_total));
            }
        }
        if running {
            return self.serve_from_readahead(model, now, lbn, blocks);
        }
        None
    }

}
