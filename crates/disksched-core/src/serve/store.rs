//! The served data: what a read returns is what was written, zeros where
//! nothing was. Kept sparse in memory (chunks allocated on first write) or in
//! a backing file (sparse where the file system allows). The drive model only
//! times requests; this holds their bytes.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes per in-memory chunk: large enough that a 64 MB image is 1,024
/// allocations, small enough that scattered 4 KB writes stay cheap.
const CHUNK_BYTES: u64 = 64 * 1024;

/// Where the bytes live.
pub enum Store {
    /// Sparse chunks in memory.
    Memory(HashMap<u64, Box<[u8]>>),
    /// A file of the export's size.
    File(File),
}

impl Store {
    /// An empty in-memory store.
    pub fn memory() -> Store {
        Store::Memory(HashMap::new())
    }

    /// A store in file `path` (created if missing), `size_bytes` long: a
    /// shorter file is extended with zeros, a longer one refused.
    pub fn file(path: &Path, size_bytes: u64) -> Result<Store> {
        let io = |e: std::io::Error| Error::File { path: path.display().to_string(), msg: e.to_string() };
        let f = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        if len > size_bytes {
            return Err(Error::File { path: path.display().to_string(), msg: format!(
                "holds {len} bytes, more than the export's {size_bytes}; expected a file no longer than --size") });
        }
        if len < size_bytes {
            f.set_len(size_bytes).map_err(io)?;
        }
        Ok(Store::File(f))
    }

    /// Fill `buf` from byte `offset`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        match self {
            Store::File(f) => f.read_exact_at(buf, offset),
            Store::Memory(chunks) => {
                each_piece(offset, buf.len(), |chunk, at, range| {
                    let out = &mut buf[range];
                    match chunks.get(&chunk) {
                        Some(c) => out.copy_from_slice(&c[at..at + out.len()]),
                        None => out.fill(0),
                    }
                });
                Ok(())
            }
        }
    }

    /// Write `data` at byte `offset`.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        match self {
            Store::File(f) => f.write_all_at(data, offset),
            Store::Memory(chunks) => {
                each_piece(offset, data.len(), |chunk, at, range| {
                    let c = chunks.entry(chunk).or_insert_with(|| vec![0u8; CHUNK_BYTES as usize].into_boxed_slice());
                    c[at..at + range.len()].copy_from_slice(&data[range]);
                });
                Ok(())
            }
        }
    }

    /// Zero `len` bytes from `offset` (TRIM): whole chunks are freed.
    pub fn zero(&mut self, offset: u64, len: usize) -> std::io::Result<()> {
        match self {
            Store::File(f) => {
                let zeros = vec![0u8; len.min(1 << 20)];
                let mut done = 0usize;
                while done < len {
                    let n = (len - done).min(zeros.len());
                    f.write_all_at(&zeros[..n], offset + done as u64)?;
                    done += n;
                }
                Ok(())
            }
            Store::Memory(chunks) => {
                each_piece(offset, len, |chunk, at, range| {
                    if range.len() as u64 == CHUNK_BYTES {
                        chunks.remove(&chunk);
                    } else if let Some(c) = chunks.get_mut(&chunk) {
                        c[at..at + range.len()].fill(0);
                    }
                });
                Ok(())
            }
        }
    }

    /// Make written data durable (a backing file's FLUSH).
    pub fn sync(&self) -> std::io::Result<()> {
        match self {
            Store::File(f) => f.sync_data(),
            Store::Memory(_) => Ok(()),
        }
    }

    /// Bytes of memory the in-memory store holds.
    pub fn resident_bytes(&self) -> u64 {
        match self {
            Store::File(_) => 0,
            Store::Memory(c) => c.len() as u64 * CHUNK_BYTES,
        }
    }
}

/// Split `len` bytes from `offset` into chunk pieces: (chunk index, offset in
/// the chunk, range in the caller's buffer).
fn each_piece(offset: u64, len: usize, mut f: impl FnMut(u64, usize, std::ops::Range<usize>)) {
    let mut done = 0usize;
    while done < len {
        let pos = offset + done as u64;
        let at = (pos % CHUNK_BYTES) as usize;
        let n = (len - done).min(CHUNK_BYTES as usize - at);
        f(pos / CHUNK_BYTES, at, done..done + n);
        done += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_return_what_was_written_and_zeros_elsewhere() {
        let mut s = Store::memory();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + 3) as u8).collect();
        s.write(CHUNK_BYTES - 100, &data).unwrap();
        let mut back = vec![1u8; data.len() + 300];
        s.read(CHUNK_BYTES - 250, &mut back).unwrap();
        assert!(back[..150].iter().all(|&b| b == 0));
        assert_eq!(&back[150..150 + data.len()], &data[..]);
        assert!(back[150 + data.len()..].iter().all(|&b| b == 0));
        // TRIM a span crossing a whole chunk: zeros there, the rest kept, the whole chunk freed.
        let before = s.resident_bytes();
        s.zero(CHUNK_BYTES, CHUNK_BYTES as usize + 10).unwrap();
        assert_eq!(s.resident_bytes(), before - CHUNK_BYTES);
        let mut z = vec![1u8; CHUNK_BYTES as usize + 10];
        s.read(CHUNK_BYTES, &mut z).unwrap();
        assert!(z.iter().all(|&b| b == 0));
        let mut head = vec![0u8; 100];
        s.read(CHUNK_BYTES - 100, &mut head).unwrap();
        assert_eq!(&head[..], &data[..100]);
    }
}
