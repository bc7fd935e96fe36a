//! Connection commands: PING ECHO HELLO AUTH SELECT QUIT RESET.

use quince_resp::Protocol;

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;
use crate::REDIS_VERSION;

use super::{is, parse_i64};

/// Validates a client name as Redis's `clientSetNameOrReply` does; empty clears it.
pub fn set_client_name(ctx: &mut Ctx<'_>, name: &[u8]) -> CmdResult {
    if name.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return Err(CmdError::msg("ERR Client names cannot contain spaces, newlines or special characters."));
    }
    ctx.client.set_name((!name.is_empty()).then(|| name.to_vec()));
    Ok(())
}

/// PING [message] — O(1).
fn ping(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 2 {
        return Err(CmdError::msg("ERR wrong number of arguments for 'ping' command"));
    }
    // A RESP2 subscriber gets a Pub/Sub-shaped reply it can tell from messages.
    if ctx.client.protocol == Protocol::Resp2 && ctx.client.handle.has_flag(crate::clients::flag::PUBSUB) {
        out.array(2);
        out.bulk(b"pong");
        out.bulk(args.get(1).copied().unwrap_or(b""));
        return Ok(());
    }
    match args.get(1) {
        Some(msg) => out.bulk(msg),
        None => out.simple("PONG"),
    }
    Ok(())
}

/// ECHO message — O(1).
fn echo(_ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.bulk(args[1]);
    Ok(())
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]] — O(1).
fn hello(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut version = None;
    if let Some(v) = args.get(1) {
        let v = parse_i64(v).map_err(|_| CmdError::msg("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&v) {
            return Err(CmdError::msg("NOPROTO unsupported protocol version"));
        }
        version = Some(v);
    }
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "AUTH") && more >= 2 {
            if !ctx.engine.authenticate(ctx.client, args[0], args[j + 1], args[j + 2]) {
                return Err(CmdError::msg("WRONGPASS invalid username-password pair or user is disabled."));
            }
            j += 3;
        } else if is(args[j], "SETNAME") && more >= 1 {
            set_client_name(ctx, args[j + 1])?;
            j += 2;
        } else {
            return Err(CmdError::msg(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(args[j])
            )));
        }
    }
    if ctx.engine.acl.auth_required(ctx.client.authenticated) {
        return Err(CmdError::msg(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO AUTH <user> <pass> option can be used to authenticate the client and select \
             the RESP protocol version at the same time",
        ));
    }
    if let Some(v) = version {
        ctx.client.protocol = if v == 3 { Protocol::Resp3 } else { Protocol::Resp2 };
        ctx.client.handle.resp.store(v as u8, std::sync::atomic::Ordering::Relaxed);
        // HELLO's own reply already uses the protocol it selects.
        out.set_protocol(ctx.client.protocol);
    }
    out.map(7);
    out.bulk(b"server");
    out.bulk(b"redis");
    out.bulk(b"version");
    out.bulk(REDIS_VERSION.as_bytes());
    out.bulk(b"proto");
    out.integer(ctx.client.protocol.version());
    out.bulk(b"id");
    out.integer(ctx.client.id as i64);
    out.bulk(b"mode");
    out.bulk(if ctx.engine.cluster.enabled() { b"cluster" } else { b"standalone" });
    out.bulk(b"role");
    out.bulk(b"master");
    out.bulk(b"modules");
    out.array(0);
    Ok(())
}

