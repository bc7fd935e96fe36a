//! ACL against a real redis-server, reply for reply: every ACL subcommand and its errors,
//! AUTH and HELLO AUTH as other users, permission checks on commands, keys (read and write
//! patterns), channels and selectors, in transactions and scripts, the ACL log. Skipped
//! without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::script::Act::{self, *};
use quince_test_util::{Compare, Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn run_clients(name: &str, clients: usize, script: &[Act]) {
    quince_test_util::script::run_clients(QUINCE, name, clients, script);
}

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

#[test]
fn setuser_getuser_list_and_their_errors() {
    let Some(mut d) = Differential::start(QUINCE) else { return };
    let unordered = |args: &[&str]| Step::cmd(args).compare(Compare::Unordered);
    d.run(
        "acl subcommands",
        &[
            cmd(&["ACL", "WHOAMI"]),
            cmd(&["ACL", "USERS"]),
            cmd(&["ACL", "LIST"]),
            cmd(&["ACL", "GETUSER", "default"]),
            cmd(&["ACL", "GETUSER", "nosuch"]),
            cmd(&["ACL", "SETUSER", "newuser"]),
            cmd(&["ACL", "GETUSER", "newuser"]),
            cmd(&["ACL", "LIST"]),
            cmd(&["ACL", "SETUSER", "newuser", "on", ">passwd1", ">passwd2", "#"]),
            cmd(&[
                "ACL", "SETUSER", "newuser", "on", ">passwd1", ">passwd2", "<passwd2", "~obj:*", "&chan:*", "+@read",
                "-get",
            ]),
            cmd(&["ACL", "GETUSER", "newuser"]),
            cmd(&["ACL", "LIST"]),
            cmd(&["ACL", "SETUSER", "newuser", "#34344e4d60718c9d3fd49ec79b1a3ed5f3ccaf6be2d22e0d8b5e1bf7e4c5e8d1"]),
            cmd(&["ACL", "SETUSER", "newuser", "!34344e4d60718c9d3fd49ec79b1a3ed5f3ccaf6be2d22e0d8b5e1bf7e4c5e8d1"]),
            cmd(&["ACL", "SETUSER", "newuser", "#abc"]),
            cmd(&["ACL", "SETUSER", "newuser", "!abc"]),
            cmd(&["ACL", "SETUSER", "newuser", "<nosuchpass"]),
            cmd(&["ACL", "SETUSER", "newuser", "+nosuchcmd"]),
            cmd(&["ACL", "SETUSER", "newuser", "+@nosuchcat"]),
            cmd(&["ACL", "SETUSER", "newuser", "-select|0"]),
            cmd(&["ACL", "SETUSER", "newuser", "+config|get|x"]),
            cmd(&["ACL", "SETUSER", "newuser", "+config|nosuch"]),
            cmd(&["ACL", "SETUSER", "newuser", "+debug|"]),
            cmd(&["ACL", "SETUSER", "newuser", "bogus"]),
            cmd(&["ACL", "SETUSER", "newuser", "allkeys", "~x"]),
            cmd(&["ACL", "SETUSER", "newuser", "allchannels", "&x"]),
            cmd(&["ACL", "SETUSER", "newuser", "~a b"]),
            cmd(&["ACL", "SETUSER", "bad user"]),
            cmd(&["ACL", "SETUSER", "newuser", "(~x", "+get"]),
            cmd(&["ACL", "SETUSER", "newuser", "(~x bogus)"]),
            // A failed SETUSER changes nothing.
            cmd(&["ACL", "GETUSER", "newuser"]),
            cmd(&[
                "ACL",
                "SETUSER",
                "sel",
                "on",
                "nopass",
                "%R~read*",
                "%W~write*",
                "%RW~both*",
                "(~x +get)",
                "(%R~y",
                "+@string",
                "-set)",
            ]),
            cmd(&["ACL", "GETUSER", "sel"]),
            cmd(&["ACL", "LIST"]),
            cmd(&["ACL", "SETUSER", "sel", "clearselectors", "resetkeys", "reset"]),
            cmd(&["ACL", "GETUSER", "sel"]),
            cmd(&["ACL", "SETUSER", "cats", "+@all", "-@dangerous", "+config|get"]),
            cmd(&["ACL", "GETUSER", "cats"]),
            cmd(&["ACL", "SETUSER", "cats", "-@all", "+@hash", "+@set", "-sadd"]),
            cmd(&["ACL", "GETUSER", "cats"]),
            cmd(&["ACL", "SETUSER", "cats", "-@all", "+client", "-client|kill"]),
            cmd(&["ACL", "GETUSER", "cats"]),
            cmd(&["ACL", "SETUSER", "cats", "-@all", "+select|0", "+select|1"]),
            cmd(&["ACL", "GETUSER", "cats"]),
            cmd(&[
                "ACL",
                "SETUSER",
                "cats",
                "allcommands",
                "nocommands",
                "allkeys",
                "resetkeys",
                "allchannels",
                "resetchannels",
                "skip-sanitize-payload",
            ]),
            cmd(&["ACL", "GETUSER", "cats"]),
            cmd(&["ACL", "USERS"]),
            cmd(&["ACL", "DELUSER", "default"]),
            cmd(&["ACL", "DELUSER", "nosuch", "default"]),
            cmd(&["ACL", "DELUSER", "cats", "sel", "newuser", "nosuch"]),
            cmd(&["ACL", "USERS"]),
            cmd(&["ACL", "CAT"]),
            unordered(&["ACL", "CAT", "hyperloglog"]),
            unordered(&["ACL", "CAT", "SCRIPTING"]),
            cmd(&["ACL", "CAT", "nosuch"]),
            cmd(&["ACL", "CAT", "a", "b"]),
            cmd(&["ACL", "GENPASS", "0"]),
            cmd(&["ACL", "GENPASS", "4097"]),
            cmd(&["ACL", "GENPASS", "x"]),
            cmd(&["ACL", "GENPASS", "1", "2"]),
            cmd(&["ACL", "LOAD"]),
            cmd(&["ACL", "SAVE"]),
            cmd(&["ACL", "LOG", "x"]),
            cmd(&["ACL", "LOG", "1", "2"]),
            cmd(&["ACL", "LOG", "RESET"]),
            cmd(&["ACL", "LOG"]),
            cmd(&["ACL", "HELP"]),
            cmd(&["ACL", "NOSUCH"]),
            cmd(&["ACL"]),
            cmd(&["ACL", "WHOAMI", "x"]),
            cmd(&["ACL", "DRYRUN", "nosuch", "get", "x"]),
            cmd(&["ACL", "SETUSER", "dry", "on", "nopass", "+get", "+set", "~r*", "&c*", "+publish", "+config|get"]),
            cmd(&["ACL", "DRYRUN", "dry", "get", "rx"]),
            cmd(&["ACL", "DRYRUN", "dry", "get", "x"]),
            cmd(&["ACL", "DRYRUN", "dry", "set", "rx", "1"]),
            cmd(&["ACL", "DRYRUN", "dry", "del", "rx"]),
            cmd(&["ACL", "DRYRUN", "dry", "nosuchcmd"]),
            cmd(&["ACL", "DRYRUN", "dry", "get"]),
            cmd(&["ACL", "DRYRUN", "dry", "publish", "cx", "m"]),
            cmd(&["ACL", "DRYRUN", "dry", "publish", "x", "m"]),
            cmd(&["ACL", "DRYRUN", "dry", "config", "get", "x"]),
            cmd(&["ACL", "DRYRUN", "dry", "config", "set", "x", "y"]),
            cmd(&["ACL", "DRYRUN", "dry", "config", "nosuch"]),
            cmd(&["ACL", "DELUSER", "dry"]),
            cmd(&["AUTH", "x"]),
            cmd(&["AUTH", "a", "b", "c"]),
            cmd(&["AUTH", "default", "x"]),
            cmd(&["AUTH", "nosuch", "x"]),
        ],
    );
}

#[test]
fn permissions_of_commands_keys_and_channels() {
    run_clients(
        "permissions",
        2,
        &[
            Call(
                0,
                &[
                    "ACL",
                    "SETUSER",
                    "u",
                    "on",
                    ">pw",
                    "+@all",
                    "-flushall",
                    "-config|set",
                    "%R~r*",
                    "%W~w*",
                    "~both*",
                    "&ch*",
                ],
            ),
            Call(1, &["AUTH", "u", "wrong"]),
            Call(1, &["AUTH", "u", "pw"]),
            Call(1, &["ACL", "WHOAMI"]),
            Call(1, &["FLUSHALL"]),
            Call(1, &["CONFIG", "SET", "maxmemory", "0"]),
            Call(1, &["CONFIG", "GET", "maxmemory"]),
            Call(1, &["GET", "rkey"]),
            Call(1, &["GET", "wkey"]),
            Call(1, &["SET", "wkey", "1"]),
            Call(1, &["SET", "rkey", "1"]),
            Call(1, &["SET", "wkey", "1", "GET"]),
            Call(1, &["SET", "bothkey", "1", "GET"]),
            Call(1, &["MSET", "w1", "1", "both2", "2"]),
            Call(1, &["MSET", "w1", "1", "r2", "2"]),
            Call(1, &["EXISTS", "rx"]),
            Call(1, &["EXISTS", "wx"]),
            Call(1, &["LMOVE", "rsrc", "wdst", "LEFT", "RIGHT"]),
            Call(1, &["LMOVE", "wsrc", "rdst", "LEFT", "RIGHT"]),
            Call(1, &["SORT", "rlist"]),
            Call(1, &["SORT", "bothlist", "BY", "nosort"]),
            Call(1, &["SORT", "bothlist", "BY", "w*"]),
            Call(1, &["SORT", "bothlist", "GET", "#"]),
            Call(1, &["SORT", "bothlist", "GET", "r*"]),
            Call(1, &["PUBLISH", "chan", "m"]),
            Call(1, &["PUBLISH", "other", "m"]),
            Call(1, &["SPUBLISH", "chan", "m"]),
            Call(1, &["SUBSCRIBE", "other"]),
            Call(1, &["PSUBSCRIBE", "ch*x"]),
            Call(1, &["MULTI"]),
            Call(1, &["GET", "rk"]),
            Call(1, &["GET", "wk"]),
            Call(1, &["FLUSHALL"]),
            Call(1, &["EXEC"]),
            Call(1, &["MULTI"]),
            Call(1, &["GET", "rk"]),
            Call(0, &["ACL", "SETUSER", "u", "resetkeys"]),
            Call(1, &["EXEC"]),
            Call(1, &["EVAL", "return redis.call('get', KEYS[1])", "1", "wk"]),
            Call(1, &["EVAL", "return redis.call('flushall')", "0"]),
            Call(1, &["EVAL", "return redis.pcall('get', 'x')", "0"]),
            Call(1, &["EVAL", "return redis.acl_check_cmd('get', 'x')", "0"]),
            Call(1, &["EVAL", "return redis.acl_check_cmd('ping')", "0"]),
            Call(1, &["EVAL", "return redis.acl_check_cmd('nosuch')", "0"]),
            Call(1, &["EVAL", "return redis.acl_check_cmd()", "0"]),
            Call(0, &["ACL", "SETUSER", "u", "allkeys", "(~sel* +get)"]),
            Call(1, &["DEL", "x"]),
            Call(0, &["ACL", "SETUSER", "u", "resetkeys", "-del"]),
            Call(1, &["DEL", "x"]),
            Call(1, &["GET", "selx"]),
            Call(1, &["GET", "x"]),
            Call(0, &["ACL", "SETUSER", "u", "off"]),
            Call(1, &["PING"]),
            Call(1, &["AUTH", "u", "pw"]),
            Call(1, &["HELLO", "2", "AUTH", "u", "pw"]),
            Call(1, &["RESET"]),
            Call(1, &["ACL", "WHOAMI"]),
            Call(0, &["ACL", "DELUSER", "u"]),
        ],
    );
}

#[test]
fn default_user_password_and_noauth() {
    run_clients(
        "default user",
        2,
        &[
            // A connection is authenticated (or not) when the server accepts it: make sure
            // connection 1 was accepted while the default user took no password.
            Call(1, &["PING"]),
            Call(0, &["ACL", "SETUSER", "default", "resetpass", ">secret"]),
            Call(1, &["PING"]),
            Call(1, &["AUTH", "wrong"]),
            Call(1, &["AUTH", "secret"]),
            Call(1, &["PING"]),
            Call(1, &["CONFIG", "SET", "requirepass", ""]),
            Call(1, &["ACL", "GETUSER", "default"]),
            Call(1, &["CONFIG", "SET", "requirepass", "foo"]),
            Call(1, &["ACL", "LIST"]),
            Call(1, &["AUTH", "foo"]),
            Call(1, &["CONFIG", "SET", "requirepass", ""]),
            Call(0, &["ACL", "SETUSER", "default", "off"]),
            // (HELLO's reply holds the connection id: not compared.)
            Quiet(1, &["HELLO", "2"]),
            Call(0, &["ACL", "SETUSER", "default", "on", "nopass", "-@all"]),
            Call(1, &["GET", "x"]),
            Call(0, &["ACL", "SETUSER", "default", "+@all"]),
            Call(1, &["GET", "x"]),
        ],
    );
}

#[test]
fn deleting_a_user_closes_its_connections() {
    run_clients(
        "deluser",
        3,
        &[
            Call(0, &["ACL", "SETUSER", "gone", "on", "nopass", "+@all", "~*"]),
            Call(1, &["AUTH", "gone", "x"]),
            Call(2, &["AUTH", "gone", "x"]),
            Call(2, &["ACL", "DELUSER", "gone"]),
            Sleep(100),
            Call(0, &["CLIENT", "LIST", "USER", "gone"]),
            Call(0, &["CLIENT", "KILL", "USER", "gone"]),
        ],
    );
}

#[test]
fn acl_log_entries() {
    // The log's age and client fields differ between servers: the rest is compared.
    let Some(d) = Differential::start(QUINCE) else { return };
    for server in [&d.quince, &d.redis] {
        let mut admin = server.client();
        let mut c = server.client();
        admin.call(&["ACL", "LOG", "RESET"]);
        admin.call(&["ACL", "SETUSER", "logger", "on", ">pw", "+get", "~k*", "&ch"]);
        c.call(&["AUTH", "logger", "pw"]);
        c.call(&["SET", "k", "v"]);
        c.call(&["GET", "x"]);
        c.call(&["GET", "x"]);
        c.call(&["AUTH", "logger", "bad"]);
        c.call(&["MULTI"]);
        let log = admin.call(&["ACL", "LOG"]);
        let text = String::from_utf8_lossy(&log).to_string();
        for expect in
            ["auth", "toplevel", "logger", "count", "x", "key", "command", "set", "age-seconds", "client-info"]
        {
            assert!(text.contains(expect), "{text}");
        }
        assert!(admin.call(&["ACL", "LOG", "1"]).starts_with(b"*1\r\n"));
        admin.call(&["ACL", "DELUSER", "logger"]);
    }
    let strip = |server: &quince_test_util::ServerProcess| {
        let mut admin = server.client();
        admin.call(&["ACL", "LOG", "RESET"]);
        admin.call(&["ACL", "SETUSER", "logger", "on", ">pw", "+get", "~k*"]);
        let mut c = server.client();
        c.call(&["AUTH", "logger", "pw"]);
        c.call(&["GET", "x"]);
        c.call(&["GET", "x"]);
        c.call(&["SET", "k", "v"]);
        c.call(&["EVAL", "return redis.call('get', 'x')", "0"]);
        let log = admin.call(&["ACL", "LOG"]);
        admin.call(&["ACL", "DELUSER", "logger"]);
        // Keep count, reason, context, object, username of each entry.
        let text = String::from_utf8_lossy(&log).to_string();
        let lines: Vec<&str> = text.split("\r\n").collect();
        let mut kept = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if ["count", "reason", "context", "object", "username"].contains(l) {
                kept.push(format!("{l}={}", lines.get(i + 2).unwrap_or(&"")));
            }
        }
        kept
    };
    assert_eq!(strip(&d.quince), strip(&d.redis));
}
