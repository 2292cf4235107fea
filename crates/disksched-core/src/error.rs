//! One error type for the core. Messages are single lines that name what was
//! wrong (file, line, parameter, value) and what was expected.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// A configuration or spec value is invalid: `what` names it, `msg` says why.
    #[error("{what}: {msg}")]
    Config { what: String, msg: String },
    #[error("{path}: {msg}")]
    File { path: String, msg: String },
    #[error("{path}:{line}: {msg}")]
    Parse { path: String, line: usize, msg: String },
    /// An internal invariant was violated (a bug, never a user error).
    #[error("invariant violated: {0}")]
    Invariant(String),
}

pub type Result<T> = std::result::Result<T, Error>;

pub fn config_err(what: impl Into<String>, msg: impl Into<String>) -> Error {
    Error::Config { what: what.into(), msg: msg.into() }
}
