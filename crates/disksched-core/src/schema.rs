//! Declared config values: every key a run config accepts, with its type,
//! unit, default, bounds and help, declared once beside the code that reads
//! it (as `block/mq-deadline.c` declares its tunables in one table).
//!
//! The loader's checks (`Param::check`) and the generated reference
//! (`disksched config reference`, docs/config.md) both read these
//! declarations, so the two cannot disagree. A bound a value must meet that
//! depends on the disk (a start block that must fit on it) is declared with
//! the static part and checked again, with the disk, where it is used.

use crate::error::{config_err, Result};

/// What kind of value a key takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    /// A whole number (a count, a block number).
    Int,
    /// A number.
    Float,
    /// true or false.
    Bool,
    /// Free text (a name, a path).
    Str,
    /// One of the listed names.
    Choice(&'static [&'static str]),
    /// A list (of tables or pairs, described by the help).
    List,
    /// A table of `name = number` settings (checked against another section).
    Table,
}

/// One declared value: GEOM_SCHED's `{min, cur, max}` with a unit and help.
///
/// Numeric bounds are `[min, max]`, `(min, max]` with `min_open`, or with
/// `or_zero` "0 (off) or `[min, max]`": a rate that is either absent or
/// large enough to be simulated (a token rate of 1e-308 per second would
/// wait past the end of the clock for every token).
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The key, as written in the config.
    pub name: &'static str,
    /// What kind of value it takes.
    pub ty: Ty,
    /// Unit of a numeric value ("" when it has none).
    pub unit: &'static str,
    /// Lower bound (NaN for non-numeric keys).
    pub min: f64,
    /// Default (NaN when there is no numeric default).
    pub default: f64,
    /// Upper bound (NaN for non-numeric keys).
    pub max: f64,
    /// The lower bound is exclusive.
    pub min_open: bool,
    /// The upper bound is exclusive.
    pub max_open: bool,
    /// 0 (off) is allowed besides the bounds.
    pub or_zero: bool,
    /// Shown as the default instead of `default` when not empty ("required",
    /// "absent", a name); numeric keys with a numeric default leave it empty.
    pub default_text: &'static str,
    /// One line of help for the reference.
    pub help: &'static str,
}

impl Param {
    /// A number in `[min, max]`.
    pub const fn float(name: &'static str, unit: &'static str, min: f64, default: f64, max: f64, help: &'static str) -> Param {
        Param { name, ty: Ty::Float, unit, min, default, max, min_open: false, max_open: false, or_zero: false, default_text: "", help }
    }
    /// A whole number in `[min, max]`.
    pub const fn int(name: &'static str, unit: &'static str, min: f64, default: f64, max: f64, help: &'static str) -> Param {
        Param { name, ty: Ty::Int, unit, min, default, max, min_open: false, max_open: false, or_zero: false, default_text: "", help }
    }
    /// A value that is not a number (bool, text, a choice, a list, a table).
    pub const fn other(name: &'static str, ty: Ty, default_text: &'static str, help: &'static str) -> Param {
        Param { name, ty, unit: "", min: f64::NAN, default: f64::NAN, max: f64::NAN, min_open: false, max_open: false, or_zero: false, default_text, help }
    }
    /// The lower bound is exclusive: `(min, max]`.
    pub const fn open_min(mut self) -> Param {
        self.min_open = true;
        self
    }
    /// The upper bound is exclusive: `[min, max)`.
    pub const fn open_max(mut self) -> Param {
        self.max_open = true;
        self
    }
    /// 0 is allowed besides `[min, max]` (0 = off).
    pub const fn or_zero(mut self) -> Param {
        self.or_zero = true;
        self
    }
    /// The default shown in the reference, for keys that must be given
    /// ("required") or whose absence means something ("absent: ...").
    pub const fn default_text(mut self, text: &'static str) -> Param {
        self.default_text = text;
        self
    }

    /// The key takes a number (int or float).
    pub fn is_numeric(&self) -> bool {
        matches!(self.ty, Ty::Int | Ty::Float)
    }

    /// Whether `v` meets the declared bounds (NaN never does).
    pub fn allows(&self, v: f64) -> bool {
        self.allows_within(v, self.min, self.max)
    }

    fn allows_within(&self, v: f64, lo: f64, hi: f64) -> bool {
        let above = if self.min_open { v > lo } else { v >= lo };
        let below = if self.max_open { v < hi } else { v <= hi };
        (above && below) || (self.or_zero && v == 0.0)
    }

    /// The bounds as the reference and the errors print them: `[1, 1024]`,
    /// `(0, 1]`, `0 or [0.001, 1000000000]`.
    pub fn bounds_text(&self) -> String {
        self.bounds_text_within(self.min, self.max)
    }

    fn bounds_text_within(&self, lo: f64, hi: f64) -> String {
        let interval = format!("{}{}, {}{}", if self.min_open { "(" } else { "[" }, num(lo), num(hi), if self.max_open { ")" } else { "]" });
        if self.or_zero { format!("0 or {interval}") } else { interval }
    }

    /// `v` checked against the declared bounds; the error names
    /// `{prefix}.{name}` (or just the name with an empty prefix), the value,
    /// its unit and the bounds.
    pub fn check(&self, prefix: &str, v: f64) -> Result<f64> {
        self.check_within(prefix, v, self.min, self.max)
    }

    /// `check`, with bounds narrowed by what the disk allows (a start block
    /// that must leave room for the request): `lo`/`hi` replace min/max.
    pub fn check_within(&self, prefix: &str, v: f64, lo: f64, hi: f64) -> Result<f64> {
        if self.allows_within(v, lo, hi) {
            return Ok(v);
        }
        let unit = if self.unit.is_empty() || self.ty == Ty::Int { String::new() } else { format!(" {}", self.unit) };
        Err(config_err(self.key(prefix), format!("{}{unit} is out of range {}", num(v), self.bounds_text_within(lo, hi))))
    }

    /// A count (u32/u64 config field) checked against the bounds; the error
    /// prints it exactly (a u64 near 2^64 has no exact f64).
    pub fn check_count(&self, prefix: &str, v: u64) -> Result<u64> {
        self.check_count_within(prefix, v, self.min, self.max)
    }

    /// `check_count` with bounds narrowed by the disk.
    pub fn check_count_within(&self, prefix: &str, v: u64, lo: f64, hi: f64) -> Result<u64> {
        // Exact below 2^53, where every disk-derived bound lies.
        if self.allows_within(v as f64, lo, hi) {
            return Ok(v);
        }
        Err(config_err(self.key(prefix), format!("{v} is out of range {}", self.bounds_text_within(lo, hi))))
    }

    /// The full key: `{prefix}.{name}`, or `name` with an empty prefix.
    pub fn key(&self, prefix: &str) -> String {
        if prefix.is_empty() { self.name.to_string() } else { format!("{prefix}.{}", self.name) }
    }

    /// The default as the reference prints it.
    pub fn default_shown(&self) -> String {
        if !self.default_text.is_empty() {
            self.default_text.to_string()
        } else if self.default.is_nan() {
            String::new()
        } else {
            num(self.default)
        }
    }
}

/// A number as a person reads it: plain, or in exponent form when plain
/// would print hundreds of digits (1e308) or a string of zeros (1e-9).
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-3..1e15).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}
