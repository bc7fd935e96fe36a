//! The stream command table entries, as Redis 7.0.15's src/commands/x*.json declare them.

use crate::command::{ArgDoc, ArgType, CommandSpec};

use super::entries::{xadd, xdel, xlen, xrange, xread, xreadgroup, xrevrange, xsetid, xtrim};
use super::group::{
    xack, xautoclaim, xclaim, xgroup, xgroup_help, xinfo_consumers, xinfo_groups, xinfo_help, xinfo_stream, xpending,
};

/// Every stream command.
pub fn register() -> Vec<CommandSpec> {
    vec![
        CommandSpec::new("xadd", -5, "write denyoom fast", "stream", xadd)
            .doc("stream", "5.0.0", "Appends a new entry to a stream", "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.")
            .history(&[("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."), ("7.0.0", "Added support for the `<ms>-*` explicit ID form.")])
            .tips(&["nondeterministic_output"])
            .keys("RW update", 1, 0, 1)
            .key_notes("UPDATE instead of INSERT because of the optional trimming feature")
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::token("nomkstream", "NOMKSTREAM").optional().since("6.2.0"),
                ArgDoc::block(
                  "trim",
                  vec![
                    ArgDoc::one_of(
                      "strategy",
                      vec![
                        ArgDoc::token("maxlen", "MAXLEN"),
                        ArgDoc::token("minid", "MINID").since("6.2.0"),
                      ],
                    ),
                    ArgDoc::one_of(
                      "operator",
                      vec![
                        ArgDoc::token("equal", "="),
                        ArgDoc::token("approximately", "~"),
                      ],
                    ).optional(),
                    ArgDoc::new("threshold", ArgType::String),
                    ArgDoc::new("count", ArgType::Integer).after("LIMIT").optional().since("6.2.0"),
                  ],
                ).optional(),
                ArgDoc::one_of(
                  "id_or_auto",
                  vec![
                    ArgDoc::token("auto_id", "*"),
                    ArgDoc::new("id", ArgType::String),
                  ],
                ),
                ArgDoc::block(
                  "field_value",
                  vec![
                    ArgDoc::new("field", ArgType::String),
                    ArgDoc::new("value", ArgType::String),
                  ],
                ).multiple(),
            ]),
        CommandSpec::new("xrange", -4, "readonly", "stream", xrange)
            .doc("stream", "5.0.0", "Return a range of elements in a stream, with IDs matching the specified IDs interval", "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
            .history(&[("6.2.0", "Added exclusive ranges.")])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("start", ArgType::String),
                ArgDoc::new("end", ArgType::String),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
            ]),
        CommandSpec::new("xrevrange", -4, "readonly", "stream", xrevrange)
            .doc("stream", "5.0.0", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
            .history(&[("6.2.0", "Added exclusive ranges.")])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("end", ArgType::String),
                ArgDoc::new("start", ArgType::String),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
            ]),
        CommandSpec::new("xlen", 2, "readonly fast", "stream", xlen)
            .doc("stream", "5.0.0", "Return the number of entries in a stream", "O(1)")
            .keys("RO", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("xdel", -3, "write fast", "stream", xdel)
            .doc("stream", "5.0.0", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "O(1) for each single item to delete in the stream, regardless of the stream size.")
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("id", ArgType::String).multiple(),
            ]),
        CommandSpec::new("xtrim", -4, "write", "stream", xtrim)
            .doc("stream", "5.0.0", "Trims the stream to (approximately if '~' is passed) a certain size", "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.")
            .history(&[("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option.")])
            .tips(&["nondeterministic_output"])
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block(
                  "trim",
                  vec![
                    ArgDoc::one_of(
                      "strategy",
                      vec![
                        ArgDoc::token("maxlen", "MAXLEN"),
                        ArgDoc::token("minid", "MINID").since("6.2.0"),
                      ],
                    ),
                    ArgDoc::one_of(
                      "operator",
                      vec![
                        ArgDoc::token("equal", "="),
                        ArgDoc::token("approximately", "~"),
                      ],
                    ).optional(),
                    ArgDoc::new("threshold", ArgType::String),
                    ArgDoc::new("count", ArgType::Integer).after("LIMIT").optional().since("6.2.0"),
                  ],
                ),
            ]),
        CommandSpec::new("xread", -4, "blocking readonly blocking", "stream", xread)
            .doc("stream", "5.0.0", "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.")
            .keys_keyword("RO access", "STREAMS", 1, -1, 1, 2)
            .args(vec![
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
                ArgDoc::new("milliseconds", ArgType::Integer).after("BLOCK").optional(),
                ArgDoc::block(
                  "streams",
                  vec![
                    ArgDoc::key("key", 0).multiple(),
                    ArgDoc::new("id", ArgType::String).multiple(),
                  ],
                ).after("STREAMS"),
            ]),
        CommandSpec::new("xreadgroup", -7, "blocking write", "stream", xreadgroup)
            .doc("stream", "5.0.0", "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.")
            .keys_keyword("RO access", "STREAMS", 4, -1, 1, 2)
            .args(vec![
                ArgDoc::block(
                  "group_consumer",
                  vec![
                    ArgDoc::new("group", ArgType::String),
                    ArgDoc::new("consumer", ArgType::String),
                  ],
                ).after("GROUP"),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
                ArgDoc::new("milliseconds", ArgType::Integer).after("BLOCK").optional(),
                ArgDoc::token("noack", "NOACK").optional(),
                ArgDoc::block(
                  "streams",
                  vec![
                    ArgDoc::key("key", 0).multiple(),
                    ArgDoc::new("id", ArgType::String).multiple(),
                  ],
                ).after("STREAMS"),
            ]),
        CommandSpec::new("xack", -4, "write fast", "stream", xack)
            .doc("stream", "5.0.0", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "O(1) for each message ID processed.")
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("group", ArgType::String),
                ArgDoc::new("id", ArgType::String).multiple(),
            ]),
        CommandSpec::new("xpending", -3, "readonly", "stream", xpending)
            .doc("stream", "5.0.0", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.")
            .history(&[("6.2.0", "Added the `IDLE` option and exclusive range intervals.")])
            .tips(&["nondeterministic_output"])
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("group", ArgType::String),
                ArgDoc::block(
                  "filters",
                  vec![
                    ArgDoc::new("min-idle-time", ArgType::Integer).after("IDLE").optional().since("6.2.0"),
                    ArgDoc::new("start", ArgType::String),
                    ArgDoc::new("end", ArgType::String),
                    ArgDoc::new("count", ArgType::Integer),
                    ArgDoc::new("consumer", ArgType::String).optional(),
                  ],
                ).optional(),
            ]),
        CommandSpec::new("xclaim", -6, "write fast", "stream", xclaim)
            .doc("stream", "5.0.0", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "O(log N) with N being the number of messages in the PEL of the consumer group.")
            .tips(&["nondeterministic_output"])
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("group", ArgType::String),
                ArgDoc::new("consumer", ArgType::String),
                ArgDoc::new("min-idle-time", ArgType::String),
                ArgDoc::new("id", ArgType::String).multiple(),
                ArgDoc::new("ms", ArgType::Integer).after("IDLE").optional(),
                ArgDoc::new("unix-time-milliseconds", ArgType::UnixTime).after("TIME").optional(),
                ArgDoc::new("count", ArgType::Integer).after("RETRYCOUNT").optional(),
                ArgDoc::token("force", "FORCE").optional(),
                ArgDoc::token("justid", "JUSTID").optional(),
                ArgDoc::new("id", ArgType::String).after("LASTID").optional(),
            ]),
        CommandSpec::new("xautoclaim", -6, "write fast", "stream", xautoclaim)
            .doc("stream", "6.2.0", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "O(1) if COUNT is small.")
            .history(&[("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL")])
            .tips(&["nondeterministic_output"])
            .keys("RW delete", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("group", ArgType::String),
                ArgDoc::new("consumer", ArgType::String),
                ArgDoc::new("min-idle-time", ArgType::String),
                ArgDoc::new("start", ArgType::String),
                ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
                ArgDoc::token("justid", "JUSTID").optional(),
            ]),
        CommandSpec::new("xsetid", -3, "write denyoom fast", "stream", xsetid)
            .doc("stream", "5.0.0", "An internal command for replicating stream values", "O(1)")
            .history(&[("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments.")])
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("last-id", ArgType::String),
                ArgDoc::new("entries_added", ArgType::Integer).after("ENTRIESADDED").optional().since("7.0.0"),
                ArgDoc::new("max_deleted_entry_id", ArgType::String).after("MAXDELETEDID").optional().since("7.0.0"),
            ]),
        CommandSpec::container(
            "xgroup",
            "",
            "",
            vec![
        CommandSpec::new("create", -5, "write denyoom", "stream", xgroup)
            .doc("stream", "5.0.0", "Create a consumer group.", "O(1)")
            .history(&[("7.0.0", "Added the `entries_read` named argument.")])
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("groupname", ArgType::String),
                ArgDoc::one_of(
                  "id",
                  vec![
                    ArgDoc::new("id", ArgType::String),
                    ArgDoc::token("new_id", "$"),
                  ],
                ),
                ArgDoc::token("mkstream", "MKSTREAM").optional(),
                ArgDoc::new("entries_read", ArgType::Integer).after("ENTRIESREAD").optional(),
            ]),
        CommandSpec::new("setid", -5, "write", "stream", xgroup)
            .doc("stream", "5.0.0", "Set a consumer group to an arbitrary last delivered ID value.", "O(1)")
            .history(&[("7.0.0", "Added the optional `entries_read` argument.")])
            .keys("RW update", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("groupname", ArgType::String),
                ArgDoc::one_of(
                  "id",
                  vec![
                    ArgDoc::new("id", ArgType::String),
                    ArgDoc::token("new_id", "$"),
                  ],
                ),
                ArgDoc::new("entries_read", ArgType::Integer).after("ENTRIESREAD").optional(),
            ]),
        CommandSpec::new("destroy", 4, "write", "stream", xgroup)
            .doc("stream", "5.0.0", "Destroy a consumer group.", "O(N) where N is the number of entries in the group's pending entries list (PEL).")
            .keys("RW delete", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("groupname", ArgType::String),
            ]),
        CommandSpec::new("createconsumer", 5, "write denyoom", "stream", xgroup)
            .doc("stream", "6.2.0", "Create a consumer in a consumer group.", "O(1)")
            .keys("RW insert", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("groupname", ArgType::String),
                ArgDoc::new("consumername", ArgType::String),
            ]),
        CommandSpec::new("delconsumer", 5, "write", "stream", xgroup)
            .doc("stream", "5.0.0", "Delete a consumer from a consumer group.", "O(1)")
            .keys("RW delete", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("groupname", ArgType::String),
                ArgDoc::new("consumername", ArgType::String),
            ]),
        CommandSpec::new("help", 2, "loading stale", "stream", xgroup_help)
            .doc("stream", "5.0.0", "Show helpful text about the different subcommands", "O(1)"),
            ],
        )
        .doc("stream", "5.0.0", "A container for consumer groups commands", "Depends on subcommand."),
        CommandSpec::container(
            "xinfo",
            "",
            "",
            vec![
        CommandSpec::new("stream", -3, "readonly", "stream", xinfo_stream)
            .doc("stream", "5.0.0", "Get information about a stream", "O(1)")
            .history(&[("6.0.0", "Added the `FULL` modifier."), ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields")])
            .keys("RO access", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::block(
                  "full",
                  vec![
                    ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
                  ],
                ).after("FULL").optional(),
            ]),
        CommandSpec::new("groups", 3, "readonly", "stream", xinfo_groups)
            .doc("stream", "5.0.0", "List the consumer groups of a stream", "O(1)")
            .history(&[("7.0.0", "Added the `entries-read` and `lag` fields")])
            .keys("RO access", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
            ]),
        CommandSpec::new("consumers", 4, "readonly", "stream", xinfo_consumers)
            .doc("stream", "5.0.0", "List the consumers in a consumer group", "O(1)")
            .tips(&["nondeterministic_output"])
            .keys("RO access", 2, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("groupname", ArgType::String),
            ]),
        CommandSpec::new("help", 2, "loading stale", "stream", xinfo_help)
            .doc("stream", "5.0.0", "Show helpful text about the different subcommands", "O(1)"),
            ],
        )
        .doc("stream", "5.0.0", "A container for stream introspection commands", "Depends on subcommand."),
    ]
}
