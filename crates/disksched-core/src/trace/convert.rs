//! `trace convert`: stream records from any readable format into any
//! writable one (`TraceWriter`), constant memory. The output is written to
//! a temporary file beside it and renamed into place only when complete, so
//! a failed conversion never leaves a half-written file.

use super::{open, TraceFormat, TraceWriter};
use crate::error::{Error, Result};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Convert `path` (format detected unless given) to `to` at `out`; returns
/// the number of records written.
pub fn convert(path: impl AsRef<Path>, format: Option<TraceFormat>, skip_bad_lines: bool, to: TraceFormat, out: impl AsRef<Path>) -> Result<u64> {
    convert_until(path, format, skip_bad_lines, to, out, &mut || true)
}

/// `convert`, asking `keep_going` every 65,536 records: `false` (the binding's
/// Ctrl-C) stops it with an error and removes the temporary file.
pub fn convert_until(path: impl AsRef<Path>, format: Option<TraceFormat>, skip_bad_lines: bool, to: TraceFormat,
                     out: impl AsRef<Path>, keep_going: &mut dyn FnMut() -> bool) -> Result<u64> {
    let out = out.as_ref();
    let out_s = out.display().to_string();
    let file_err = |msg: String| Error::File { path: out_s.clone(), msg };
    // Refuse an unwritable format before touching anything.
    TraceWriter::new(to, std::io::sink())?;
    let reader = open(path, format, skip_bad_lines)?;
    let name = out.file_name().ok_or_else(|| file_err("not a file name".into()))?.to_string_lossy().to_string();
    let tmp = out.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let file = std::fs::File::create(&tmp).map_err(|e| file_err(format!("cannot create {}: {e}", tmp.display())))?;
    let result = (|| {
        let mut w = TraceWriter::new(to, BufWriter::with_capacity(256 * 1024, file))?;
        let mut n = 0u64;
        for rec in reader {
            w.write(&rec?)?;
            n += 1;
            if n & 0xFFFF == 0 && !keep_going() {
                return Err(interrupted());
            }
        }
        let mut buf = w.into_inner();
        buf.flush().map_err(|e| file_err(format!("write failed: {e}")))?;
        let file = buf.into_inner().map_err(|e| file_err(format!("write failed: {e}")))?;
        file.sync_all().map_err(|e| file_err(format!("write failed: {e}")))?;
        // A Ctrl-C during the last lines or the sync still leaves no output.
        if !keep_going() {
            return Err(interrupted());
        }
        std::fs::rename(&tmp, out).map_err(|e| file_err(format!("cannot rename {} into place: {e}", tmp.display())))?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    // The writer names its errors `<output>`: name the real file.
    result.map_err(|e| match e {
        Error::File { path, msg } if path == "<output>" => Error::File { path: out_s.clone(), msg },
        e => e,
    })
}

fn interrupted() -> Error {
    Error::Config { what: "trace convert".into(), msg: "interrupted".into() }
}
