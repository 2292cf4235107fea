//! The drive's controller in time: its command overheads, bus phases and the
//! plan of a write's data on its way in, converted from the spec to ns once.

use crate::disk::spec::ControllerSpec;
use crate::time::SimDuration;

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
    pub fn new(c: &ControllerSpec) -> ControllerTiming {
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
            (self.read_water * seg as f64).ceil() as u32
        } else {
            // (`as` truncates: for a share, never negative, that is rounding down, without libm's `floor`.)
            (self.read_water * blocks.min(seg) as f64) as u32
        };
        mark.clamp(1, blocks.max(1))
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
