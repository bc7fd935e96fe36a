//! Pub/Sub commands: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH,
//! SPUBLISH and the PUBSUB introspection container. The registry lives in `crate::pubsub`.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::CmdResult;
use crate::exec::Ctx;
use crate::pubsub::Kind;
use crate::reply::ReplySink;

/// One (un)subscribe confirmation: a push in RESP3, an array in RESP2.
fn confirm(out: &mut dyn ReplySink, verb: &str, name: Option<&[u8]>, count: usize) {
    out.push(3);
    out.bulk(verb.as_bytes());
    match name {
        Some(name) => out.bulk(name),
        None => out.null(),
    }
    out.integer(count as i64);
}

fn subscribe_to(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, kind: Kind) -> CmdResult {
    for name in &args[1..] {
        let count = ctx.engine.pubsub.subscribe(&ctx.client.handle, kind, name);
        confirm(out, kind.verbs().0, Some(name), count);
    }
    Ok(())
}

fn unsubscribe_from(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, kind: Kind) -> CmdResult {
    let pubsub = &ctx.engine.pubsub;
    let handle = &ctx.client.handle;
    let verb = kind.verbs().1;
    if args.len() > 1 {
        for name in &args[1..] {
            let count = pubsub.unsubscribe(handle, kind, name);
            confirm(out, verb, Some(name), count);
        }
        return Ok(());
    }
    let names = pubsub.subscribed(handle, kind);
    if names.is_empty() {
        let count = handle.pubsub.lock().count(kind);
        confirm(out, verb, None, count);
    }
    for name in names {
        let count = pubsub.unsubscribe(handle, kind, &name);
        confirm(out, verb, Some(&name), count);
    }
    Ok(())
}

/// SUBSCRIBE channel [channel ...] — O(N) in the channels given.
fn subscribe(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    subscribe_to(ctx, args, out, Kind::Channel)
}

/// UNSUBSCRIBE [channel ...] — O(N) in the clients subscribed to a channel.
fn unsubscribe(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    unsubscribe_from(ctx, args, out, Kind::Channel)
}

/// PSUBSCRIBE pattern [pattern ...] — O(N) in the patterns the client has.
fn psubscribe(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    subscribe_to(ctx, args, out, Kind::Pattern)
}

/// PUNSUBSCRIBE [pattern ...] — O(N+M) in the client's and all patterns.
fn punsubscribe(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    unsubscribe_from(ctx, args, out, Kind::Pattern)
}

/// SSUBSCRIBE shardchannel [shardchannel ...] — O(N) in the shard channels given.
fn ssubscribe(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    subscribe_to(ctx, args, out, Kind::Shard)
}

/// SUNSUBSCRIBE [shardchannel ...] — O(N) in the clients subscribed to a shard channel.
fn sunsubscribe(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    unsubscribe_from(ctx, args, out, Kind::Shard)
}

fn publish_to(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, kind: Kind) -> CmdResult {
    let own = Some((ctx.client.id, &mut *out));
    let receivers = ctx.engine.pubsub.publish(kind, args[1], args[2], ctx.now_ms, own);
    if ctx.engine.cluster.enabled() {
        // In a cluster the bus carries it to the other nodes, replicas included.
        ctx.engine.cluster.published(args[1], args[2], kind == Kind::Shard);
    } else {
        // Replicas get the message too (and pass it to their own subscribers), not the AOF.
        ctx.propagate_to_replicas(args);
    }
    out.integer(receivers as i64);
    Ok(())
}

/// PUBLISH channel message — O(N+M) in the channel's subscribers and all patterns.
fn publish(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    publish_to(ctx, args, out, Kind::Channel)
}

/// SPUBLISH shardchannel message — O(N) in the shard channel's subscribers.
fn spublish(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    publish_to(ctx, args, out, Kind::Shard)
}

fn list_channels(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, kind: Kind) -> CmdResult {
    if args.len() > 3 {
        let sub = crate::error::truncate_c(args[1], 128);
        return Err(crate::error::CmdError::msg(format!(
            "ERR unknown subcommand or wrong number of arguments for '{sub}'. Try PUBSUB HELP."
        )));
    }
    let channels = ctx.engine.pubsub.channels(kind, args.get(2).copied());
    out.array(channels.len());
    for channel in channels {
        out.bulk(&channel);
    }
    Ok(())
}

fn count_subscribers(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, kind: Kind) -> CmdResult {
    out.array((args.len() - 2) * 2);
    for channel in &args[2..] {
        out.bulk(channel);
        out.integer(ctx.engine.pubsub.numsub(kind, channel) as i64);
    }
    Ok(())
}

/// PUBSUB CHANNELS [pattern] — O(N) in the active channels.
fn pubsub_channels(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    list_channels(ctx, args, out, Kind::Channel)
}

/// PUBSUB SHARDCHANNELS [pattern] — O(N) in the active shard channels.
fn pubsub_shardchannels(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    list_channels(ctx, args, out, Kind::Shard)
}

/// PUBSUB NUMSUB [channel ...] — O(N) in the channels given.
fn pubsub_numsub(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    count_subscribers(ctx, args, out, Kind::Channel)
}

/// PUBSUB SHARDNUMSUB [shardchannel ...] — O(N) in the shard channels given.
fn pubsub_shardnumsub(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    count_subscribers(ctx, args, out, Kind::Shard)
}

