//! Budgets for what input may make the simulator allocate or compute: every
//! size that comes from input (a count of clients, a file, a series of
//! windows, the span of simulated time) is checked here before anything of
//! that size is allocated or looped over, so hostile but in-bounds input ends
//! with a one-line error naming the key and value instead of exhausting
//! memory (an abort the caller cannot catch) or spinning forever.

use crate::error::{config_err, Error, Result};
use crate::time::{SimTime, NS_PER_S};
use std::io::Read;
use std::path::Path;

/// Most bytes one structure sized by input may take (per-client state,
/// a series of windows): far above any config the project ships (the largest,
/// 10^6 closed clients, needs about 100 MB), far below a machine's memory.
pub const MEMORY_BUDGET_BYTES: u64 = 1 << 30;

/// Largest spec, config, DiskSim or fio job file read whole: the biggest
/// DiskSim parameter file with a seek table is about 1 MB.
pub const MAX_TEXT_FILE_BYTES: u64 = 64 << 20;

/// The simulated clock's end: 2^62 ns, about 146 years. An event at or after
/// it means a workload that makes no progress (an on/off source whose on
/// periods almost never hold an arrival, a think time of centuries); the run
/// ends with an error instead of saturating the u64 clock.
pub const CLOCK_END: SimTime = SimTime(1 << 62);

/// `count` items of `bytes_each` bytes, for `key` = `value`: an error when
/// they would take more than `MEMORY_BUDGET_BYTES`, naming the most allowed.
pub fn check_memory(key: &str, value: impl std::fmt::Display, count: u64, bytes_each: u64, items: &str) -> Result<()> {
    let bytes_each = bytes_each.max(1);
    let need = count.saturating_mul(bytes_each);
    if need <= MEMORY_BUDGET_BYTES {
        return Ok(());
    }
    Err(config_err(key, format!(
        "{value} needs {count} {items} of {bytes_each} bytes ({}), over the {} memory budget; expected at most {} {items}",
        human_bytes(need), human_bytes(MEMORY_BUDGET_BYTES), MEMORY_BUDGET_BYTES / bytes_each)))
}

/// The text of `path` (a spec, config, DiskSim or fio job file), read only
/// up to `MAX_TEXT_FILE_BYTES` (a device such as /dev/zero never ends).
pub fn read_text_file(path: &Path, what: &str) -> Result<Vec<u8>> {
    let shown = path.display().to_string();
    let file_err = |msg: String| Error::File { path: shown.clone(), msg };
    let file = std::fs::File::open(path).map_err(|e| file_err(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| file_err(e.to_string()))?;
    if bytes.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(file_err(format!("larger than {}, the most a {what} may be (is it a device or a data file?)",
                                    human_bytes(MAX_TEXT_FILE_BYTES))));
    }
    Ok(bytes)
}

/// `read_text_file` as UTF-8 text.
pub fn read_text_file_utf8(path: &Path, what: &str) -> Result<String> {
    let bytes = read_text_file(path, what)?;
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        Error::File { path: path.display().to_string(), msg: format!("line {line}: not valid UTF-8 text, expected a {what}") }
    })
}

/// The error for an event at or past `CLOCK_END`.
pub fn clock_end_err(now: SimTime, event: &str) -> Error {
    config_err("workload", format!(
        "an event ({event}) falls at {:.3e} s of simulated time, past the clock's end ({:.3e} s, about 146 years): \
         the workload makes no progress (on/off periods that almost never hold an arrival, or a think or inter-arrival time of years)",
        now.0 as f64 / NS_PER_S as f64, CLOCK_END.0 as f64 / NS_PER_S as f64))
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{b} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_budget_names_the_key_and_the_most_allowed() {
        assert!(check_memory("workload.clients", 1000, 1000, 88, "clients").is_ok());
        let e = check_memory("workload.clients", "clients = 1000000000", 1_000_000_000, 88, "clients").unwrap_err().to_string();
        // 2^30 / 88 = 12201611 (integer division by hand: 88 * 12201611 = 1073741768 <= 1073741824 < 88 * 12201612).
        assert!(e.contains("expected at most 12201611 clients"), "{e}");
        assert!(e.starts_with("workload.clients: clients = 1000000000 needs 1000000000 clients of 88 bytes (82.0 GB)"), "{e}");
        assert!(!e.contains('\n'));
        // A count whose bytes overflow u64 is refused, not wrapped.
        assert!(check_memory("k", 1, u64::MAX, 16, "rows").is_err());
    }

    #[test]
    fn a_file_that_never_ends_is_refused_after_the_cap() {
        let e = read_text_file(Path::new("/dev/zero"), "disk spec").unwrap_err().to_string();
        assert!(e.starts_with("/dev/zero: larger than 64.0 MB, the most a disk spec may be"), "{e}");
    }
}
