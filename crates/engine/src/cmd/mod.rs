//! Command families, one module each: data operations first, handlers below, and a
//! `register()` at the bottom declaring each command's spec.

pub mod acl;
pub mod bitmap;
pub mod client;
pub mod cluster;
pub mod connection;
pub mod debug;
pub mod geo;
pub mod hash;
pub mod hyperloglog;
pub mod info;
pub mod keys;
pub mod latency;
pub mod list;
pub mod lolwut;
pub mod memory;
pub mod module;
pub mod multi;
pub mod pubsub;
pub mod scripting;
pub mod server;
pub mod set;
pub mod slowlog;
pub mod sort;
pub mod stream;
pub mod string;
pub mod zset;

use crate::command::CommandSpec;
use crate::error::CmdError;

/// Every command quince serves.
pub fn all_commands() -> Vec<CommandSpec> {
    let mut all = Vec::new();
    all.extend(connection::register());
    all.extend(string::register());
    all.extend(keys::register());
    all.extend(server::register());
    all.extend(client::register());
    all.extend(debug::register());
    all.extend(info::register());
    all.extend(slowlog::register());
    all.extend(latency::register());
    all.extend(memory::register());
    all.extend(module::register());
    all.extend(pubsub::register());
    all.extend(hyperloglog::register());
    all.extend(bitmap::register());
    all.extend(cluster::register());
    all.extend(sort::register());
    all.extend(geo::register());
    all.extend(list::register());
    all.extend(multi::register());
    all.extend(zset::register());
    all.extend(hash::register());
    all.extend(set::register());
    all.extend(stream::register());
    all.extend(scripting::register());
    all.extend(acl::register());
    all
}

/// C's atoi, as Redis reads some arguments (DEBUG's, the AOF manifest's seq, the Lua
/// debugger's): leading blanks, an optional sign and the leading digits (anything else,
/// or a value beyond i64, is 0).
pub fn atoi(arg: &[u8]) -> i64 {
    let mut i = arg.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let sign = match arg.get(i) {
        Some(b'-') => {
            i += 1;
            -1
        }
        Some(b'+') => {
            i += 1;
            1
        }
        _ => 1,
    };
    arg[i..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .try_fold(0i64, |n, &b| n.checked_mul(10)?.checked_add(i64::from(b - b'0')))
        .map_or(0, |n| sign * n)
}

/// An integer argument, parsed as strictly as Redis's `getLongLongFromObjectOrReply`.
pub fn parse_i64(arg: &[u8]) -> Result<i64, CmdError> {
    quince_resp::parse_i64_strict(arg).ok_or(CmdError::NotInteger)
}

/// Case-insensitive keyword comparison for option parsing.
pub fn is(arg: &[u8], keyword: &str) -> bool {
    arg.eq_ignore_ascii_case(keyword.as_bytes())
}

/// The command a deletion is logged as: UNLINK when the lazyfree option that governs it
/// (`lazyfree-lazy-expire`, `lazyfree-lazy-user-del`...) is on, DEL otherwise, as Redis's
/// `server.lazyfree_lazy_* ? shared.unlink : shared.del`.
pub fn deletion_command(ctx: &crate::exec::Ctx<'_>, lazyfree_option: &str) -> &'static [u8] {
    if ctx.engine.config.read().get_bool(lazyfree_option) {
        b"UNLINK"
    } else {
        b"DEL"
    }
}
