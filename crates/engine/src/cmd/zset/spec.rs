//! The sorted set command table entries, as Redis 7.0.15's src/commands/z*.json declare them.

use crate::command::{ArgDoc, ArgType, CommandSpec};

use super::range::{zrange, zrangebylex, zrangebyscore, zrangestore, zrevrange, zrevrangebylex, zrevrangebyscore};
use super::read::{zcard, zcount, zlexcount, zmscore, zrandmember, zrank, zrevrank, zscan, zscore};
use super::setops::{zdiff, zdiffstore, zinter, zintercard, zinterstore, zunion, zunionstore};
use super::write::{
    bzmpop, bzpopmax, bzpopmin, zadd, zincrby, zmpop, zpopmax, zpopmin, zrem, zremrangebylex, zremrangebyrank,
    zremrangebyscore,
};

/// Every sorted set command.
pub fn register() -> Vec<CommandSpec> {
    vec![
CommandSpec::new("zadd", -4, "write denyoom fast", "sortedset", zadd)
    .doc("sorted-set", "1.2.0", "Add one or more members to a sorted set, or update its score if it already exists", "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
    .history(&[("2.4.0", "Accepts multiple elements."), ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."), ("6.2.0", "Added the `GT` and `LT` options.")])
    .keys("RW update", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::one_of(
          "condition",
          vec![
            ArgDoc::token("nx", "NX"),
            ArgDoc::token("xx", "XX"),
          ],
        ).optional().since("3.0.2"),
        ArgDoc::one_of(
          "comparison",
          vec![
            ArgDoc::token("gt", "GT"),
            ArgDoc::token("lt", "LT"),
          ],
        ).optional().since("6.2.0"),
        ArgDoc::token("change", "CH").optional().since("3.0.2"),
        ArgDoc::token("increment", "INCR").optional().since("3.0.2"),
        ArgDoc::block(
          "score_member",
          vec![
            ArgDoc::new("score", ArgType::Double),
            ArgDoc::new("member", ArgType::String),
          ],
        ).multiple(),
    ]),

CommandSpec::new("zincrby", 4, "write denyoom fast", "sortedset", zincrby)
    .doc("sorted-set", "1.2.0", "Increment the score of a member in a sorted set", "O(log(N)) where N is the number of elements in the sorted set.")
    .keys("RW access update", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("increment", ArgType::Integer),
        ArgDoc::new("member", ArgType::String),
    ]),

CommandSpec::new("zrem", -3, "write fast", "sortedset", zrem)
    .doc("sorted-set", "1.2.0", "Remove one or more members from a sorted set", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.")
    .history(&[("2.4.0", "Accepts multiple elements.")])
    .keys("RW delete", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("member", ArgType::String).multiple(),
    ]),

CommandSpec::new("zcard", 2, "readonly fast", "sortedset", zcard)
    .doc("sorted-set", "1.2.0", "Get the number of members in a sorted set", "O(1)")
    .keys("RO", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
    ]),

CommandSpec::new("zscore", 3, "readonly fast", "sortedset", zscore)
    .doc("sorted-set", "1.2.0", "Get the score associated with the given member in a sorted set", "O(1)")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("member", ArgType::String),
    ]),

CommandSpec::new("zmscore", -3, "readonly fast", "sortedset", zmscore)
    .doc("sorted-set", "6.2.0", "Get the score associated with the given members in a sorted set", "O(N) where N is the number of members being requested.")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("member", ArgType::String).multiple(),
    ]),

CommandSpec::new("zrank", 3, "readonly fast", "sortedset", zrank)
    .doc("sorted-set", "2.0.0", "Determine the index of a member in a sorted set", "O(log(N))")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("member", ArgType::String),
    ]),

CommandSpec::new("zrevrank", 3, "readonly fast", "sortedset", zrevrank)
    .doc("sorted-set", "2.0.0", "Determine the index of a member in a sorted set, with scores ordered from high to low", "O(log(N))")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("member", ArgType::String),
    ]),

CommandSpec::new("zcount", 4, "readonly fast", "sortedset", zcount)
    .doc("sorted-set", "2.0.0", "Count the members in a sorted set with scores within the given values", "O(log(N)) with N being the number of elements in the sorted set.")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("min", ArgType::Double),
        ArgDoc::new("max", ArgType::Double),
    ]),

CommandSpec::new("zlexcount", 4, "readonly fast", "sortedset", zlexcount)
    .doc("sorted-set", "2.8.9", "Count the number of members in a sorted set between a given lexicographical range", "O(log(N)) with N being the number of elements in the sorted set.")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("min", ArgType::String),
        ArgDoc::new("max", ArgType::String),
    ]),

