//! The simulated drive: the truth that requests are timed against.
//!
//! Service of one command: controller overhead, then the heads move to the
//! first track piece (seek or head switch, plus write settle), wait for the
//! first sector, and transfer every piece in turn (each further piece is a head
//! switch or single-cylinder seek and the rotational wait that the skews
//! leave). Bus and media overlap: read data goes out on the bus as soon as
//! the first sector is in the buffer; write data comes in while the heads seek,
//! and the media write starts once it is all buffered.

use crate::disk::layout::TrackPiece;
use crate::disk::mechanics::sector_phase;
use crate::disk::{DiskModel, HeadState};
use crate::time::{SimDuration, SimTime};
use std::sync::Arc;

/// How one command was served, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Service {
    pub overhead_ns: u64,
    pub seek_ns: u64,
    pub rotation_ns: u64,
    /// Media transfer from the first sector to the last, including track switches.
    pub transfer_ns: u64,
    /// Time spent after the media finished, waiting for the bus.
    pub bus_wait_ns: u64,
    /// When the command completes and the mechanism is free.
    pub done: SimTime,
}

/// The drive's mutable state between commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriveState {
    pub head: HeadState,
    pub last_was_write: bool,
}

/// Controller figures converted to ns once.
#[derive(Clone, Debug)]
pub struct ControllerTiming {
    overhead_ns: [[u64; 2]; 2], // [this is a write][last was a write]
    bus_sector_ns: u64,
}

impl ControllerTiming {
    pub fn new(c: &crate::disk::spec::ControllerSpec) -> ControllerTiming {
        let ms = |v: f64| SimDuration::from_ms(v).ns();
        ControllerTiming {
            overhead_ns: [
                [ms(c.read_overhead_after_read_ms), ms(c.read_overhead_after_write_ms)],
                [ms(c.write_overhead_after_read_ms), ms(c.write_overhead_after_write_ms)],
            ],
            bus_sector_ns: ms(c.bus_sector_ms),
        }
    }
}

impl DiskModel {
    /// Time one command starting at `now` from `state`, and advance `state`.
    /// The drive (truth) and predictors (belief) both call this, each with its own model.
    pub fn serve(&self, state: &mut DriveState, now: SimTime, lbn: u64, blocks: u32, is_write: bool,
                 pieces: &mut Vec<TrackPiece>) -> Service {
        let m = &self.mech;
        let ctl = &self.controller;
        self.layout.pieces(lbn, blocks, pieces);
        let overhead_ns = ctl.overhead_ns[is_write as usize][state.last_was_write as usize];
        let bus_total_ns = ctl.bus_sector_ns * blocks as u64;
        let start = now.0 + overhead_ns;
        let head = state.head;

        let first = pieces[0];
        let seek_ns = m.reposition_ns(head.cylinder, head.head, first.cylinder, first.head, is_write);
        // Writes cannot reach the media before their data is in the buffer.
        let ready = if is_write { (start + seek_ns).max(start + bus_total_ns) } else { start + seek_ns };
        let first_phase = sector_phase(first.first_sector, first.sectors_per_track);
        let media_start = ready + m.rotate_ns(m.phase_at(SimTime(ready)), first_phase);
        let rotation_ns = media_start - (start + seek_ns);

        let mut t = media_start;
        let (mut cyl, mut hd) = (first.cylinder, first.head);
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 {
                t += m.reposition_ns(cyl, hd, p.cylinder, p.head, is_write);
                t += m.rotate_ns(m.phase_at(SimTime(t)), sector_phase(p.first_sector, p.sectors_per_track));
                cyl = p.cylinder;
                hd = p.head;
            }
            t += m.sectors_ns(p.span_sectors as u64, p.sectors_per_track);
        }
        let media_end = t;
        let done = if is_write {
            media_end
        } else {
            let first_sector_ns = m.sectors_ns(1, first.sectors_per_track);
            (media_end + ctl.bus_sector_ns).max(media_start + first_sector_ns + bus_total_ns)
        };
        *state = DriveState { head: HeadState { cylinder: cyl, head: hd, time: SimTime(done) }, last_was_write: is_write };
        Service {
            overhead_ns,
            seek_ns,
            rotation_ns,
            transfer_ns: media_end - media_start,
            bus_wait_ns: done - media_end,
            done: SimTime(done),
        }
    }
}

/// The simulated drive: a model plus its current state.
pub struct Drive {
    pub model: Arc<DiskModel>,
    pub state: DriveState,
    pieces: Vec<TrackPiece>,
}

impl Drive {
    pub fn new(model: Arc<DiskModel>) -> Drive {
        Drive { model, state: DriveState::default(), pieces: Vec::with_capacity(4) }
    }

    /// Serve a command that starts at `now` (the mechanism must be free).
    pub fn serve(&mut self, now: SimTime, lbn: u64, blocks: u32, is_write: bool) -> Service {
        self.model.serve(&mut self.state, now, lbn, blocks, is_write, &mut self.pieces)
    }
}
