//! GET and SET without the general executor, for the embedded library's `Db::get` and
//! `Db::set` and the server's requests (`execute_fast`).
//!
//! `Engine::execute` checks a dozen things per command (arity, authentication, ACL, memory,
//! replicas, the pub/sub context, the loading and replica states, MONITOR, tracking,
//! keyspace events, WATCH, blocked clients, the log...) and builds a `Ctx`; for a plain GET
//! or SET in the common state none of them applies, and together they cost more than the
//! work itself. `fast_get` and `fast_set` check once that the state is the common one and
//! otherwise decline, so the caller runs the command through `execute`, which handles
//! every case. What the command leaves behind is the same either way: the value, the key's
//! access time (LRU/LFU), keyspace hits and misses, the dataset's change count, the
//! command's calls, time and latency histogram in INFO, the slow log, and the client's last
//! command and interaction time in CLIENT LIST. docs/embedded.md ("The fast path") lists
//! the cases that decline.

use std::sync::atomic::Ordering;

use crate::cmd::string::as_str;
use crate::exec::{Client, HeldShards, ReplyMode};
use crate::keyspace::{Stale, StrValue, TtlOnWrite, Value};
use crate::reply::ReplySink;
use crate::Engine;

/// The commands with a fast path, as indexes of `Engine::fast_commands`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FastCommand {
    Get = 0,
    Set = 1,
    Incr = 2,
}

/// Which fast command `args` ask for by name and argument count (`GET key`, `SET key value`,
/// `INCR key`), if any.
fn fast_command(args: &[&[u8]]) -> Option<FastCommand> {
    match *args {
        [name, _] if name.eq_ignore_ascii_case(b"get") => Some(FastCommand::Get),
        [name, _, _] if name.eq_ignore_ascii_case(b"set") => Some(FastCommand::Set),
        [name, _] if name.eq_ignore_ascii_case(b"incr") => Some(FastCommand::Incr),
        _ => None,
    }
}

/// Their names, by `FastCommand`.
pub(crate) const FAST_COMMAND_NAMES: [&str; crate::observe::FAST_COMMANDS] = ["get", "set", "incr"];

impl Engine {
    /// A request of the server's: `GET key`, `SET key value` (no options) or `INCR key` on the fast
    /// path, its reply written to `out`, as `execute` would write it. False when it is
    /// another request or the fast path declines: the caller runs it through `execute`.
    pub fn execute_fast(&self, client: &mut Client, args: &[&[u8]], out: &mut dyn ReplySink) -> bool {
        match fast_command(args) {
            Some(FastCommand::Get) => self
                .fast_get(client, args[1], |value| match value {
                    Some(bytes) => out.bulk(bytes),
                    None => out.null(),
                })
                .is_some(),
            Some(FastCommand::Set) => {
                let done = self.fast_set(client, args[1], args[2]);
                if done {
                    out.simple("OK");
                }
                done
            }
            Some(FastCommand::Incr) => match self.fast_incr(client, args[1]) {
                Some(value) => {
                    out.integer(value);
                    true
                }
                None => false,
            },
            None => false,
        }
    }

    /// GET `key` in the client's database, as `execute` would run it, handing the value
    /// (None: no such key) to `reply`. None when something unusual is in force: the
    /// caller runs GET through `execute` instead.
    pub fn fast_get<R>(&self, client: &mut Client, key: &[u8], reply: impl FnOnce(Option<&[u8]>) -> R) -> Option<R> {
        let index = self.fast_commands[FastCommand::Get as usize]?;
        if !self.plain_state(client) {
            return None;
        }
        // The shared side of the transaction gate, as every command: a script or EXEC
        // holding it exclusively makes this decline rather than wait.
        let _gate = self.exec_gate.try_read()?;
        let start_us = client.batch_start_us().unwrap_or_else(|| self.clock.now_us());
        let now_ms = start_us / 1000;
        let mode = self.access_mode();
        let (result, hit) = {
            let mut shard = self.keyspace.try_lock(self.keyspace.shard_of(key))?;
            let entry = match shard.dbs[client.db].read_live(key, now_ms, mode) {
                Ok(entry) => entry,
                // Expiring the key writes (the log, notifications): the general path's.
                Err(Stale) => return None,
            };
            match entry.map(as_str) {
                None => (reply(None), false),
                Some(Ok(StrValue::Int(n))) => (reply(Some(quince_resp::format_i64(*n).as_bytes())), true),
                Some(Ok(StrValue::Embstr(b))) => (reply(Some(b)), true),
                Some(Ok(StrValue::Raw(b))) => (reply(Some(b)), true),
                // WRONGTYPE: an error the general path counts and renders.
                Some(Err(_)) => return None,
            }
        };
        self.fast_done(client, FastCommand::Get, index, &[b"GET", key], start_us, Some(hit));
        Some(result)
    }