CommandSpec::new("zrange", -4, "readonly", "sortedset", zrange)
    .doc("sorted-set", "1.2.0", "Return a range of members in a sorted set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
    .history(&[("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options.")])
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("start", ArgType::String),
        ArgDoc::new("stop", ArgType::String),
        ArgDoc::one_of(
          "sortby",
          vec![
            ArgDoc::token("byscore", "BYSCORE"),
            ArgDoc::token("bylex", "BYLEX"),
          ],
        ).optional().since("6.2.0"),
        ArgDoc::token("rev", "REV").optional().since("6.2.0"),
        ArgDoc::block(
          "offset_count",
          vec![
            ArgDoc::new("offset", ArgType::Integer),
            ArgDoc::new("count", ArgType::Integer),
          ],
        ).after("LIMIT").optional().since("6.2.0"),
        ArgDoc::token("withscores", "WITHSCORES").optional(),
    ]),

CommandSpec::new("zrangestore", -5, "write denyoom", "sortedset", zrangestore)
    .doc("sorted-set", "6.2.0", "Store a range of members from sorted set into another key", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.")
    .keys("OW update", 1, 0, 1)
    .keys("RO access", 2, 0, 1)
    .args(vec![
        ArgDoc::key("dst", 0),
        ArgDoc::key("src", 1),
        ArgDoc::new("min", ArgType::String),
        ArgDoc::new("max", ArgType::String),
        ArgDoc::one_of(
          "sortby",
          vec![
            ArgDoc::token("byscore", "BYSCORE"),
            ArgDoc::token("bylex", "BYLEX"),
          ],
        ).optional(),
        ArgDoc::token("rev", "REV").optional(),
        ArgDoc::block(
          "offset_count",
          vec![
            ArgDoc::new("offset", ArgType::Integer),
            ArgDoc::new("count", ArgType::Integer),
          ],
        ).after("LIMIT").optional(),
    ]),

CommandSpec::new("zrevrange", -4, "readonly", "sortedset", zrevrange)
    .doc("sorted-set", "1.2.0", "Return a range of members in a sorted set, by index, with scores ordered from high to low", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
    .deprecated("6.2.0", "`ZRANGE` with the `REV` argument")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("start", ArgType::Integer),
        ArgDoc::new("stop", ArgType::Integer),
        ArgDoc::token("withscores", "WITHSCORES").optional(),
    ]),

CommandSpec::new("zrangebyscore", -4, "readonly", "sortedset", zrangebyscore)
    .doc("sorted-set", "1.0.5", "Return a range of members in a sorted set, by score", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
    .deprecated("6.2.0", "`ZRANGE` with the `BYSCORE` argument")
    .history(&[("2.0.0", "Added the `WITHSCORES` modifier.")])
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("min", ArgType::Double),
        ArgDoc::new("max", ArgType::Double),
        ArgDoc::token("withscores", "WITHSCORES").optional().since("2.0.0"),
        ArgDoc::block(
          "offset_count",
          vec![
            ArgDoc::new("offset", ArgType::Integer),
            ArgDoc::new("count", ArgType::Integer),
          ],
        ).after("LIMIT").optional(),
    ]),

CommandSpec::new("zrevrangebyscore", -4, "readonly", "sortedset", zrevrangebyscore)
    .doc("sorted-set", "2.2.0", "Return a range of members in a sorted set, by score, with scores ordered from high to low", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
    .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments")
    .history(&[("2.1.6", "`min` and `max` can be exclusive.")])
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("max", ArgType::Double),
        ArgDoc::new("min", ArgType::Double),
        ArgDoc::token("withscores", "WITHSCORES").optional(),
        ArgDoc::block(
          "offset_count",
          vec![
            ArgDoc::new("offset", ArgType::Integer),
            ArgDoc::new("count", ArgType::Integer),
          ],
        ).after("LIMIT").optional(),
    ]),

CommandSpec::new("zrangebylex", -4, "readonly", "sortedset", zrangebylex)
    .doc("sorted-set", "2.8.9", "Return a range of members in a sorted set, by lexicographical range", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
    .deprecated("6.2.0", "`ZRANGE` with the `BYLEX` argument")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("min", ArgType::String),
        ArgDoc::new("max", ArgType::String),
        ArgDoc::block(
          "offset_count",
          vec![
            ArgDoc::new("offset", ArgType::Integer),
            ArgDoc::new("count", ArgType::Integer),
          ],
        ).after("LIMIT").optional(),
    ]),

