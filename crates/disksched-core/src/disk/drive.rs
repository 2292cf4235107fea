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
use crate::disk::layout::{MappedPieces, TrackPiece};
use crate::disk::mechanics::sector_phase;
use crate::disk::spec::ReadAheadWhen;
use crate::disk::timing::{Access, MediaAccess};
use crate::disk::{DiskModel, HeadState};
use crate::time::{SimDuration, SimTime};
use std::sync::Arc;

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

/// Controller figures converted to ns once.
#[derive(Clone, Debug)]
pub struct ControllerTiming {
    /// Miss overheads: [this is a write][last was a write].
    pub overhead_ns: [[u64; 2]; 2],
    /// Cache-hit overheads, same indices.
    pub hit_overhead_ns: [[u64; 2]; 2],
    /// Bus transfer time per sector of a read.
    pub bus_sector_ns: u64,
    /// Bus transfer time per sector of a write (the read figure when the spec gives none).
    pub bus_write_sector_ns: u64,
    /// Before each data phase on the bus (DiskSim's `Data preparation overhead`).
    pub data_prep_ns: u64,
    /// Status phase at the end of every command: [read, write].
    pub completion_ns: [u64; 2],
    /// Reconnecting to the host after a disconnected media access (DiskSim's
    /// `First reselect overhead`): [read, write].
    pub reselect_ns: [u64; 2],
    /// Bus time of the disconnect after a write's data (`Write disconnect overhead`).
    pub write_disconnect_ns: u64,
    /// Bus time of a read's disconnect after its command (`Read disconnect
    /// afterread / afterwrite`): [last was a write].
    pub read_disconnect_ns: [u64; 2],
    /// Write-back (`Fast write level` 1 or 2 with caching): writes are
    /// reported once their data is in and destaged afterwards.
    pub fast_write: bool,
    /// A read reconnects to send its data once this many of its blocks are in
    /// the buffer: DiskSim's high water mark, a fraction of the request (or
    /// of a segment, if smaller: `Set watermark by reqsize`) or of a segment.
    read_water: f64,
    /// `Set watermark by reqsize` is off: the mark is a fraction of a segment.
    water_of_segment: bool,
    /// Segment size, blocks (0: no buffer).
    segment_blocks: u32,
    /// Least positioning time of a write, unless it appends to a media
    /// write in progress (DiskSim's `Minimum seek delay`, §2.6).
    pub min_seek_ns: u64,
    /// DiskSim's extra write disconnect path (PDL's rule, §2.4), on drives
    /// with `Extra write disconnect` and a dedicated write segment.
    extradisc: Option<Extradisc>,
    /// `Extra write disconnect` also holds every write's first sector until
    /// 10 (or 15) blocks are buffered (§2.5).
    write_threshold: bool,
}

/// The extra write disconnect's figures, ns (DiskSim's `Extradisc *`).
#[derive(Clone, Copy, Debug)]
struct Extradisc {
    command_ns: u64,
    disconnect_ns: u64,
    inter_disconnect_ns: u64,
    second_disconnect_ns: u64,
    seek_delta_ns: u64,
    other_reselect_ns: u64,
}

impl ControllerTiming {
    /// Convert the controller spec's ms figures to ns.
    pub fn new(c: &crate::disk::spec::ControllerSpec) -> ControllerTiming {
        let ms = |v: f64| SimDuration::from_ms(v * c.overhead_time_scale).ns();
        ControllerTiming {
            overhead_ns: [
                [ms(c.read_overhead_after_read_ms), ms(c.read_overhead_after_write_ms)],
                [ms(c.write_overhead_after_read_ms), ms(c.write_overhead_after_write_ms)],
            ],
            hit_overhead_ns: [
                [ms(c.read_hit_overhead_after_read_ms), ms(c.read_hit_overhead_after_write_ms)],
                [ms(c.write_hit_overhead_after_read_ms), ms(c.write_hit_overhead_after_write_ms)],
            ],
            // Transfer times are not processing overheads: DiskSim's time
            // scale ("all processing overhead times", manual §disk) leaves them.
            bus_sector_ns: SimDuration::from_ms(c.bus_sector_ms).ns(),
            bus_write_sector_ns: SimDuration::from_ms(c.bus_write_sector_ms.unwrap_or(c.bus_sector_ms)).ns(),
            data_prep_ns: ms(c.data_preparation_overhead_ms),
            completion_ns: [ms(c.read_completion_overhead_ms), ms(c.write_completion_overhead_ms)],
            reselect_ns: [ms(c.first_reselect_overhead_ms); 2],
            write_disconnect_ns: ms(c.write_disconnect_overhead_ms),
            read_disconnect_ns: [ms(c.read_disconnect_after_read_ms), ms(c.read_disconnect_after_write_ms)],
            fast_write: c.fast_write_level > 0 && c.caching_enabled && c.cache_segments > 0 && c.segment_size_blocks > 0,
            read_water: c.read_water_mark,
            water_of_segment: !c.water_mark_by_request,
            segment_blocks: c.segment_size_blocks,
            min_seek_ns: ms(c.minimum_seek_delay_ms),
            // PDL takes the path only for a write into the most recently used
            // segment after a write there; without a dedicated write segment
            // a write takes the least recently used one, so (almost) never.
            extradisc: (c.extra_write_disconnect && c.separate_write_segment).then(|| Extradisc {
                command_ns: ms(c.extradisc_command_overhead_ms),
                disconnect_ns: ms(c.extradisc_disconnect_overhead_ms),
                inter_disconnect_ns: ms(c.extradisc_inter_disconnect_delay_ms),
                second_disconnect_ns: ms(c.extradisc_second_disconnect_overhead_ms),
                seek_delta_ns: ms(c.extradisc_seek_delta_ms),
                other_reselect_ns: ms(c.other_reselect_overhead_ms),
            }),
            write_threshold: c.extra_write_disconnect,
        }
    }

