//! The hook through which a persistence layer (the `quince-persist` crate) plugs into the
//! engine. The engine knows nothing of files: it hands every write's effects to the hook in
//! execution order, and the commands that need files (SAVE, BGSAVE, DEBUG RELOAD, DUMP...)
//! are registered by the persistence layer itself through `EngineOptions::extra_commands`.

use std::any::Any;

use crate::Engine;

/// What the engine asks of a persistence layer.
pub trait Persistence: Send + Sync + 'static {
    /// For the persistence layer's own commands to reach their state (downcast).
    fn as_any(&self) -> &dyn Any;

    /// Whether `feed` wants effects at all (false: the engine skips encoding them).
    fn wants_effects(&self) -> bool;

    /// The effects of one write (one command, or one whole transaction or script wrapped in
    /// MULTI/EXEC), RESP-encoded, for database `db`. Called in execution order for any
    /// two writes that touch a common key: while their shard locks (or the exclusive
    /// transaction gate) are still held.
    fn feed(&self, db: usize, effects: &[u8]);

    /// The `# Persistence` section of INFO, without its header line.
    fn info_fields(&self, engine: &Engine) -> String;

    /// Why writes are refused right now (a `-MISCONF ...` line without the dash), if they are.
    fn write_refusal(&self) -> Option<String>;
}
