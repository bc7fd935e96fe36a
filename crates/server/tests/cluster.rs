//! Cluster mode (`cluster-enabled yes`): nodes meet over the cluster bus, agree on who
//! serves which slot, redirect clients (MOVED, ASK, CROSSSLOT, TRYAGAIN, CLUSTERDOWN), keep
//! `nodes.conf`, and a replica takes over a killed master. Quince nodes form clusters with
//! each other and with real redis-server 7.0.15 nodes (Redis's binary bus format), and the
//! errors of the cluster commands are compared with redis-server's, byte for byte.

use std::time::{Duration, Instant};

use quince_test_util::{free_port, start_quince, start_redis, Differential, RawClient, ServerProcess, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn text(reply: Vec<u8>) -> String {
    String::from_utf8_lossy(&reply).into_owned()
}

/// The text of a bulk or verbatim reply.
fn bulk(reply: Vec<u8>) -> String {
    let s = text(reply);
    let body = s.split_once("\r\n").map_or("", |(_, b)| b);
    let body = body.strip_suffix("\r\n").unwrap_or(body);
    body.strip_prefix("txt:").unwrap_or(body).to_string()
}

fn eventually(what: &str, seconds: u64, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A cluster node and its bus port.
struct Node {
    server: ServerProcess,
    bus: u16,
}

impl Node {
    fn client(&self) -> RawClient {
        self.server.client()
    }
    fn port(&self) -> u16 {
        self.server.port
    }
    fn call(&self, args: &[&str]) -> Vec<u8> {
        self.client().call(args)
    }
    fn id(&self) -> String {
        bulk(self.call(&["CLUSTER", "MYID"]))
    }
    fn nodes(&self) -> String {
        bulk(self.call(&["CLUSTER", "NODES"]))
    }
    fn state_ok(&self) -> bool {
        bulk(self.call(&["CLUSTER", "INFO"])).contains("cluster_state:ok")
    }
}

fn cluster_args(bus: &str) -> Vec<&str> {
    vec!["--cluster-enabled", "yes", "--cluster-port", bus, "--cluster-node-timeout", "1000", "--appendonly", "no"]
}

fn quince_node() -> Node {
    let bus = free_port();
    let bus_text = bus.to_string();
    let server = start_quince(QUINCE, &cluster_args(&bus_text));
    Node { server, bus }
}

fn redis_node() -> Option<Node> {
    let bus = free_port();
    let bus_text = bus.to_string();
    let server = start_redis(&cluster_args(&bus_text))?;
    Some(Node { server, bus })
}

/// Slots split evenly among `masters`, then every node meets the first one.
fn form(masters: &[&Node], others: &[&Node]) {
    let per = 16384 / masters.len();
    for (i, m) in masters.iter().enumerate() {
        let start = i * per;
        let end = if i + 1 == masters.len() { 16383 } else { start + per - 1 };
        let reply = text(m.call(&["CLUSTER", "ADDSLOTSRANGE", &start.to_string(), &end.to_string()]));
        assert_eq!(reply, "+OK\r\n");
        // Distinct epochs, as redis-cli --cluster create sets them.
        m.call(&["CLUSTER", "SET-CONFIG-EPOCH", &(i + 1).to_string()]);
    }
    let first = masters[0];
    for n in masters.iter().skip(1).chain(others.iter()) {
        let reply = n.call(&["CLUSTER", "MEET", "127.0.0.1", &first.port().to_string(), &first.bus.to_string()]);
        assert_eq!(text(reply), "+OK\r\n");
    }
    let total = masters.len() + others.len();
    let all: Vec<&&Node> = masters.iter().chain(others.iter()).collect();
    eventually("every node to know every other", 20, || {
        all.iter().all(|n| {
            let nodes = n.nodes();
            nodes.lines().count() == total && !nodes.contains("handshake") && !nodes.contains("noaddr")
        })
    });
}

fn slot_of(n: &Node, key: &str) -> u16 {
    text(n.call(&["CLUSTER", "KEYSLOT", key])).trim_start_matches(':').trim().parse().expect("a slot")
}

#[test]
fn three_quince_masters_form_a_cluster_and_redirect_clients() {
    let nodes: Vec<Node> = (0..3).map(|_| quince_node()).collect();
    let refs: Vec<&Node> = nodes.iter().collect();
    form(&refs, &[]);
    eventually("cluster_state:ok everywhere", 20, || nodes.iter().all(|n| n.state_ok()));
    // Everyone agrees on the slots: each node's line, as seen by every node.
    let views: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let mut lines: Vec<String> = n
                .nodes()
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(' ').collect();
                    format!("{} {} {} {}", f[0], f[1], f[2].replace("myself,", ""), f[8..].join(" "))
                })
                .collect();
            lines.sort();
            lines
        })
        .collect();
    assert_eq!(views[0], views[1]);
    assert_eq!(views[0], views[2]);
    // "foo" is slot 12182: the third node's.
    let foo = slot_of(&nodes[0], "foo");
    assert_eq!(foo, 12182);
    let owner = &nodes[2];
    let reply = text(nodes[0].call(&["SET", "foo", "bar"]));
    assert_eq!(reply, format!("-MOVED 12182 127.0.0.1:{}\r\n", owner.port()));
    assert_eq!(text(owner.call(&["SET", "foo", "bar"])), "+OK\r\n");
    assert_eq!(
        text(owner.call(&["MSET", "foo", "1", "bar", "2"])),
        "-CROSSSLOT Keys in request don't hash to the same slot\r\n"
    );
    assert_eq!(text(owner.call(&["MSET", "{foo}a", "1", "{foo}b", "2"])), "+OK\r\n");
    assert_eq!(text(owner.call(&["CLUSTER", "COUNTKEYSINSLOT", "12182"])), ":3\r\n");
    // A transaction is routed as a whole: a command of another slot is refused when queued,
    // and EXEC aborts.
    let mut c = owner.client();
    assert_eq!(text(c.call(&["MULTI"])), "+OK\r\n");
    assert_eq!(text(c.call(&["GET", "{foo}a"])), "+QUEUED\r\n");
    // ("b" is slot 3300, the first node's.)
    assert!(text(c.call(&["GET", "b"])).starts_with("-MOVED 3300 "));
    assert!(text(c.call(&["EXEC"])).starts_with("-EXECABORT"));
    // A script is routed by its declared keys; an undeclared key elsewhere is refused.
    let script = "return redis.call('get', KEYS[1])";
    assert_eq!(
        text(nodes[0].call(&["EVAL", script, "1", "foo"])),
        format!("-MOVED 12182 127.0.0.1:{}\r\n", owner.port())
    );
    assert_eq!(text(owner.call(&["EVAL", script, "1", "foo"])), "$3\r\nbar\r\n");
    let reply = text(owner.call(&["EVAL", "return redis.call('get', 'b')", "0"]));
    assert!(reply.starts_with("-ERR Script attempted to access a non local key in a cluster node"), "{reply}");
    assert_eq!(text(owner.call(&["SELECT", "1"])), "-ERR SELECT is not allowed in cluster mode\r\n");

    // Moving slot 12182 from the third node to the first: MIGRATING / IMPORTING, ASK,
    // ASKING, TRYAGAIN, then SETSLOT NODE everywhere.
    let (source, target) = (&nodes[2], &nodes[0]);
    let (source_id, target_id) = (source.id(), target.id());
    // A client blocked on a key of the slot stays blocked while the slot migrates, and is
    // redirected once the slot belongs to the target.
    let mut blocked = source.client();
    blocked.send(&["BLPOP", "{foo}list", "0"]);
    eventually("the BLPOP to block", 5, || bulk(source.call(&["INFO", "clients"])).contains("blocked_clients:1"));
    assert_eq!(text(target.call(&["CLUSTER", "SETSLOT", "12182", "IMPORTING", &source_id])), "+OK\r\n");
    assert_eq!(text(source.call(&["CLUSTER", "SETSLOT", "12182", "MIGRATING", &target_id])), "+OK\r\n");
    assert!(source.nodes().contains(&format!("[12182->-{target_id}]")));
    // Present keys are still served by the source; a missing one is asked of the target.
    assert_eq!(text(source.call(&["GET", "foo"])), "$3\r\nbar\r\n");
    // A script on the migrating slot, run again (then alongside others, holding its
    // key's shard), serves its present key too.
    for _ in 0..3 {
        assert_eq!(text(source.call(&["EVAL", "return redis.call('get', KEYS[1])", "1", "foo"])), "$3\r\nbar\r\n");
    }
    assert_eq!(text(source.call(&["GET", "{foo}missing"])), format!("-ASK 12182 127.0.0.1:{}\r\n", target.port()));
    assert_eq!(
        text(source.call(&["MGET", "foo", "{foo}missing"])),
        "-TRYAGAIN Multiple keys request during rehashing of slot\r\n"
    );
    // The target serves the slot only after ASKING, for one command.
    assert!(text(target.call(&["GET", "{foo}missing"])).starts_with("-MOVED 12182"));
    let mut t = target.client();
    assert_eq!(text(t.call(&["ASKING"])), "+OK\r\n");
    assert_eq!(text(t.call(&["SET", "{foo}new", "v"])), "+OK\r\n");
    assert!(text(t.call(&["GET", "{foo}new"])).starts_with("-MOVED 12182"));
    // Move the keys (MIGRATE), then give the slot to the target.
    let keys = bulk(source.call(&["CLUSTER", "GETKEYSINSLOT", "12182", "100"]));
    assert!(!keys.is_empty());
    for key in ["foo", "{foo}a", "{foo}b"] {
        let reply = text(source.call(&["MIGRATE", "127.0.0.1", &target.port().to_string(), key, "0", "5000"]));
        assert_eq!(reply, "+OK\r\n", "MIGRATE {key}");
    }
    assert_eq!(text(source.call(&["CLUSTER", "COUNTKEYSINSLOT", "12182"])), ":0\r\n");
    assert!(bulk(source.call(&["INFO", "clients"])).contains("blocked_clients:1"), "still blocked while migrating");
    for n in [target, source] {
        assert_eq!(text(n.call(&["CLUSTER", "SETSLOT", "12182", "NODE", &target_id])), "+OK\r\n");
    }
    assert_eq!(text(blocked.read_reply()), format!("-MOVED 12182 127.0.0.1:{}\r\n", target.port()));
    eventually("every node to see the new owner of 12182", 10, || {
        nodes.iter().all(|n| {
            n.call(&["GET", "foo"]) == b"$3\r\nbar\r\n"
                || n.port() != target.port() && {
                    text(n.call(&["GET", "foo"])) == format!("-MOVED 12182 127.0.0.1:{}\r\n", target.port())
                }
        })
    });
    assert_eq!(text(target.call(&["GET", "foo"])), "$3\r\nbar\r\n");
    assert_eq!(text(target.call(&["GET", "{foo}new"])), "$1\r\nv\r\n");
}