    /// SET `key` `value` (no options) in the client's database, as `execute` would run it.
    /// False when something unusual is in force: the caller runs SET through `execute`.
    pub fn fast_set(&self, client: &mut Client, key: &[u8], value: &[u8]) -> bool {
        let Some(index) = self.fast_commands[FastCommand::Set as usize] else { return false };
        if !self.plain_writer(client) {
            return false;
        }
        let Some(_gate) = self.exec_gate.try_read() else { return false };
        if !self.writes_unheard() {
            return false;
        }
        let start_us = client.batch_start_us().unwrap_or_else(|| self.clock.now_us());
        let now_ms = start_us / 1000;
        let mode = self.access_mode();
        {
            let Some(mut shard) = self.keyspace.try_lock(self.keyspace.shard_of(key)) else { return false };
            let db = &mut shard.dbs[client.db];
            Self::prepare_for_write(db, mode, self);
            db.set(key, Value::string(value), TtlOnWrite::Clear, now_ms);
        }
        self.fast_done(client, FastCommand::Set, index, &[b"SET", key, value], start_us, None);
        true
    }

    /// INCR `key` in the client's database, as `execute` would run it, for a key that
    /// holds an integer: its new value. None when the key is missing, expired, of another
    /// type or no integer, the sum overflows, or something unusual is in force: the caller
    /// runs INCR through `execute` (which creates the key or replies the error).
    pub fn fast_incr(&self, client: &mut Client, key: &[u8]) -> Option<i64> {
        let index = self.fast_commands[FastCommand::Incr as usize]?;
        if !self.plain_writer(client) {
            return None;
        }
        let _gate = self.exec_gate.try_read()?;
        if !self.writes_unheard() {
            return None;
        }
        let start_us = client.batch_start_us().unwrap_or_else(|| self.clock.now_us());
        let mode = self.access_mode();
        let value = {
            let mut shard = self.keyspace.try_lock(self.keyspace.shard_of(key))?;
            shard.dbs[client.db].incr_live(key, 1, start_us / 1000, mode)?
        };
        self.fast_done(client, FastCommand::Incr, index, &[b"INCR", key], start_us, None);
        Some(value)
    }

    /// A script's `GET key`, `SET key value` (no options) or `INCR key` (redis.call, `spec`
    /// resolved and checked by the script) on the fast path: in the shard the script holds
    /// (`held`), or that it locks itself when it runs alone, at the script's frozen time.
    /// The reply is written to `out` and the command counted as every fast command is
    /// (`fast_done`: the script client's own counters, as `execute_in_script` would count
    /// calls, time, hits and misses and commands processed; the slow log). False, with
    /// nothing done, when the caller must run it that way. `shard`: the key's, if known.
    pub(crate) fn fast_in_script(
        &self,
        client: &mut Client,
        args: &[&[u8]],
        spec: &crate::command::CommandSpec,
        shard: Option<usize>,
        held: Option<&mut HeldShards<'_>>,
        out: &mut dyn ReplySink,
    ) -> bool {
        let Some(command) = fast_command(args) else { return false };
        // (A renamed command is not the one its name says.)
        let Some(index) = self.fast_commands[command as usize].filter(|&index| self.table.at(index).id == spec.id)
        else {
            return false;
        };
        let writes = !matches!(command, FastCommand::Get);
        let plain = client.reply_mode == ReplyMode::On
            && !client.must_obey
            && !self.is_loading()
            && !self.hot.replica_keeps_expired.load(Ordering::Relaxed)
            && self.hot.notify_flags.load(Ordering::Relaxed) == 0
            && !self.tracking.active()
            && !self.clients.has_monitors()
            && (!writes
                || self.watch_count.load(Ordering::Relaxed) == 0
                    && self.blocked_count.load(Ordering::Relaxed) == 0
                    && self.writes_unheard());
        if !plain {
            return false;
        }
        let key = args[1];
        let shard = shard.unwrap_or_else(|| self.keyspace.shard_of(key));
        let mut own;
        let shard: &mut crate::keyspace::Shard = match held {
            Some(held) => match held.iter_mut().find(|(s, _)| *s == shard) {
                Some((_, access)) => access,
                None => return false,
            },
            None => match self.keyspace.try_lock(shard) {
                Some(guard) => {
                    own = guard;
                    &mut own
                }
                None => return false,
            },
        };
        let start_us = client.batch_start_us().unwrap_or_else(|| self.clock.now_us());
        // Time stands still inside a script, as in Redis.
        let now_ms = client.script_now_ms;
        let mode = self.access_mode();
        let db = &mut shard.dbs[client.db];
        let hit = match command {
            FastCommand::Get => {
                let found = match db.read_live(key, now_ms, mode) {
                    Err(Stale) => return false,
                    Ok(None) => None,
                    Ok(Some(entry)) => match as_str(entry) {
                        Ok(value) => Some(value),
                        Err(_) => return false,
                    },
                };
                match found {
                    None => out.null(),
                    Some(value) => crate::cmd::string::reply_str(out, value),
                }
                Some(found.is_some())
            }
            FastCommand::Set => {
                Self::prepare_for_write(db, mode, self);
                db.set(key, Value::string(args[2]), TtlOnWrite::Clear, now_ms);
                out.simple("OK");
                None
            }
            FastCommand::Incr => {
                let Some(value) = db.incr_live(key, 1, now_ms, mode) else { return false };
                out.integer(value);
                None
            }
        };
        self.fast_done(client, command, index, args, start_us, hit);
        true
    }