/// AUTH [username] password — O(1).
fn auth(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let (user, pass) = if args.len() == 3 { (args[1], args[2]) } else { (&b"default"[..], args[1]) };
    let default_nopass = ctx.engine.acl.default_user.rules().has(crate::acl::rules::user_flags::NOPASS);
    if args.len() == 2 && default_nopass {
        return Err(CmdError::msg(
            "ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        ));
    }
    if !ctx.engine.authenticate(ctx.client, args[0], user, pass) {
        return Err(CmdError::msg("WRONGPASS invalid username-password pair or user is disabled."));
    }
    out.simple("OK");
    Ok(())
}

/// SELECT index — O(1).
fn select(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let index = parse_i64(args[1])?;
    // Redis parses into an int and says so when the value does not fit.
    let index = i32::try_from(index)
        .map_err(|_| CmdError::msg("ERR value is out of range, value must between -2147483648 and 2147483647"))?;
    if ctx.engine.cluster.enabled() && index != 0 {
        return Err(CmdError::msg("ERR SELECT is not allowed in cluster mode"));
    }
    if index < 0 || index as usize >= ctx.engine.keyspace.databases() {
        return Err(CmdError::DbIndexOutOfRange);
    }
    ctx.client.select(index as usize);
    out.simple("OK");
    Ok(())
}

/// QUIT — O(1). Replies OK, then the connection is closed.
fn quit(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ctx.client.close_after_reply = true;
    out.simple("OK");
    Ok(())
}

/// RESET — O(1). Back to a fresh connection's state: db 0, RESP2, no name, the default
/// user, not authenticated when that user needs a password.
fn reset(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    ctx.client.select(0);
    ctx.client.protocol = Protocol::Resp2;
    ctx.client.handle.resp.store(2, std::sync::atomic::Ordering::Relaxed);
    ctx.client.reply_mode = crate::exec::ReplyMode::On;
    ctx.client.set_name(None);
    if ctx.client.handle.has_flag(crate::clients::flag::MONITOR) {
        ctx.client.handle.set_flag(crate::clients::flag::MONITOR, false);
        ctx.engine.clients.remove_monitor(ctx.client.id);
    }
    let default_user = ctx.engine.acl.default_user.clone();
    let open = ctx.engine.acl.new_connection_authenticated();
    ctx.engine.set_user(ctx.client, default_user, open);
    ctx.engine.tracking.disable(&ctx.client.handle);
    ctx.engine.discard_transaction(ctx.client);
    ctx.engine.pubsub.unsubscribe_all(&ctx.client.handle);
    out.simple("RESET");
    Ok(())
}

pub fn register() -> Vec<CommandSpec> {
    const ALWAYS: &str = "noscript loading stale fast no_auth allow_busy";
    vec![
        CommandSpec::new("ping", -1, "fast", "connection", ping)
            .doc("connection", "1.0.0", "Ping the server", "O(1)")
            .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
            .args(vec![ArgDoc::new("message", ArgType::String).optional()]),
        CommandSpec::new("echo", 2, "loading stale fast", "connection", echo)
            .doc("connection", "1.0.0", "Echo the given string", "O(1)")
            .args(vec![ArgDoc::new("message", ArgType::String)]),
        CommandSpec::new("hello", -1, ALWAYS, "connection", hello)
            .doc("connection", "6.0.0", "Handshake with Redis", "O(1)")
            .history(&[("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context.")])
            .args(vec![ArgDoc::block(
                "arguments",
                vec![
                    ArgDoc::new("protover", ArgType::Integer),
                    ArgDoc::block(
                        "username_password",
                        vec![ArgDoc::new("username", ArgType::String), ArgDoc::new("password", ArgType::String)],
                    )
                    .after("AUTH")
                    .optional(),
                    ArgDoc::new("clientname", ArgType::String).after("SETNAME").optional(),
                ],
            )
            .optional()]),
        CommandSpec::new("auth", -2, "noscript loading stale fast no_auth allow_busy", "connection", auth)
            .doc("connection", "1.0.0", "Authenticate to the server", "O(N) where N is the number of passwords defined for the user")
            .history(&[("6.0.0", "Added ACL style (username and password).")])
            .args(vec![
                ArgDoc::new("username", ArgType::String).optional().since("6.0.0"),
                ArgDoc::new("password", ArgType::String),
            ]),
        CommandSpec::new("select", 2, "loading stale fast", "connection", select)
            .doc("connection", "1.0.0", "Change the selected database for the current connection", "O(1)")
            .args(vec![ArgDoc::new("index", ArgType::Integer)]),
        CommandSpec::new("quit", -1, ALWAYS, "connection", quit)
            .doc("connection", "1.0.0", "Close the connection", "O(1)"),
        CommandSpec::new("reset", 1, ALWAYS, "connection", reset)
            .doc("connection", "6.2.0", "Reset the connection", "O(1)"),
    ]
}
