//! Executing one command: lookup, arity and auth checks driven by the spec, locking the
//! shards of the command's keys in ascending order, running the handler.

use parking_lot::MutexGuard;
use quince_resp::Protocol;
use smallvec::SmallVec;

use crate::command::{CommandSpec, Resolved};
use crate::error::{truncate_c, CmdError};
use crate::keyspace::{AccessMode, Db, Shard};
use crate::reply::ReplySink;
use crate::Engine;
use std::sync::atomic::Ordering;

/// Per-connection state the engine needs (the server keeps sockets and buffers itself).
#[derive(Debug, Clone)]
pub struct Client {
    pub id: u64,
    pub db: usize,
    pub protocol: Protocol,
    pub name: Option<Vec<u8>>,
    pub authenticated: bool,
    /// Set by QUIT (and protocol errors): reply, then close the connection.
    pub close_after_reply: bool,
}

impl Client {
    pub fn new(id: u64, authenticated: bool) -> Self {
        Self { id, db: 0, protocol: Protocol::Resp2, name: None, authenticated, close_after_reply: false }
    }
}

/// What a handler sees: the engine, the calling client, the time the command started,
/// and the shards of its declared keys, already locked.
pub struct Ctx<'a> {
    pub engine: &'a Engine,
    pub client: &'a mut Client,
    pub spec: &'a CommandSpec,
    /// One timestamp per command, so a command sees a consistent time (as Redis caches it).
    pub now_ms: i64,
    /// How key lookups record access (LRU clock or LFU counter), fixed for the command.
    pub access_mode: AccessMode,
    locked: SmallVec<[(usize, MutexGuard<'a, Shard>); 2]>,
}

impl<'a> Ctx<'a> {
    /// The selected database's part of the shard owning `key`.
    ///
    /// INVARIANT: `key` is one of the command's declared keys, so its shard is locked.
    pub fn db(&mut self, key: &[u8]) -> &mut Db {
        let shard = self.engine.keyspace.shard_of(key);
        let db = self.client.db;
        let (_, guard) = self
            .locked
            .iter_mut()
            .find(|(s, _)| *s == shard)
            .unwrap_or_else(|| panic!("command {} touched an undeclared key", self.spec.name));
        let db = &mut guard.dbs[db];
        db.access_mode = self.access_mode;
        db
    }

    /// The database `db` (not the selected one) within the shard owning `key` (MOVE, COPY).
    ///
    /// INVARIANT: as for `db`.
    pub fn db_at(&mut self, key: &[u8], db: usize) -> &mut Db {
        let shard = self.engine.keyspace.shard_of(key);
        let (_, guard) = self
            .locked
            .iter_mut()
            .find(|(s, _)| *s == shard)
            .unwrap_or_else(|| panic!("command {} touched an undeclared key", self.spec.name));
        let db = &mut guard.dbs[db];
        db.access_mode = self.access_mode;
        db
    }

    pub fn hit(&self, found: bool) {
        let counter = if found { &self.engine.stats.keyspace_hits } else { &self.engine.stats.keyspace_misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

impl Engine {
    /// Runs one command and writes its reply (or error) to `out`.
    pub fn execute(&self, client: &mut Client, args: &[&[u8]], out: &mut dyn ReplySink) {
        if args.is_empty() {
            return;
        }
        self.stats.total_commands_processed.fetch_add(1, Ordering::Relaxed);
        let spec = match self.table.resolve(args) {
            Resolved::Found(spec) => spec,
            Resolved::UnknownSubcommand(parent) => {
                out.error(&CmdError::UnknownSubcommand(args[1].to_vec()).render(&parent.name));
                return;
            }
            Resolved::Unknown => {
                out.error(&unknown_command_error(args));
                return;
            }
        };
        let argc = args.len() as i32;
        if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
            out.error(&format!("ERR wrong number of arguments for '{}' command", spec.name));
            return;
        }
        if !client.authenticated && !spec.has_flag("no_auth") {
            out.error("NOAUTH Authentication required.");
            return;
        }
        let Some(handler) = spec.handler else {
            out.error(&CmdError::UnknownSubcommand(args[1].to_vec()).render(&spec.name));
            return;
        };
        let mut shards: SmallVec<[usize; 4]> =
            spec.key_positions(args.len()).map(|p| self.keyspace.shard_of(args[p])).collect();
        shards.sort_unstable();
        shards.dedup();
        // Lock in ascending shard order: the global order that keeps multi-key commands
        // from deadlocking each other.
        let locked = shards.iter().map(|&s| (s, self.keyspace.lock(s))).collect();
        let access_mode = self.access_mode();
        let mut ctx = Ctx { engine: self, client, spec, now_ms: self.clock.now_ms(), access_mode, locked };
        if let Err(e) = handler(&mut ctx, args, out) {
            out.error(&e.render(&spec.name));
        }
    }
}

/// `ERR unknown command '<name>', with args beginning with: '<a1>' '<a2>' ...`, with the
/// same 128-byte truncation as Redis.
fn unknown_command_error(args: &[&[u8]]) -> String {
    let mut listed = String::new();
    for arg in &args[1..] {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        listed.push('\'');
        listed.push_str(&truncate_c(arg, room));
        listed.push_str("' ");
    }
    format!("ERR unknown command '{}', with args beginning with: {}", truncate_c(args[0], 128), listed)
}
