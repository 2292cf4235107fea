//! The NBD protocol as far as `disksched serve` speaks it: the fixed
//! newstyle handshake (NBD_OPT_EXPORT_NAME, ABORT, LIST, INFO, GO; every
//! other option answered NBD_REP_ERR_UNSUP) and simple replies in the
//! transmission phase. Numbers from the protocol document
//! (github.com/NetworkBlockDevice/nbd, doc/proto.md); all big-endian.

use std::io::{self, Read, Write};

/// "NBDMAGIC": the server's first eight bytes.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// "IHAVEOPT": newstyle negotiation, and the prefix of every option.
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
/// Magic of an option reply.
pub const REPLY_MAGIC_OPT: u64 = 0x0003_e889_0455_65a9;
/// Magic of a transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flags: fixed newstyle, and the client may skip the 124 zeros.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
/// See `FLAG_FIXED_NEWSTYLE`.
pub const FLAG_NO_ZEROES: u16 = 2;

/// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
/// The client ends negotiation.
pub const OPT_ABORT: u32 = 2;
/// The client asks for the export names.
pub const OPT_LIST: u32 = 3;
/// The client asks about an export.
pub const OPT_INFO: u32 = 6;
/// The client asks about an export and enters transmission.
pub const OPT_GO: u32 = 7;

/// Option replies.
pub const REP_ACK: u32 = 1;
/// One export name (NBD_OPT_LIST).
pub const REP_SERVER: u32 = 2;
/// One piece of information (NBD_OPT_INFO / GO).
pub const REP_INFO: u32 = 3;
/// The option is not supported.
pub const REP_ERR_UNSUP: u32 = 1 | 1 << 31;
/// The option's data is malformed.
pub const REP_ERR_INVALID: u32 = 3 | 1 << 31;
/// No export of that name.
pub const REP_ERR_UNKNOWN: u32 = 6 | 1 << 31;
/// The option's data is longer than the server accepts.
pub const REP_ERR_TOO_BIG: u32 = 9 | 1 << 31;

/// Information types.
pub const INFO_EXPORT: u16 = 0;
/// Minimum, preferred and maximum block sizes.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flags: what the export supports.
pub const TFLAG_HAS_FLAGS: u16 = 1;
/// FLUSH is supported.
pub const TFLAG_SEND_FLUSH: u16 = 1 << 2;
/// FUA is honoured.
pub const TFLAG_SEND_FUA: u16 = 1 << 3;
/// The medium is rotational (it is a simulated disk).
pub const TFLAG_ROTATIONAL: u16 = 1 << 4;
/// TRIM is supported.
pub const TFLAG_SEND_TRIM: u16 = 1 << 5;
/// A FLUSH on one connection covers writes acknowledged on every other.
pub const TFLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Commands.
pub const CMD_READ: u16 = 0;
/// Write (its data follows the request).
pub const CMD_WRITE: u16 = 1;
/// Disconnect.
pub const CMD_DISC: u16 = 2;
/// Make every acknowledged write durable.
pub const CMD_FLUSH: u16 = 3;
/// The data may be discarded.
pub const CMD_TRIM: u16 = 4;
/// Command flag: force unit access (durable before the reply).
pub const CMD_FLAG_FUA: u16 = 1;

/// Error numbers in replies (Linux errno values, as the protocol fixes them).
pub const EIO: u32 = 5;
/// See `EIO`.
pub const ENOMEM: u32 = 12;
/// Bad request.
pub const EINVAL: u32 = 22;
/// A write past the end of the export.
pub const ENOSPC: u32 = 28;
/// A read past the end, or longer than the server's maximum.
pub const EOVERFLOW: u32 = 75;
/// The server is shutting down.
pub const ESHUTDOWN: u32 = 108;

/// Longest option data the server reads (an export name is at most 4096 bytes).
pub const MAX_OPTION_BYTES: u32 = 16 * 1024;

/// What the handshake advertises.
#[derive(Clone, Debug)]
pub struct Export {
    /// Its name (the empty name also selects it).
    pub name: String,
    /// Bytes.
    pub size_bytes: u64,
    /// Transmission flags.
    pub flags: u16,
    /// Block sizes: minimum (a sector), preferred, maximum request.
    pub block_bytes: (u32, u32, u32),
}

