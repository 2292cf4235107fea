//! Several disks behind one controller: how an array address maps onto them.
//!
//! `concat` lays the disks end to end; `stripe` (RAID-0) deals the address
//! space out in stripe units, disk 0 first, row by row. A request that
//! crosses a disk (concat) or a stripe unit (stripe) is split into one piece
//! per disk; a disk's share of a contiguous request is contiguous on that
//! disk in both layouts, so there is never more than one piece per disk.

use crate::error::{config_err, Error, Result};
use crate::host::{ReqId, Request, RequestTable};
use crate::schema::Param;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
/// How an array's address space is laid over its disks.
pub enum ArrayLayout {
    /// The disks end to end.
    #[default]
    Concat,
    /// RAID-0: stripe units dealt out disk 0 first, row by row.
    Stripe,
}

/// How array addresses map onto the disks.
#[derive(Clone, Debug)]
pub struct Array {
    /// Disks in the array.
    pub disks: u32,
    layout: ArrayLayout,
    /// Blocks per disk used by the array (a whole number of stripe units when striped).
    disk_blocks: u64,
    unit_blocks: u64,
}

/// `disk.count`: identical disks behind the controller.
pub const DISK_COUNT: Param = Param::int("count", "disks", 1.0, 1.0, 256.0, "identical disks behind the controller, each with its own queue");

/// One disk's share of a request: (disk, first block on the disk, blocks).
pub type Piece = (u32, u64, u32);

impl Array {
    /// `disks` disks of `disk_capacity` blocks laid out as `layout`
    /// (`stripe_kb`: the stripe unit when striped); errors name the config key.
    pub fn new(disks: u32, layout: ArrayLayout, stripe_kb: f64, disk_capacity: u64, sector_bytes: u32) -> Result<Array> {
        DISK_COUNT.check_count("disk", disks as u64)?;
        let unit = stripe_kb * 1024.0 / sector_bytes as f64;
        let unit_blocks = match layout {
            ArrayLayout::Concat => disk_capacity,
            ArrayLayout::Stripe => {
                if !(unit >= 1.0 && unit.fract() == 0.0 && (unit as u64) <= disk_capacity) {
                    return Err(config_err("disk.stripe_kb", format!(
                        "{stripe_kb} KB is not a whole number of {sector_bytes}-byte blocks between 1 and the disk's {disk_capacity}")));
                }
                unit as u64
            }
        };
        Ok(Array { disks, layout, disk_blocks: disk_capacity / unit_blocks * unit_blocks, unit_blocks })
    }

    /// Blocks the array offers.
    pub fn capacity(&self) -> u64 {
        self.disk_blocks * self.disks as u64
    }

    /// Where array block `lbn` lives: (disk, block on the disk).
    pub fn locate(&self, lbn: u64) -> (u32, u64) {
        match self.layout {
            ArrayLayout::Concat => ((lbn / self.disk_blocks) as u32, lbn % self.disk_blocks),
            ArrayLayout::Stripe => {
                let unit = lbn / self.unit_blocks;
                let row = unit / self.disks as u64;
                ((unit % self.disks as u64) as u32, row * self.unit_blocks + lbn % self.unit_blocks)
            }
        }
    }

    /// The array block of block `local` of disk `disk` (inverse of `locate`).
    pub fn array_lbn(&self, disk: u32, local: u64) -> u64 {
        match self.layout {
            ArrayLayout::Concat => disk as u64 * self.disk_blocks + local,
            ArrayLayout::Stripe => {
                let row = local / self.unit_blocks;
                (row * self.disks as u64 + disk as u64) * self.unit_blocks + local % self.unit_blocks
            }
        }
    }

