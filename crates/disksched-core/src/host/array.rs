//! Several disks behind one controller: how an array address maps onto them.
//!
//! `concat` lays the disks end to end; `stripe` (RAID-0) deals the address
//! space out in stripe units, disk 0 first, row by row. A request that
//! crosses a disk (concat) or a stripe unit (stripe) is split into one piece
//! per disk; a disk's share of a contiguous request is contiguous on that
//! disk in both layouts, so there is never more than one piece per disk.

use crate::error::{config_err, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArrayLayout {
    #[default]
    Concat,
    Stripe,
}

#[derive(Clone, Debug)]
pub struct Array {
    pub disks: u32,
    layout: ArrayLayout,
    /// Blocks per disk used by the array (a whole number of stripe units when striped).
    disk_blocks: u64,
    unit_blocks: u64,
}

/// One disk's share of a request: (disk, first block on the disk, blocks).
pub type Piece = (u32, u64, u32);

impl Array {
    pub fn new(disks: u32, layout: ArrayLayout, stripe_kb: f64, disk_capacity: u64, sector_bytes: u32) -> Result<Array> {
        crate::config::DISK_COUNT.check_count("disk", disks as u64)?;
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