#[test]
fn nodes_conf_brings_a_node_back_with_its_id_and_slots() {
    let dir = std::env::temp_dir().join(format!("quince-cluster-conf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir_text = dir.to_str().unwrap().to_string();
    let bus = free_port().to_string();
    let mut args = cluster_args(&bus);
    args.extend(["--dir", &dir_text]);
    let (id, nodes_line) = {
        let server = start_quince(QUINCE, &args);
        let mut c = server.client();
        assert_eq!(text(c.call(&["CLUSTER", "ADDSLOTS", "1", "2", "3", "100"])), "+OK\r\n");
        assert_eq!(text(c.call(&["CLUSTER", "BUMPEPOCH"])), "+BUMPED 1\r\n");
        assert_eq!(text(c.call(&["CLUSTER", "BUMPEPOCH"])), "+STILL 1\r\n");
        let id = bulk(c.call(&["CLUSTER", "MYID"]));
        let line = bulk(c.call(&["CLUSTER", "NODES"]));
        (id, line)
    };
    let saved = std::fs::read_to_string(dir.join("nodes.conf")).unwrap();
    assert!(saved.contains(&format!("{id} ")), "{saved}");
    assert!(saved.contains("myself,master - 0 0 1 connected 1-3 100"), "{saved}");
    assert!(saved.ends_with("vars currentEpoch 1 lastVoteEpoch 0\n"), "{saved}");
    let server = start_quince(QUINCE, &args);
    let mut c = server.client();
    assert_eq!(bulk(c.call(&["CLUSTER", "MYID"])), id);
    let again = bulk(c.call(&["CLUSTER", "NODES"]));
    let fields = |l: &str| l.split(' ').filter(|w| !w.contains(':')).map(String::from).collect::<Vec<_>>();
    assert_eq!(fields(&again), fields(&nodes_line));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_replica_takes_over_a_killed_master() {
    let masters: Vec<Node> = (0..3).map(|_| quince_node()).collect();
    let replica = quince_node();
    let refs: Vec<&Node> = masters.iter().collect();
    form(&refs, &[&replica]);
    let victim = &masters[1];
    assert_eq!(text(replica.call(&["CLUSTER", "REPLICATE", &victim.id()])), "+OK\r\n");
    eventually("the replica to be in sync", 20, || {
        text(replica.call(&["INFO", "replication"])).contains("master_link_status:up")
    });
    eventually("cluster_state:ok everywhere", 20, || masters.iter().all(|n| n.state_ok()));
    // A key of the victim's slots, written before the kill.
    let key = (0..1000).map(|i| format!("k{i}")).find(|k| {
        let s = slot_of(victim, k);
        (5461..=10921).contains(&s)
    });
    let key = key.expect("a key in the middle range");
    assert_eq!(text(victim.call(&["SET", &key, "kept"])), "+OK\r\n");
    eventually("the write to reach the replica", 10, || {
        replica.client().call(&["READONLY"]);
        let mut c = replica.client();
        c.call(&["READONLY"]);
        c.call(&["GET", &key]) == b"$4\r\nkept\r\n"
    });
    let victim_id = victim.id();
    let killed = std::process::Command::new("kill").args(["-9", &victim.server.pid().to_string()]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    let started = Instant::now();
    eventually("the replica to become a master", 30, || replica.nodes().contains("myself,master"));
    eprintln!("failover took {} ms (cluster-node-timeout 1000)", started.elapsed().as_millis());
    eventually("the other masters to see the failover", 10, || {
        [&masters[0], &masters[2]].iter().all(|m| {
            let nodes = m.nodes();
            nodes.lines().any(|l| l.starts_with(&victim_id) && l.contains("fail"))
                && nodes.lines().any(|l| l.starts_with(&replica.id()) && l.contains(" master "))
        })
    });
    eventually("cluster_state:ok again", 20, || masters[0].state_ok() && replica.state_ok());
    assert_eq!(text(replica.call(&["GET", &key])), "$4\r\nkept\r\n");
    assert_eq!(
        text(masters[0].call(&["GET", &key])),
        format!("-MOVED {} 127.0.0.1:{}\r\n", slot_of(replica_ref(&replica), &key), replica.port())
    );
}

fn replica_ref(n: &Node) -> &Node {
    n
}

/// Quince and redis-server nodes in one cluster: they agree on CLUSTER NODES, and each
/// kind of replica takes over from the other kind of master.
#[test]
fn quince_and_redis_server_nodes_form_one_cluster_and_fail_over_both_ways() {
    let Some(redis_a) = redis_node() else { return };
    let Some(redis_b) = redis_node() else { return };
    let quince_c = quince_node();
    let quince_replica = quince_node();
    let Some(redis_replica) = redis_node() else { return };
    form(&[&redis_a, &redis_b, &quince_c], &[&quince_replica, &redis_replica]);
    assert_eq!(text(quince_replica.call(&["CLUSTER", "REPLICATE", &redis_a.id()])), "+OK\r\n");
    assert_eq!(text(redis_replica.call(&["CLUSTER", "REPLICATE", &quince_c.id()])), "+OK\r\n");
    let all = [&redis_a, &redis_b, &quince_c, &quince_replica, &redis_replica];
    // Every node sees the same roles, masters and slots.
    let summary = |n: &Node| {
        let mut lines: Vec<String> = n
            .nodes()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                format!("{} {} {} {}", f[0], f[2].replace("myself,", ""), f[3], f[8..].join(" "))
            })
            .collect();
        lines.sort();
        lines.join("\n")
    };
    eventually("all five to agree on CLUSTER NODES", 30, || {
        let first = summary(all[0]);
        first.matches("slave").count() == 2 && all.iter().all(|n| summary(n) == first)
    });
    eventually("cluster_state:ok everywhere", 20, || all.iter().all(|n| n.state_ok()));
    for (replica, master) in [(&quince_replica, &redis_a), (&redis_replica, &quince_c)] {
        eventually("the replicas to be in sync", 20, || {
            text(replica.call(&["INFO", "replication"])).contains("master_link_status:up")
        });
        let master_id = master.id();
        let killed = std::process::Command::new("kill").args(["-9", &master.server.pid().to_string()]).status();
        assert!(killed.is_ok_and(|s| s.success()));
        eventually("the replica to take over", 30, || replica.nodes().contains("myself,master"));
        eventually("redis_b to agree", 10, || {
            let nodes = redis_b.nodes();
            nodes.lines().any(|l| l.starts_with(&master_id) && l.contains("fail"))
                && nodes.lines().any(|l| l.starts_with(&replica.id()) && l.contains(" master "))
        });
    }
}

/// The cluster commands' replies and errors, byte for byte against a one-node redis-server
/// cluster (only what doesn't depend on node ids or timing).
#[test]
fn differential_cluster_commands() {
    let (bus_q, bus_r) = (free_port().to_string(), free_port().to_string());
    let Some(mut d) = Differential::start_each(QUINCE, &cluster_args(&bus_q), &cluster_args(&bus_r)) else { return };
    let c = Step::cmd;
    d.run(
        "cluster commands",
        &[
            c(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]).compare(quince_test_util::Compare::Ignore),
            c(&["CLUSTER", "KEYSLOT", "foo"]),
            c(&["CLUSTER", "KEYSLOT", "{user1000}.following"]),
            c(&["CLUSTER", "KEYSLOT", "foo{}{bar}"]),
            c(&["SET", "foo", "1"]),
            c(&["SET", "{foo}x", "1"]),
            c(&["CLUSTER", "COUNTKEYSINSLOT", "12182"]),
            c(&["CLUSTER", "COUNTKEYSINSLOT", "16384"]),
            c(&["CLUSTER", "COUNTKEYSINSLOT", "x"]),
            c(&["CLUSTER", "GETKEYSINSLOT", "12182", "-1"]),
            c(&["CLUSTER", "GETKEYSINSLOT", "12182", "0"]),
            c(&["CLUSTER", "GETKEYSINSLOT", "12182", "10"]).compare(quince_test_util::Compare::Unordered),
            c(&["CLUSTER", "ADDSLOTS", "5"]),
            c(&["CLUSTER", "ADDSLOTS", "x"]),
            c(&["CLUSTER", "ADDSLOTS", "16384"]),
            c(&["CLUSTER", "ADDSLOTSRANGE", "5", "4"]),
            c(&["CLUSTER", "ADDSLOTSRANGE", "5"]),
            c(&["CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"]),
            c(&["CLUSTER", "DELSLOTS", "7", "7"]),
            c(&["CLUSTER", "DELSLOTS", "7"]),
            c(&["CLUSTER", "DELSLOTS", "7"]),
            c(&["GET", "k68586"]),
            c(&["CLUSTER", "DELSLOTSRANGE", "8", "9", "9", "10"]),
            c(&["CLUSTER", "ADDSLOTS", "7", "7"]),
            c(&["CLUSTER", "ADDSLOTS", "7"]),
            c(&["CLUSTER", "SETSLOT", "7", "BOGUS"]),
            c(&["CLUSTER", "SETSLOT", "99999", "STABLE"]),
            c(&["CLUSTER", "SETSLOT", "7", "STABLE"]),
            c(&["CLUSTER", "SETSLOT", "7", "NODE", "nosuchnode"]),
            c(&["CLUSTER", "SETSLOT", "7", "MIGRATING", "nosuchnode"]),
            c(&["CLUSTER", "SETSLOT", "7", "IMPORTING", "nosuchnode"]),
            c(&["CLUSTER", "FORGET", "nosuchnode"]),
            c(&["CLUSTER", "REPLICATE", "nosuchnode"]),
            c(&["CLUSTER", "REPLICAS", "nosuchnode"]),
            c(&["CLUSTER", "COUNT-FAILURE-REPORTS", "nosuchnode"]),
            c(&["CLUSTER", "MEET", "127.0.0.1", "x"]),
            c(&["CLUSTER", "MEET", "127.0.0.1", "1", "x"]),
            c(&["CLUSTER", "MEET", "not-an-ip", "1"]),
            c(&["CLUSTER", "FAILOVER"]),
            c(&["CLUSTER", "FAILOVER", "bogus"]),
            c(&["CLUSTER", "RESET", "bogus"]),
            c(&["CLUSTER", "RESET"]),
            c(&["CLUSTER", "SET-CONFIG-EPOCH", "-1"]),
            c(&["CLUSTER", "SET-CONFIG-EPOCH", "x"]),
            c(&["CLUSTER", "FLUSHSLOTS"]),
            c(&["CLUSTER", "NOSUCH"]),
            c(&["CLUSTER", "KEYSLOT"]),
            c(&["CLUSTER", "HELP"]),
            c(&["CLUSTER", "SAVECONFIG"]),
            c(&["MSET", "a", "1", "b", "2"]),
            c(&["SELECT", "1"]),
            c(&["SELECT", "0"]),
            c(&["SELECT", "x"]),
            c(&["MOVE", "foo", "1"]),
            c(&["SWAPDB", "0", "1"]),
            c(&["COPY", "foo", "bar", "DB", "1"]),
            c(&["REPLICAOF", "127.0.0.1", "1"]),
            c(&["FAILOVER"]),
            c(&["RPUSH", "{l}", "3", "1", "2"]),
            c(&["SORT", "{l}", "BY", "w_*"]),
            c(&["SORT", "{l}", "BY", "nosort"]),
            c(&["SORT", "{l}", "GET", "#"]),
            c(&["READONLY"]),
            c(&["READWRITE"]),
            c(&["ASKING"]),
            c(&["EVAL", "#!lua flags=no-cluster\nreturn 1", "0"]),
            c(&["INFO", "cluster"]),
        ],
    );
}

#[test]
fn cluster_commands_say_cluster_support_is_disabled_in_standalone_mode() {
    let server = start_quince(QUINCE, &[]);
    let mut c = server.client();
    for cmd in [&["CLUSTER", "INFO"][..], &["CLUSTER", "HELP"], &["READONLY"], &["READWRITE"], &["ASKING"]] {
        assert_eq!(text(c.call(cmd)), "-ERR This instance has cluster support disabled\r\n", "{cmd:?}");
    }
    assert_eq!(text(c.call(&["INFO", "cluster"])), text(c.call(&["INFO", "cluster"])));
    assert!(text(c.call(&["INFO", "cluster"])).contains("cluster_enabled:0"));
}