    /// Command overhead before a write's positioning may start, on the ordinary path
    /// (write-back drives use the write *hit* figures for every write, §2.2).
    pub fn write_overhead_ns(&self, last_was_write: bool) -> u64 {
        let table = if self.fast_write { &self.hit_overhead_ns } else { &self.overhead_ns };
        table[1][last_was_write as usize]
    }

    /// Command overhead before the mechanism may start on the ordinary
    /// path: a read's miss overhead, a write's `write_overhead_ns`.
    pub fn command_overhead_ns(&self, is_write: bool, last_was_write: bool) -> u64 {
        if is_write { self.write_overhead_ns(last_was_write) } else { self.overhead_ns[0][last_was_write as usize] }
    }

    /// Blocks of an `n`-block write that must be in the buffer before its
    /// first sector is written: 1, or on `Extra write disconnect` drives
    /// min(n, 10) below 45 blocks and 15 from 45 on (DiskSim, §2.5).
    pub fn write_first_blocks(&self, n: u32) -> u32 {
        match (self.write_threshold, n) {
            (false, _) => 1,
            (true, n) if n < 45 => n.clamp(1, 10),
            _ => 15,
        }
    }

    /// How a write of `blocks` arriving at `now` is timed on the bus.
    /// `last_was_write` / `continues`: the last command reported was a write /
    /// ended where this one starts. `busy_until`: a write-back write that
    /// arrived during a destage it does not join waits for its end (the
    /// mechanism cannot be shared). `appends`: it joins the destage in progress.
    pub fn write_plan(&self, now: u64, last_was_write: bool, continues: bool, blocks: u32,
                      busy_until: Option<u64>, appends: bool) -> WritePlan {
        let last = last_was_write as usize;
        let bus_ns = blocks as u64 * self.bus_write_sector_ns;
        let first_blocks = self.write_first_blocks(blocks);
        let data = |data_from| WriteData { data_from, appends, first_blocks };
        if self.fast_write {
            let overhead_ns = self.hit_overhead_ns[1][last];
            let cmd_end = now + overhead_ns;
            // Waiting for a destage: disconnect, then reselect once it has ended.
            let (back, reselect_ns) = busy_until.map_or((cmd_end, 0), |end| ((cmd_end + self.write_disconnect_ns).max(end), self.reselect_ns[1]));
            let data_from = back + reselect_ns + self.data_prep_ns;
            return WritePlan { overhead_ns, mech_from: cmd_end, data: data(data_from), data_end: data_from + bus_ns,
                               wait_ns: back - cmd_end, status: None, completion_ns: self.completion_ns[1] };
        }
        if let Some(x) = self.extradisc.filter(|_| last_was_write && !continues) {
            // Command and disconnect without data; the heads may go after the
            // command plus the seek delta; the data comes after the delay and a
            // reselect; the status after the media write, by `Other reselect`.
            let data_from = now + x.command_ns + x.disconnect_ns + x.inter_disconnect_ns + self.reselect_ns[1] + self.data_prep_ns;
            return WritePlan { overhead_ns: x.command_ns + x.seek_delta_ns, mech_from: now + x.command_ns + x.seek_delta_ns,
                               data: data(data_from), data_end: data_from + bus_ns, wait_ns: 0,
                               status: Some((x.second_disconnect_ns, x.other_reselect_ns)), completion_ns: self.completion_ns[1] };
        }
        let overhead_ns = self.overhead_ns[1][last];
        let data_from = now + overhead_ns + self.data_prep_ns;
        WritePlan { overhead_ns, mech_from: now + overhead_ns, data: data(data_from), data_end: data_from + bus_ns, wait_ns: 0,
                    status: Some((self.write_disconnect_ns, self.reselect_ns[1])), completion_ns: self.completion_ns[1] }
    }

