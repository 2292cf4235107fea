//! Demerit of a catalogue drive against a DiskSim validate trace:
//! `cargo run --release --example validate -- DISK TRACE`.
use disksched_core::disk::{builtin, DiskModel};
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = Arc::new(DiskModel::new(builtin::resolve(&args[1], None).unwrap()).unwrap());
    let v = disksched_core::validate::validate(model, &args[2]).unwrap();
    println!("{:<12} rms {:.4} ms (unbinned {:.4})  measured mean {:.3}  simulated mean {:.3}  {:?}", args[1], v.rms_ms, v.rms_exact_ms,
             v.measured_mean_ms, v.simulated_mean_ms,
             v.percentiles.iter().map(|p| format!("q{}: {:.2}/{:.2}", p.0, p.1, p.2)).collect::<Vec<_>>());
}