    /// A table about to take a fast write nobody listens to, as `Ctx::db_at` prepares it.
    fn prepare_for_write(db: &mut crate::keyspace::Db, mode: crate::keyspace::AccessMode, engine: &Engine) {
        db.access_mode = mode;
        db.set_lazy_free(engine.hot.lazy_free_mask.load(Ordering::Relaxed), &engine.lazyfree);
        db.set_collect_events(0);
        db.expiry_suspended = false;
        db.expiry_deferred = false;
        db.track_local_ttls = false;
    }

    /// A fast write may run: the state is plain, and nothing hears of writes: no WATCH,
    /// blocked clients, or min-replicas-to-write to satisfy.
    fn plain_writer(&self, client: &Client) -> bool {
        self.plain_state(client)
            && self.watch_count.load(Ordering::Relaxed) == 0
            && self.blocked_count.load(Ordering::Relaxed) == 0
            && !self.hot.writes_need_replicas.load(Ordering::Relaxed)
    }

    /// No log or replica to feed, and writes not refused (MISCONF). Asked under the gate:
    /// a replica's SYNC and turning the AOF on take it exclusively, so neither can start
    /// while a fast write runs unlogged.
    fn writes_unheard(&self) -> bool {
        !self.persistence().is_some_and(|p| p.wants_effects() || p.write_refusal().is_some())
    }

    /// After a fast command (at `index` in the command table): what `execute` records of a
    /// command that ran. `hit`: whether a read found its key.
    fn fast_done(
        &self,
        client: &mut Client,
        command: FastCommand,
        index: usize,
        args: &[&[u8]],
        start_us: i64,
        hit: Option<bool>,
    ) {
        let spec = self.table.at(index);
        client.handle.last_command.store(spec.id, Ordering::Relaxed);
        client.handle.last_interaction_ms.store(start_us / 1000, Ordering::Relaxed);
        let end_us = self.clock.now_us();
        client.batch_ended(end_us);
        let duration_us = (end_us - start_us).max(0) as u64;
        // PERF: counted by the client itself (commands processed, hits or misses, the
        // command's calls, time and latency): no locked instruction.
        let track_latency = self.hot.latency_tracking.load(Ordering::Relaxed);
        self.observe.locals.record(&mut client.local_stats, command as usize, duration_us, hit, track_latency);
        self.log_if_slow(client, spec, args, start_us, duration_us);
    }

    /// Nothing about the client or the server's state could make a GET or SET behave
    /// otherwise than a plain lookup or store: every check `execute` makes would pass, and
    /// nothing watches commands or keys (MONITOR, client-side caching, keyspace events).
    fn plain_state(&self, client: &Client) -> bool {
        client.multi.is_none()
            && !client.in_exec
            && !client.in_script
            && client.blocked.is_none()
            && client.reply_mode == ReplyMode::On
            && client.user.is_unrestricted()
            && !self.acl.auth_required(client.authenticated)
            // (A RESP2 subscriber may only run (un)subscribe commands.)
            && (client.protocol != quince_resp::Protocol::Resp2
                || !client.handle.has_flag(crate::clients::flag::PUBSUB))
            && !client.handle.has_flag(crate::clients::flag::REPLICA)
            && !self.is_loading()
            && !self.is_async_loading()
            // A replica may refuse commands (MASTERDOWN, READONLY) and keeps expired keys.
            && !self.hot.replica_keeps_expired.load(Ordering::Relaxed)
            // Over `maxmemory` every command evicts first.
            && self.hot.maxmemory.load(Ordering::Relaxed) == 0
            && self.hot.notify_flags.load(Ordering::Relaxed) == 0
            && !self.tracking.active()
            && !self.clients.has_monitors()
            && !self.scripting.busy(&*self.clock)
            // The server's: a cluster node redirects keys it does not serve; after
            // SHUTDOWN's final save nothing runs.
            && !self.cluster.enabled()
            && !self.shutdown_requested()
    }
}