    /// One data phase of `blocks` on the bus: its preparation and the transfer.
    pub fn data_phase_ns(&self, blocks: u32, is_write: bool) -> u64 {
        self.data_prep_ns + blocks as u64 * if is_write { self.bus_write_sector_ns } else { self.bus_sector_ns }
    }


    /// Blocks of a `blocks`-block read that must be buffered before its data
    /// goes out (DiskSim, semantics reference §3.4): by request size, the
    /// mark's share of the request or of a segment, whichever is smaller,
    /// rounded down; otherwise its share of a segment, rounded up; at least
    /// one block and at most the request.
    pub(crate) fn read_mark_blocks(&self, blocks: u32) -> u32 {
        let seg = if self.segment_blocks > 0 { self.segment_blocks } else { blocks };
        let mark = if self.water_of_segment {
            (self.read_water * seg as f64).ceil()
        } else {
            (self.read_water * blocks.min(seg) as f64).floor()
        };
        (mark as u32).clamp(1, blocks.max(1))
    }
}

/// A write's data on its way in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteData {
    /// When its first block starts crossing the bus.
    pub data_from: u64,
    /// It appends to a media write in progress (no minimum seek delay).
    pub appends: bool,
    /// Blocks buffered before its first sector may be written.
    pub first_blocks: u32,
}

/// A write's bus phases, absolute ns (see `ControllerTiming::write_plan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WritePlan {
    /// Command processing before the heads may move (`mech_from - now`).
    pub overhead_ns: u64,
    /// Earliest start of the write's positioning.
    pub mech_from: u64,
    /// How the write's data arrives over the bus.
    pub data: WriteData,
    /// Its last block has crossed the bus.
    pub data_end: u64,
    /// Held back by a destage before its data could come in.
    pub wait_ns: u64,
    /// Reported after the media write: (disconnect after the data, status
    /// reselect); None: reported once the data is in (write-back).
    status: Option<(u64, u64)>,
    completion_ns: u64,
}

impl WritePlan {
    /// When the write is reported, its media write ending at `media_end`.
    pub fn done(&self, media_end: u64) -> u64 {
        match self.status {
            None => self.data_end + self.completion_ns,
            Some((disconnect_ns, reselect_ns)) => media_end.max(self.data_end + disconnect_ns) + reselect_ns + self.completion_ns,
        }
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
            *state = DriveState { head: HeadState { cylinder: a.cylinder, head: a.head, time: SimTime(a.media_end), next_lbn: Some(end), ..Default::default() }, last_was_write: true };
            return write_service(&plan, now.0, start, &a, done, ctl.fast_write);
        }
        let overhead_ns = ctl.overhead_ns[0][state.last_was_write as usize];
        let start = (now.0 + overhead_ns).max(busy);
        let a = self.media_access_mapped(from, start, None, lbn, blocks, false, pieces);
        let done = self.read_bus_done(&a, blocks, now.0 + overhead_ns + ctl.read_disconnect_ns[state.last_was_write as usize]);
        let head = HeadState { cylinder: a.cylinder, head: a.head, time: SimTime(done), next_lbn: Some(end), ..Default::default() };
        *state = DriveState { head, last_was_write: false };
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

/// Read-ahead in progress after a read: blocks from `lbn` on, read from
/// `start` with the heads at `from`, until `limit` blocks or the next
/// command that needs the mechanism. `from`/`start`/`lbn` are a checkpoint
/// at a track-piece boundary: `readahead_progress` moves it forward as time
/// passes, so no piece is walked twice (a long stream stays linear).
#[derive(Clone, Copy, Debug)]
struct ReadAhead {
    segment: usize,
    from: (u32, u32),
    start: u64,
    lbn: u64,
    /// Blocks still to read from `lbn`.
    limit: u32,
    /// Blocks from `lbn` it reads before a command may stop it.
    min: u32,
    /// The next piece it reads and when its first sector comes under the
    /// head, once laid out (a stream asks at every command; None after any
    /// change to `from`, `start`, `lbn` or `limit`).
    next: Option<(TrackPiece, u64)>,
    /// The piece at `lbn`, when the read that started it laid it out in
    /// advance (its track's rest): `next` without mapping (None after any
    /// change to `lbn` or `limit`).
    first: Option<TrackPiece>,
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