CommandSpec::new("zrevrangebylex", -4, "readonly", "sortedset", zrevrangebylex)
    .doc("sorted-set", "2.8.9", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
    .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments")
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("max", ArgType::String),
        ArgDoc::new("min", ArgType::String),
        ArgDoc::block(
          "offset_count",
          vec![
            ArgDoc::new("offset", ArgType::Integer),
            ArgDoc::new("count", ArgType::Integer),
          ],
        ).after("LIMIT").optional(),
    ]),

CommandSpec::new("zremrangebyrank", 4, "write", "sortedset", zremrangebyrank)
    .doc("sorted-set", "2.0.0", "Remove all members in a sorted set within the given indexes", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
    .keys("RW delete", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("start", ArgType::Integer),
        ArgDoc::new("stop", ArgType::Integer),
    ]),

CommandSpec::new("zremrangebyscore", 4, "write", "sortedset", zremrangebyscore)
    .doc("sorted-set", "1.2.0", "Remove all members in a sorted set within the given scores", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
    .keys("RW delete", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("min", ArgType::Double),
        ArgDoc::new("max", ArgType::Double),
    ]),

CommandSpec::new("zremrangebylex", 4, "write", "sortedset", zremrangebylex)
    .doc("sorted-set", "2.8.9", "Remove all members in a sorted set between the given lexicographical range", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
    .keys("RW delete", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("min", ArgType::String),
        ArgDoc::new("max", ArgType::String),
    ]),

CommandSpec::new("zpopmin", -2, "write fast", "sortedset", zpopmin)
    .doc("sorted-set", "5.0.0", "Remove and return members with the lowest scores in a sorted set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
    .keys("RW access delete", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("count", ArgType::Integer).optional(),
    ]),

CommandSpec::new("zpopmax", -2, "write fast", "sortedset", zpopmax)
    .doc("sorted-set", "5.0.0", "Remove and return members with the highest scores in a sorted set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
    .keys("RW access delete", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("count", ArgType::Integer).optional(),
    ]),

CommandSpec::new("bzpopmin", -3, "write noscript fast blocking", "sortedset", bzpopmin)
    .doc("sorted-set", "5.0.0", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "O(log(N)) with N being the number of elements in the sorted set.")
    .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
    .keys("RW access delete", 1, -2, 1)
    .args(vec![
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::new("timeout", ArgType::Double),
    ]),

CommandSpec::new("bzpopmax", -3, "write noscript fast blocking", "sortedset", bzpopmax)
    .doc("sorted-set", "5.0.0", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "O(log(N)) with N being the number of elements in the sorted set.")
    .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
    .keys("RW access delete", 1, -2, 1)
    .args(vec![
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::new("timeout", ArgType::Double),
    ]),

CommandSpec::new("zmpop", -4, "write", "sortedset", zmpop)
    .doc("sorted-set", "7.0.0", "Remove and return members with scores in a sorted set", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
    .keys_keynum("RW access delete", 1, 0, 1, 1)
    .args(vec![
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::one_of(
          "where",
          vec![
            ArgDoc::token("min", "MIN"),
            ArgDoc::token("max", "MAX"),
          ],
        ),
        ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
    ]),

CommandSpec::new("bzmpop", -5, "write blocking", "sortedset", bzmpop)
    .doc("sorted-set", "7.0.0", "Remove and return members with scores in a sorted set or block until one is available", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
    .keys_keynum("RW access delete", 2, 0, 1, 1)
    .args(vec![
        ArgDoc::new("timeout", ArgType::Double),
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::one_of(
          "where",
          vec![
            ArgDoc::token("min", "MIN"),
            ArgDoc::token("max", "MAX"),
          ],
        ),
        ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
    ]),

CommandSpec::new("zrandmember", -2, "readonly", "sortedset", zrandmember)
    .doc("sorted-set", "6.2.0", "Get one or multiple random elements from a sorted set", "O(N) where N is the number of elements returned")
    .tips(&["nondeterministic_output"])
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::block(
          "options",
          vec![
            ArgDoc::new("count", ArgType::Integer),
            ArgDoc::token("withscores", "WITHSCORES").optional(),
          ],
        ).optional(),
    ]),