impl Export {
    fn named(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn option_reply(w: &mut impl Write, opt: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(20 + data.len());
    m.extend_from_slice(&REPLY_MAGIC_OPT.to_be_bytes());
    m.extend_from_slice(&opt.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    w.write_all(&m)
}

/// Negotiate on a new connection. `Ok(true)`: the client entered the
/// transmission phase; `Ok(false)`: it aborted, or broke the protocol so
/// that the connection must close (the protocol's answer to a bad magic or
/// an unknown NBD_OPT_EXPORT_NAME).
pub fn handshake<S: Read + Write>(s: &mut S, export: &Export) -> io::Result<bool> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&hello)?;
    let client_flags = read_u32(s)?;
    if client_flags & !u32::from(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES) != 0 {
        return Ok(false);
    }
    let no_zeroes = client_flags & u32::from(FLAG_NO_ZEROES) != 0;
    loop {
        if read_u64(s)? != IHAVEOPT {
            return Ok(false);
        }
        let opt = read_u32(s)?;
        let len = read_u32(s)?;
        if len > MAX_OPTION_BYTES {
            if opt == OPT_EXPORT_NAME {
                return Ok(false);
            }
            io::copy(&mut Read::by_ref(s).take(len as u64), &mut io::sink())?;
            option_reply(s, opt, REP_ERR_TOO_BIG, b"option data too long")?;
            continue;
        }
        let mut data = vec![0u8; len as usize];
        s.read_exact(&mut data)?;
        match opt {
            OPT_EXPORT_NAME => {
                if !export.named(&data) {
                    return Ok(false);
                }
                let mut m = Vec::with_capacity(134);
                m.extend_from_slice(&export.size_bytes.to_be_bytes());
                m.extend_from_slice(&export.flags.to_be_bytes());
                if !no_zeroes {
                    m.extend_from_slice(&[0u8; 124]);
                }
                s.write_all(&m)?;
                return Ok(true);
            }
            OPT_ABORT => {
                // The client may already have closed: an error here changes nothing.
                let _ = option_reply(s, opt, REP_ACK, &[]);
                return Ok(false);
            }
            OPT_LIST => {
                if !data.is_empty() {
                    option_reply(s, opt, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
                    continue;
                }
                let mut d = (export.name.len() as u32).to_be_bytes().to_vec();
                d.extend_from_slice(export.name.as_bytes());
                option_reply(s, opt, REP_SERVER, &d)?;
                option_reply(s, opt, REP_ACK, &[])?;
            }
            OPT_INFO | OPT_GO => {
                let Some((name, requests)) = parse_info(&data) else {
                    option_reply(s, opt, REP_ERR_INVALID, b"malformed NBD_OPT_INFO/GO data")?;
                    continue;
                };
                if !export.named(name) {
                    option_reply(s, opt, REP_ERR_UNKNOWN, b"no export of that name")?;
                    continue;
                }
                let mut info = INFO_EXPORT.to_be_bytes().to_vec();
                info.extend_from_slice(&export.size_bytes.to_be_bytes());
                info.extend_from_slice(&export.flags.to_be_bytes());
                option_reply(s, opt, REP_INFO, &info)?;
                if requests.contains(&INFO_BLOCK_SIZE) {
                    let (min, pref, max) = export.block_bytes;
                    let mut b = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
                    for v in [min, pref, max] {
                        b.extend_from_slice(&v.to_be_bytes());
                    }
                    option_reply(s, opt, REP_INFO, &b)?;
                }
                option_reply(s, opt, REP_ACK, &[])?;
                if opt == OPT_GO {
                    return Ok(true);
                }
            }
            _ => option_reply(s, opt, REP_ERR_UNSUP, &[])?,
        }
    }
}

/// NBD_OPT_INFO / GO data: u32 name length, name, u16 count, count u16 info requests.
fn parse_info(d: &[u8]) -> Option<(&[u8], Vec<u16>)> {
    let n = u32::from_be_bytes(d.get(..4)?.try_into().ok()?) as usize;
    let name = d.get(4..4usize.checked_add(n)?)?;
    let rest = &d[4 + n..];
    let count = u16::from_be_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    let reqs = rest.get(2..)?;
    if reqs.len() != 2 * count {
        return None;
    }
    Some((name, reqs.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect()))
}

/// A transmission-phase request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    /// Must be `REQUEST_MAGIC`.
    pub magic: u32,
    /// Command flags (`CMD_FLAG_FUA`, ...).
    pub flags: u16,
    /// Command (`CMD_READ`, ...).
    pub kind: u16,
    /// The client's handle, echoed in the reply.
    pub handle: u64,
    /// Byte offset.
    pub offset: u64,
    /// Bytes.
    pub length: u32,
}

/// Read one request header (28 bytes).
pub fn read_request(r: &mut impl Read) -> io::Result<RequestHeader> {
    let mut b = [0u8; 28];
    r.read_exact(&mut b)?;
    let be32 = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
    let be64 = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap());
    Ok(RequestHeader {
        magic: be32(0),
        flags: u16::from_be_bytes([b[4], b[5]]),
        kind: u16::from_be_bytes([b[6], b[7]]),
        handle: be64(8),
        offset: be64(16),
        length: be32(24),
    })
}

/// A simple reply's 16-byte header.
pub fn simple_reply_header(error: u32, handle: u64) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    h[4..8].copy_from_slice(&error.to_be_bytes());
    h[8..].copy_from_slice(&handle.to_be_bytes());
    h
}
