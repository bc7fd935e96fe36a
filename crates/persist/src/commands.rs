//! The commands the persistence layer serves; the host passes them to the engine through
//! `EngineOptions::extra_commands`.

use quince_engine::CommandSpec;

/// Every command of this crate.
pub fn commands() -> Vec<CommandSpec> {
    let mut all = Vec::new();
    all.extend(crate::dump::register());
    all
}