/// PUBSUB NUMPAT — O(1).
fn pubsub_numpat(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.integer(ctx.engine.pubsub.count(Kind::Pattern) as i64);
    Ok(())
}

/// PUBSUB HELP — O(1).
fn pubsub_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "PUBSUB",
        &[
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
        ],
    )
}

pub fn register() -> Vec<CommandSpec> {
    vec![
CommandSpec::new("subscribe", -2, "pubsub noscript loading stale", "", subscribe)
    .doc("pubsub", "2.0.0", "Listen for messages published to the given channels", "O(N) where N is the number of channels to subscribe to.")
    .args(vec![
        ArgDoc::new("channel", ArgType::String).multiple(),
    ]),
CommandSpec::new("unsubscribe", -1, "pubsub noscript loading stale", "", unsubscribe)
    .doc("pubsub", "2.0.0", "Stop listening for messages posted to the given channels", "O(N) where N is the number of clients already subscribed to a channel.")
    .args(vec![
        ArgDoc::new("channel", ArgType::String).optional().multiple(),
    ]),
CommandSpec::new("psubscribe", -2, "pubsub noscript loading stale", "", psubscribe)
    .doc("pubsub", "2.0.0", "Listen for messages published to channels matching the given patterns", "O(N) where N is the number of patterns the client is already subscribed to.")
    .args(vec![
        ArgDoc::block(
          "pattern",
          vec![
            ArgDoc::new("pattern", ArgType::Pattern),
          ],
        ).multiple(),
    ]),
CommandSpec::new("punsubscribe", -1, "pubsub noscript loading stale", "", punsubscribe)
    .doc("pubsub", "2.0.0", "Stop listening for messages posted to channels matching the given patterns", "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).")
    .args(vec![
        ArgDoc::new("pattern", ArgType::Pattern).optional().multiple(),
    ]),
CommandSpec::new("publish", 3, "pubsub loading stale fast", "", publish)
    .doc("pubsub", "2.0.0", "Post a message to a channel", "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).")
    .args(vec![
        ArgDoc::new("channel", ArgType::String),
        ArgDoc::new("message", ArgType::String),
    ]),
CommandSpec::new("ssubscribe", -2, "pubsub noscript loading stale", "", ssubscribe)
    .doc("pubsub", "7.0.0", "Listen for messages published to the given shard channels", "O(N) where N is the number of shard channels to subscribe to.")
    .keys("not_key", 1, -1, 1)
    .args(vec![
        ArgDoc::new("shardchannel", ArgType::String).multiple(),
    ]),
CommandSpec::new("sunsubscribe", -1, "pubsub noscript loading stale", "", sunsubscribe)
    .doc("pubsub", "7.0.0", "Stop listening for messages posted to the given shard channels", "O(N) where N is the number of clients already subscribed to a shard channel.")
    .keys("not_key", 1, -1, 1)
    .args(vec![
        ArgDoc::new("shardchannel", ArgType::String).optional().multiple(),
    ]),
CommandSpec::new("spublish", 3, "pubsub loading stale fast", "", spublish)
    .doc("pubsub", "7.0.0", "Post a message to a shard channel", "O(N) where N is the number of clients subscribed to the receiving shard channel.")
    .keys("not_key", 1, 0, 1)
    .args(vec![
        ArgDoc::new("shardchannel", ArgType::String),
        ArgDoc::new("message", ArgType::String),
    ]),
        CommandSpec::container(
            "pubsub",
            "",
            "",
            vec![
CommandSpec::new("channels", -2, "pubsub loading stale", "", pubsub_channels)
    .doc("pubsub", "2.8.0", "List active channels", "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)")
    .args(vec![
        ArgDoc::new("pattern", ArgType::Pattern).optional(),
    ]),
CommandSpec::new("numsub", -2, "pubsub loading stale", "", pubsub_numsub)
    .doc("pubsub", "2.8.0", "Get the count of subscribers for channels", "O(N) for the NUMSUB subcommand, where N is the number of requested channels")
    .args(vec![
        ArgDoc::new("channel", ArgType::String).optional().multiple(),
    ]),
CommandSpec::new("numpat", 2, "pubsub loading stale", "", pubsub_numpat)
    .doc("pubsub", "2.8.0", "Get the count of unique patterns pattern subscriptions", "O(1)")
    ,
CommandSpec::new("shardchannels", -2, "pubsub loading stale", "", pubsub_shardchannels)
    .doc("pubsub", "7.0.0", "List active shard channels", "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).")
    .args(vec![
        ArgDoc::new("pattern", ArgType::Pattern).optional(),
    ]),
CommandSpec::new("shardnumsub", -2, "pubsub loading stale", "", pubsub_shardnumsub)
    .doc("pubsub", "7.0.0", "Get the count of subscribers for shard channels", "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels")
    .args(vec![
        ArgDoc::new("shardchannel", ArgType::String).optional().multiple(),
    ]),
CommandSpec::new("help", 2, "loading stale", "", pubsub_help)
    .doc("pubsub", "6.2.0", "Show helpful text about the different subcommands", "O(1)")
    ,
            ],
        )
        .doc("pubsub", "2.8.0", "A container for Pub/Sub commands", "Depends on subcommand."),
    ]
}
