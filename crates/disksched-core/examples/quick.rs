//! Run a config file and print the summary as JSON: `cargo run --example quick -- CONFIG.toml`.
use disksched_core::{run, SimConfig};

fn main() {
    let path = std::env::args().nth(1).expect("usage: quick CONFIG.toml");
    let cfg = SimConfig::from_file(std::path::Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let t = std::time::Instant::now();
    match run(&cfg) {
        Ok(r) => {
            println!("{}", serde_json::to_string_pretty(&r.summary).unwrap());
            if let Some(f) = &r.freeblock {
                println!("{}", serde_json::to_string_pretty(f).unwrap());
            }
            eprintln!("{} requests in {:.3} s wall", r.counters.completed, t.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}
