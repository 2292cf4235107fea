//! A zstd file read as `zstd -d` reads it: every frame in turn, skippable frames passed over, each frame's
//! checksum checked. ruzstd (pure Rust: a fresh build does not compile zstd's C library, issue 35) decodes one
//! frame at a time; this strings its frames together.

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use std::io::{self, BufRead, Read};

pub struct ZstdFrames<R: BufRead> {
    source: R,
    decoder: FrameDecoder,
    in_frame: bool,
}

fn zstd_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}"))
}

impl<R: BufRead> ZstdFrames<R> {
    pub fn new(source: R) -> Self {
        ZstdFrames { source, decoder: FrameDecoder::new(), in_frame: false }
    }

    /// Starts the next data frame; false at the end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            if self.source.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.decoder.reset(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame { length, .. })) => {
                    let skipped = io::copy(&mut (&mut self.source).take(u64::from(length)), &mut io::sink())?;
                    if skipped < u64::from(length) {
                        return Err(zstd_error("skippable frame cut short"));
                    }
                }
                Err(e) => return Err(zstd_error(e)),
            }
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            // The decoder keeps a window of its output back until the frame ends: decode until enough is free.
            while self.decoder.can_collect() < buf.len() && !self.decoder.is_finished() {
                let wanted = buf.len() - self.decoder.can_collect();
                self.decoder.decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBytes(wanted)).map_err(zstd_error)?;
            }
            let n = self.decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            // The frame is finished and all of it read.
            if let (Some(stored), Some(computed)) = (self.decoder.get_checksum_from_data(), self.decoder.get_calculated_checksum()) {
                if stored != computed {
                    return Err(zstd_error(format!("checksum mismatch: frame says {stored:#010x}, data gives {computed:#010x}")));
                }
            }
            self.in_frame = false;
        }
    }
}
