//! One error type for the core. Messages are single lines that name what was
//! wrong (file, line, parameter, value) and what was expected.

use thiserror::Error;

#[derive(Debug, Error)]
/// The core's error: every variant displays as one line.
pub enum Error {
    /// A configuration or spec value is invalid: `what` names it, `msg` says why.
    #[error("{what}: {msg}")]
    Config {
        /// The value or parameter at fault.
        what: String,
        /// What was wrong and what was expected.
        msg: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {msg}")]
    File {
        /// The file.
        path: String,
        /// Why it failed.
        msg: String,
    },
    /// A line of an input file could not be parsed.
    #[error("{path}:{line}: {msg}")]
    Parse {
        /// The file.
        path: String,
        /// Line number, from 1.
        line: usize,
        /// What was found and what was expected.
        msg: String,
    },
    /// An internal invariant was violated (a bug, never a user error).
    #[error("invariant violated: {0}")]
    Invariant(String),
}

/// `Result` with the core's `Error`.
pub type Result<T> = std::result::Result<T, Error>;

/// An `Error::Config` naming `what` with the reason `msg`.
pub fn config_err(what: impl Into<String>, msg: impl Into<String>) -> Error {
    Error::Config { what: what.into(), msg: msg.into() }
}
