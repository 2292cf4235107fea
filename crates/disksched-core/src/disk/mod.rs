//! The disk: its model (layout + mechanics + controller figures), the
//! predictor that schedulers consult, and the simulated drive (the truth).

pub mod address;
pub mod belief;
pub mod builtin;
pub mod cache;
pub mod controller;
pub mod datasheet;
pub mod disksim;
pub mod drive;
pub mod layout;
pub mod mechanics;
pub mod noisy;
pub mod predictor;
pub mod spec;
pub mod timing;
mod tracktable;

use crate::error::Result;
use crate::time::SimTime;
pub use controller::{ControllerTiming, WriteData};
pub use drive::{Drive, DriveState, Service};
pub use layout::{Layout, MappedPieces, Pbn, TrackPiece, TrackSpan};
pub use mechanics::Mechanics;
pub use predictor::{Positioning, Predictor, Target};
pub use spec::DiskSpec;
pub use timing::{Access, MediaAccess};

/// Everything derived from a `DiskSpec` that timing needs; immutable, shared.
#[derive(Clone, Debug)]
pub struct DiskModel {
    /// The spec it was built from.
    pub spec: DiskSpec,
    /// LBN to physical sector mapping.
    pub layout: Layout,
    /// Seek curve, rotation and head switch timing.
    pub mech: Mechanics,
    /// Controller overheads and bus rates, in ns.
    pub controller: ControllerTiming,
}

impl DiskModel {
    /// Validate `spec` and derive its layout, mechanics and controller timing.
    pub fn new(spec: DiskSpec) -> Result<DiskModel> {
        let layout = Layout::new(&spec)?;
        let mech = Mechanics::new(&spec)?;
        let controller = ControllerTiming::new(&spec.controller);
        Ok(DiskModel { spec, layout, mech, controller })
    }

    /// Sequential media rate at `cyl`, bytes/s, ignoring switches (the mean
    /// over its tracks where sectors per track differ by surface).
    pub fn media_rate_bytes_per_s(&self, cyl: u32) -> f64 {
        self.layout.mean_sectors_per_track(cyl) * self.spec.sector_bytes as f64 * self.spec.rpm / 60.0
    }
}

/// Where the heads are and since when: the state a positioning prediction starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeadState {
    /// Cylinder the heads are on.
    pub cylinder: u32,
    /// Active head (surface).
    pub head: u32,
    /// When the mechanism is (or becomes) free at that position.
    pub time: SimTime,
    /// The last command was a write (command overheads depend on it).
    pub last_was_write: bool,
    /// The LBN after the last command's last block: a write starting there
    /// is sequential (no minimum seek delay).
    pub next_lbn: Option<u64>,
}