    /// Whether a read miss of `lbn` starts a read-ahead: after every read, or
    /// (`read_ahead_when = "stream"`) only when it continues the last read.
    fn reads_ahead_after(&self, lbn: u64) -> bool {
        match self.model.spec.controller.read_ahead_when {
            ReadAheadWhen::EveryRead => true,
            ReadAheadWhen::Stream => self.last_read_end == Some(lbn),
        }
    }

    /// DiskSim's `Read-ahead over requested = -1`: once a read's data has
    /// been sent its own blocks leave the segment (the segment now starts at
    /// the request's end), so a re-read misses while read-ahead data still hits.
    fn drop_sent_request(&mut self, lbn: u64, end: u64) {
        if !self.model.spec.controller.read_ahead_drops_request {
            return;
        }
        for s in self.cache.segments.iter_mut().flatten() {
            if !s.write && s.lo < end && lbn < s.hi && s.hi >= end {
                s.lo = s.lo.max(end);
            }
        }
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

    /// How many blocks the buffer reads ahead after a read of [lbn, end):
    /// DiskSim's `Buffer continuous read` modes: 1 to the end of the track
    /// the heads are on after the request (the one holding the block after
    /// it, so a read ending at a track end reads the next track), 2 of its
    /// cylinder, 3 up to the limit, 4 to the end of the following
    /// track
    /// when the segment (from `seg_lo`) already reaches back before the track
    /// holding the block after the request (else as 1); 0 the maximum
    /// read-ahead flat. Modes 1-3 stop at DiskSim's limit: the request's end
    /// + Maximum read-ahead, or with no maximum a segment's worth from the
    /// request's start (its data kept) or end (`read_ahead_over_requested`).
    /// The segment's window slides, so a request as large as the segment
    /// still reads ahead, up to a segment beyond its end; then at least the minimum.
    /// `known`: the LBNs of a track the request touched, if looked up already.
    fn readahead_blocks(&self, lbn: u64, end: u64, seg_lo: u64, known: Option<(u64, u64)>) -> u32 {
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
                let seg_lo = self.cache.segments[i].map_or(lbn, |s| s.lo);
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
                            let hi = self.cache.segments[i].map_or(end, |s| s.hi);
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

    /// A read that starts inside the data the running read-ahead has
    /// buffered, or exactly where it is reading, joins it instead of
    /// stopping it (stopping would leave the heads just past the next
    /// sector: a lost revolution per request of a sequential stream). Its
    /// cached blocks go out at once, the rest as the heads read them, and
    /// the read-ahead then goes on from the request's end.
    fn serve_from_readahead(&mut self, model: &DiskModel, now: SimTime, lbn: u64, blocks: u32) -> Option<Service> {
        let ra = self.readahead?;
        let end = lbn + blocks as u64;
        let seg = self.cache.segments[ra.segment]?;
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
        let max_ra = self.readahead_blocks(lbn, end, self.cache.segments[ra.segment].map_or(lbn, |s| s.lo), None);
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
    fn readahead_progress(&mut self, t: u64) -> Option<((u32, u32), Option<u64>)> {
        let mut ra = self.readahead?;
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
            ra = ReadAhead { from: at, start: tm + piece_ns, lbn: ra.lbn + p.blocks as u64, limit: ra.limit - p.blocks,
                min: ra.min.saturating_sub(p.blocks), next: None, first: None, ..ra };
        }
        self.readahead = Some(ra);
        let (at, got, finished) = match out {
            Some((at, got)) => (at, got, None),
            None => (ra.from, 0, Some(ra.start)),
        };
        self.cache.extend(ra.segment, ra.lbn + got as u64);
        Some((at, finished))
    }

    /// Stop the read-ahead (after its minimum) for a command that needs the
    /// mechanism at `now`: returns where the heads are and when they are free.
    fn settle_readahead(&mut self, now: u64) -> ((u32, u32), u64) {
        self.settle_readahead_from(now, None)
    }

    /// `settle_readahead`, with the read-ahead already brought up to `now`
    /// if `progress` says so (`readahead_progress(now)`'s answer: bringing
    /// it there again would change nothing and answer the same).
    fn settle_readahead_from(&mut self, now: u64, progress: Option<((u32, u32), Option<u64>)>) -> ((u32, u32), u64) {
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