    /// The pieces of `blocks` blocks from array block `lbn`, in the order their first blocks come.
    pub fn split(&self, lbn: u64, blocks: u32, out: &mut Vec<Piece>) {
        out.clear();
        if self.disks == 1 {
            // One disk: its stripe units follow one another, one piece.
            out.push((0, lbn, blocks));
            return;
        }
        let (mut at, end) = (lbn, lbn + blocks as u64);
        while at < end {
            let (disk, local) = self.locate(at);
            let run = (self.unit_blocks - at % self.unit_blocks).min(end - at);
            match out.iter_mut().find(|p| p.0 == disk) {
                Some(p) => p.2 += run as u32, // contiguous on that disk (see the module header)
                None => out.push((disk, local, run as u32)),
            }
            at += run;
        }
    }
}

/// Requests the array split across disks, until their last piece is done:
/// the request as the workload sees it, and how many pieces are left.
#[derive(Default)]
pub struct Splits {
    open: Vec<Option<(Request, u32)>>,
    free: Vec<u32>,
    buf: Vec<Piece>,
    /// The split request `join` last completed (it lends it out from here).
    joined: Request,
}

impl Splits {
    /// `request` (at array block `request.lbn`), as the pieces each disk
    /// queues, numbered from `first_seq` in the order their first blocks
    /// come, put into `reqs` (their ids pushed onto `out`); `target` gives a
    /// disk block's position as the predictor believes.
    #[inline]
    pub fn split(&mut self, array: &Array, request: Request, first_seq: u64, target: impl Fn(u64, u32) -> (crate::disk::Target, Option<crate::disk::layout::TrackPiece>),
                 reqs: &mut RequestTable, out: &mut Vec<ReqId>) {
        let mut pieces = std::mem::take(&mut self.buf);
        array.split(request.lbn, request.blocks, &mut pieces);
        if let [(disk, local, blocks)] = pieces[..] {
            let (target, piece) = target(local, blocks);
            out.push(reqs.insert(Request { seq: first_seq, disk, lbn: local, blocks, target, mapped: piece.map(|p| (local, p)), ..request }));
        } else {
            let whole = Some((request.clone(), pieces.len() as u32));
            let split = match self.free.pop() {
                Some(i) => { self.open[i as usize] = whole; i }
                None => { self.open.push(whole); self.open.len() as u32 - 1 }
            };
            for (k, &(disk, local, blocks)) in pieces.iter().enumerate() {
                let (target, piece) = target(local, blocks);
                out.push(reqs.insert(Request { seq: first_seq + k as u64, disk, lbn: local, blocks, split: Some(split), target,
                                               mapped: piece.map(|p| (local, p)), range: request.range.clone(), ..request.clone() }));
            }
        }
        self.buf = pieces;
    }

    /// Piece `piece` is done: the workload's request, reported at its array
    /// address, once its last piece is (its issue and host dispatch the
    /// earliest of its pieces', its service the last one's). An unsplit
    /// request is its piece, moved to its array address in place.
    #[inline]
    pub fn join<'a>(&'a mut self, array: &Array, piece: &'a mut Request) -> Result<Option<&'a Request>> {
        let Some(i) = piece.split else {
            piece.lbn = array.array_lbn(piece.disk, piece.lbn);
            return Ok(Some(piece));
        };
        let (whole, left) = self.open[i as usize].as_mut().ok_or_else(|| Error::Invariant("piece of a finished split".into()))?;
        let first_done = whole.service.done == SimTime::ZERO;
        whole.issued = if first_done { piece.issued } else { whole.issued.min(piece.issued) };
        whole.host_dispatched = if first_done { piece.host_dispatched } else { whole.host_dispatched.min(piece.host_dispatched) };
        *left -= 1;
        if whole.service.done <= piece.service.done {
            (whole.service, whole.started, whole.disk) = (piece.service, piece.started, piece.disk);
        }
        if *left > 0 {
            return Ok(None);
        }
        self.free.push(i);
        self.joined = self.open[i as usize].take().map(|(w, _)| w).unwrap_or_default();
        Ok(Some(&self.joined))
    }

    /// Whether some split still waits for a piece.
    pub fn any_open(&self) -> bool {
        self.open.iter().any(Option::is_some)
    }
}