CommandSpec::new("zunion", -3, "readonly", "sortedset", zunion)
    .doc("sorted-set", "6.2.0", "Add multiple sorted sets", "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
    .keys_keynum("RO access", 1, 0, 1, 1)
    .args(vec![
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::new("weight", ArgType::Integer).after("WEIGHTS").optional().multiple(),
        ArgDoc::one_of(
          "aggregate",
          vec![
            ArgDoc::token("sum", "SUM"),
            ArgDoc::token("min", "MIN"),
            ArgDoc::token("max", "MAX"),
          ],
        ).after("AGGREGATE").optional(),
        ArgDoc::token("withscores", "WITHSCORES").optional(),
    ]),

CommandSpec::new("zinter", -3, "readonly", "sortedset", zinter)
    .doc("sorted-set", "6.2.0", "Intersect multiple sorted sets", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
    .keys_keynum("RO access", 1, 0, 1, 1)
    .args(vec![
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::new("weight", ArgType::Integer).after("WEIGHTS").optional().multiple(),
        ArgDoc::one_of(
          "aggregate",
          vec![
            ArgDoc::token("sum", "SUM"),
            ArgDoc::token("min", "MIN"),
            ArgDoc::token("max", "MAX"),
          ],
        ).after("AGGREGATE").optional(),
        ArgDoc::token("withscores", "WITHSCORES").optional(),
    ]),

CommandSpec::new("zdiff", -3, "readonly", "sortedset", zdiff)
    .doc("sorted-set", "6.2.0", "Subtract multiple sorted sets", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
    .keys_keynum("RO access", 1, 0, 1, 1)
    .args(vec![
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::token("withscores", "WITHSCORES").optional(),
    ]),

CommandSpec::new("zunionstore", -4, "write denyoom", "sortedset", zunionstore)
    .doc("sorted-set", "2.0.0", "Add multiple sorted sets and store the resulting sorted set in a new key", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
    .keys("OW update", 1, 0, 1)
    .keys_keynum("RO access", 2, 0, 1, 1)
    .args(vec![
        ArgDoc::key("destination", 0),
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 1).multiple(),
        ArgDoc::new("weight", ArgType::Integer).after("WEIGHTS").optional().multiple(),
        ArgDoc::one_of(
          "aggregate",
          vec![
            ArgDoc::token("sum", "SUM"),
            ArgDoc::token("min", "MIN"),
            ArgDoc::token("max", "MAX"),
          ],
        ).after("AGGREGATE").optional(),
    ]),

CommandSpec::new("zinterstore", -4, "write denyoom", "sortedset", zinterstore)
    .doc("sorted-set", "2.0.0", "Intersect multiple sorted sets and store the resulting sorted set in a new key", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
    .keys("OW update", 1, 0, 1)
    .keys_keynum("RO access", 2, 0, 1, 1)
    .args(vec![
        ArgDoc::key("destination", 0),
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 1).multiple(),
        ArgDoc::new("weight", ArgType::Integer).after("WEIGHTS").optional().multiple(),
        ArgDoc::one_of(
          "aggregate",
          vec![
            ArgDoc::token("sum", "SUM"),
            ArgDoc::token("min", "MIN"),
            ArgDoc::token("max", "MAX"),
          ],
        ).after("AGGREGATE").optional(),
    ]),

CommandSpec::new("zdiffstore", -4, "write denyoom", "sortedset", zdiffstore)
    .doc("sorted-set", "6.2.0", "Subtract multiple sorted sets and store the resulting sorted set in a new key", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
    .keys("OW update", 1, 0, 1)
    .keys_keynum("RO access", 2, 0, 1, 1)
    .args(vec![
        ArgDoc::key("destination", 0),
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 1).multiple(),
    ]),

CommandSpec::new("zintercard", -3, "readonly", "sortedset", zintercard)
    .doc("sorted-set", "7.0.0", "Intersect multiple sorted sets and return the cardinality of the result", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.")
    .keys_keynum("RO access", 1, 0, 1, 1)
    .args(vec![
        ArgDoc::new("numkeys", ArgType::Integer),
        ArgDoc::key("key", 0).multiple(),
        ArgDoc::new("limit", ArgType::Integer).after("LIMIT").optional(),
    ]),

CommandSpec::new("zscan", -3, "readonly", "sortedset", zscan)
    .doc("sorted-set", "2.8.0", "Incrementally iterate sorted sets elements and associated scores", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
    .tips(&["nondeterministic_output"])
    .keys("RO access", 1, 0, 1)
    .args(vec![
        ArgDoc::key("key", 0),
        ArgDoc::new("cursor", ArgType::Integer),
        ArgDoc::new("pattern", ArgType::Pattern).after("MATCH").optional(),
        ArgDoc::new("count", ArgType::Integer).after("COUNT").optional(),
    ]),

    ]
}
