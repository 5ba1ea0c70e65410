//! [`ChipError`]: bad input to the chip (a program, a table entry, a configuration, a frame),
//! named. The chip returns these; it does not panic on what a user can write.

use pipelines::control::ControlError;
use pipelines::pipe::LoadError;
use pipelines::time::Time;
use std::fmt;

/// A chip-level error: bad input to the chip, named.
#[derive(Debug)]
pub enum ChipError {
    /// The program does not load on this chip.
    Load(LoadError),
    /// An entry of [`super::Chip::with_entries`] was refused.
    Entry {
        /// Which entry, from 1.
        number: usize,
        /// The table it is for (`#index` if the program has no such table).
        table: String,
        /// Why.
        error: ControlError,
    },
    /// The TM configuration does not fit the chip (names the field).
    TmConfig(tm::config::ConfigError),
    /// A control-plane operation was refused (names the object).
    Control(ControlError),
    /// No such port.
    NoSuchPort {
        /// The port asked for.
        port: u16,
        /// Ports the chip has.
        ports: u16,
    },
    /// The plumbing configuration does not fit the chip (names what is wrong).
    Config(String),
    /// A frame would start before the previous one on the same port has finished.
    PortBusy {
        /// The port.
        port: u16,
        /// When the frame would start.
        start: Time,
        /// When the port is free.
        free_at: Time,
    },
}

impl fmt::Display for ChipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChipError::Load(e) => write!(f, "program does not load: {e}"),
            ChipError::Entry {
                number,
                table,
                error,
            } => write!(f, "entry {number} (table `{table}`): {error}"),
            ChipError::Control(e) => e.fmt(f),
            ChipError::TmConfig(e) => e.fmt(f),
            ChipError::Config(e) => write!(f, "chip configuration: {e}"),
            ChipError::NoSuchPort { port, ports } => {
                write!(f, "port {port} does not exist (the chip has ports 0 to {})", ports - 1)
            }
            ChipError::PortBusy { port, start, free_at } => write!(
                f,
                "a frame on port {port} would start at {start} but the previous one occupies the wire until {free_at}"
            ),
        }
    }
}

impl std::error::Error for ChipError {}
