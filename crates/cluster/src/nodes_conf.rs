//! CLUSTER NODES lines and the `nodes.conf` file, in Redis 7.0's format
//! (clusterGenNodeDescription, clusterSaveConfig, clusterLoadConfig):
//!
//! `<id> <ip>:<port>@<cport>[,<hostname>] <flags> <master|-> <ping-sent> <pong-recv>
//! <config-epoch> <connected|disconnected> <slot or range>... [<slot>->-<id>] [<slot>-<-<id>]`
//!
//! then, in the file only, `vars currentEpoch <n> lastVoteEpoch <n>`.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::message::{flag, slot_is_set, NodeName, SLOTS};
use crate::state::{node_name_str, Node, State};

/// The flags' words, in Redis's order.
const FLAG_WORDS: [(u16, &str); 8] = [
    (flag::MYSELF, "myself"),
    (flag::MASTER, "master"),
    (flag::REPLICA, "slave"),
    (flag::PFAIL, "fail?"),
    (flag::FAIL, "fail"),
    (flag::HANDSHAKE, "handshake"),
    (flag::NOADDR, "noaddr"),
    (flag::NOFAILOVER, "nofailover"),
];

pub fn flags_text(flags: u16) -> String {
    let words: Vec<&str> = FLAG_WORDS.iter().filter(|(f, _)| flags & f != 0).map(|(_, w)| *w).collect();
    if words.is_empty() {
        "noflags".into()
    } else {
        words.join(",")
    }
}

fn flags_from_text(text: &str) -> Result<u16, String> {
    let mut flags = 0;
    for word in text.split(',') {
        match FLAG_WORDS.iter().find(|(_, w)| *w == word) {
            Some((f, _)) => flags |= f,
            None if word == "noflags" => {}
            None => return Err(format!("Unknown flag in redis cluster config file: {word}")),
        }
    }
    Ok(flags)
}

/// The slot ranges a node serves, as `start-end` or `slot` words (whole bytes of the
/// bitmap at a time where they are empty or full).
pub fn slot_ranges(node: &Node) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start: Option<usize> = None;
    let mut slot = 0;
    while slot < SLOTS {
        let byte = node.slots[slot >> 3];
        if slot & 7 == 0 && (byte == 0 || byte == 0xFF) {
            match (byte, start) {
                (0, Some(s)) => {
                    ranges.push((s, slot - 1));
                    start = None;
                }
                (0xFF, None) => start = Some(slot),
                _ => {}
            }
            slot += 8;
            continue;
        }
        match (slot_is_set(&node.slots, slot), start) {
            (true, None) => start = Some(slot),
            (false, Some(s)) => {
                ranges.push((s, slot - 1));
                start = None;
            }
            _ => {}
        }
        slot += 1;
    }
    if let Some(s) = start {
        ranges.push((s, SLOTS - 1));
    }
    ranges
}

/// One node's line (no newline).
pub fn node_line(state: &State, node: &Node) -> String {
    let mut line = String::with_capacity(128);
    let _ = write!(line, "{} {}:{}@{}", node.name_str(), node.ip, node.port, node.cport);
    if !node.hostname.is_empty() {
        let _ = write!(line, ",{}", node.hostname);
    }
    let master = node.replica_of.map_or("-".to_string(), |m| node_name_str(&m).to_string());
    let connected = node.link.is_some() || node.flags & flag::MYSELF != 0;
    // A replica shows its master's epoch.
    let epoch = match node.replica_of.and_then(|m| state.nodes.get(&m)) {
        Some(m) if node.is_replica() => m.config_epoch,
        _ => node.config_epoch,
    };
    let _ = write!(
        line,
        " {} {} {} {} {} {}",
        flags_text(node.flags),
        master,
        node.ping_sent,
        node.pong_received,
        epoch,
        if connected { "connected" } else { "disconnected" }
    );
    if node.is_master() {
        for (start, end) in slot_ranges(node) {
            if start == end {
                let _ = write!(line, " {start}");
            } else {
                let _ = write!(line, " {start}-{end}");
            }
        }
    }
    if node.flags & flag::MYSELF != 0 {
        for (slot, to) in &state.migrating_to {
            let _ = write!(line, " [{slot}->-{}]", node_name_str(to));
        }
        for (slot, from) in &state.importing_from {
            let _ = write!(line, " [{slot}-<-{}]", node_name_str(from));
        }
    }
    line
}

/// CLUSTER NODES: every node's line, each ending in a newline.
pub fn describe(state: &State) -> String {
    let mut out = String::new();
    for node in state.nodes.values() {
        out.push_str(&node_line(state, node));
        out.push('\n');
    }
    out
}

/// The file's text (nodes in handshake are not saved).
pub fn render(state: &State) -> String {
    let mut text = String::new();
    for node in state.nodes.values().filter(|n| !n.in_handshake()) {
        text.push_str(&node_line(state, node));
        text.push('\n');
    }
    let _ = writeln!(text, "vars currentEpoch {} lastVoteEpoch {}", state.current_epoch, state.last_vote_epoch);
    text
}

/// Writes the file in place, as Redis's clusterSaveConfig: the new text padded with
/// newlines to the old length (a crash mid-write leaves whole lines of one version or the
/// other, never a shorter file), then cut to its length; synced when asked.
pub fn save(path: &std::path::Path, state: &State, fsync: bool) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut text = render(state).into_bytes();
    let len = text.len() as u64;
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path)?;
    let old = f.metadata()?.len();
    if old > len {
        text.resize(old as usize, b'\n');
    }
    f.seek(SeekFrom::Start(0))?;
    f.write_all(&text)?;
    if fsync {
        f.sync_all()?;
    }
    if old > len {
        f.set_len(len)?;
    }
    Ok(())
}

/// What a nodes.conf holds, to rebuild the state from.
pub struct Loaded {
    pub myself: NodeName,
    pub nodes: Vec<Node>,
    pub current_epoch: u64,
    pub last_vote_epoch: u64,
    pub migrating: Vec<(u16, NodeName)>,
    pub importing: Vec<(u16, NodeName)>,
}

fn name(word: &str) -> Result<NodeName, String> {
    let bytes: NodeName =
        word.as_bytes().try_into().map_err(|_| format!("Invalid node name '{word}' in cluster config file"))?;
    Ok(bytes)
}

/// Parses a nodes.conf (clusterLoadConfig); an error stops the start, as in Redis.
pub fn parse(text: &str, now: i64) -> Result<Loaded, String> {
    let mut loaded = Loaded {
        myself: [0; 40],
        nodes: Vec::new(),
        current_epoch: 0,
        last_vote_epoch: 0,
        migrating: Vec::new(),
        importing: Vec::new(),
    };
    let mut found_myself = false;
    for raw in text.lines() {
        let words: Vec<&str> = raw.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if words[0] == "vars" {
            let mut pairs = words[1..].chunks(2);
            for pair in &mut pairs {
                match pair {
                    ["currentEpoch", v] => {
                        loaded.current_epoch = v.parse().map_err(|_| format!("Bad currentEpoch {v}"))?
                    }
                    ["lastVoteEpoch", v] => {
                        loaded.last_vote_epoch = v.parse().map_err(|_| format!("Bad lastVoteEpoch {v}"))?
                    }
                    [other, _] => return Err(format!("Skipping unknown cluster config variable '{other}'")),
                    _ => return Err("Unrecoverable error: corrupted cluster config file.".into()),
                }
            }
            continue;
        }
        if words.len() < 8 {
            return Err("Unrecoverable error: corrupted cluster config file.".into());
        }
        let id = name(words[0])?;
        let mut node = Node::new(id, 0, now);
        // ip:port@cport[,hostname]
        let (addr, hostname) = match words[1].split_once(',') {
            Some((a, h)) => (a, h),
            None => (words[1], ""),
        };
        node.hostname = hostname.to_string();
        let (ip_port, cport) = match addr.rsplit_once('@') {
            Some((a, c)) => (a, Some(c)),
            None => (addr, None),
        };
        let (ip, port) = ip_port.rsplit_once(':').ok_or("Unrecoverable error: corrupted cluster config file.")?;
        node.ip = ip.to_string();
        node.port = port.parse().map_err(|_| "Unrecoverable error: corrupted cluster config file.")?;
        // Without `@cport`, the bus port is the client port + 10000 (older files).
        node.cport = match cport {
            Some(c) => c.parse().map_err(|_| "Unrecoverable error: corrupted cluster config file.")?,
            None => node.port.wrapping_add(10000),
        };
        node.flags = flags_from_text(words[2])?;
        if node.flags & flag::MYSELF != 0 {
            if found_myself {
                return Err("Unrecoverable error: corrupted cluster config file.".into());
            }
            found_myself = true;
            loaded.myself = id;
        }
        if words[3] != "-" {
            node.replica_of = Some(name(words[3])?);
        }
        // Any ping or pong on record counts as now (the links are new).
        node.ping_sent = if words[4] != "0" { now } else { 0 };
        node.pong_received = if words[5] != "0" { now } else { 0 };
        node.config_epoch = words[6].parse().map_err(|_| "Unrecoverable error: corrupted cluster config file.")?;
        for word in &words[8..] {
            if let Some(inner) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                if let Some((slot, to)) = inner.split_once("->-") {
                    loaded.migrating.push((slot.parse().map_err(|_| "Bad slot")?, name(to)?));
                } else if let Some((slot, from)) = inner.split_once("-<-") {
                    loaded.importing.push((slot.parse().map_err(|_| "Bad slot")?, name(from)?));
                } else {
                    return Err("Unrecoverable error: corrupted cluster config file.".into());
                }
                continue;
            }
            let (start, end) = match word.split_once('-') {
                Some((a, b)) => (a, b),
                None => (*word, *word),
            };
            let start: usize = start.parse().map_err(|_| "Unrecoverable error: corrupted cluster config file.")?;
            let end: usize = end.parse().map_err(|_| "Unrecoverable error: corrupted cluster config file.")?;
            if start > end || end >= SLOTS {
                return Err("Unrecoverable error: corrupted cluster config file.".into());
            }
            for slot in start..=end {
                crate::message::set_slot(&mut node.slots, slot);
            }
        }
        node.numslots = (0..SLOTS).filter(|&s| slot_is_set(&node.slots, s)).count();
        loaded.nodes.push(node);
    }
    if !found_myself {
        return Err("Unrecoverable error: corrupted cluster config file.".into());
    }
    // The current epoch is at least every node's config epoch.
    let max_epoch = loaded.nodes.iter().map(|n| n.config_epoch).max().unwrap_or(0);
    loaded.current_epoch = loaded.current_epoch.max(max_epoch);
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Settings, State};

    #[test]
    fn a_file_written_reads_back() {
        let me = [b'a'; 40];
        let mut state = State::new(me, Settings { port: 7000, cport: 17000, ..Settings::default() }, 1000);
        state.nodes.get_mut(&me).unwrap().ip = "127.0.0.1".into();
        for slot in (0..100).chain([200, 16383]) {
            state.add_slot(me, slot);
        }
        state.migrating_to.insert(5, [b'b'; 40]);
        state.current_epoch = 7;
        state.last_vote_epoch = 3;
        let mut other = Node::new([b'b'; 40], flag::REPLICA, 1000);
        other.ip = "10.0.0.2".into();
        other.port = 7001;
        other.cport = 17001;
        other.hostname = "host-b".into();
        other.replica_of = Some(me);
        state.add_node(other);
        let text = render(&state);
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            format!(
                "{} 127.0.0.1:7000@17000 myself,master - 0 0 0 connected 0-99 200 16383 [5->-{}]",
                "a".repeat(40),
                "b".repeat(40)
            )
        );
        assert_eq!(
            lines.next().unwrap(),
            format!("{} 10.0.0.2:7001@17001,host-b slave {} 0 0 0 disconnected", "b".repeat(40), "a".repeat(40))
        );
        assert_eq!(lines.next().unwrap(), "vars currentEpoch 7 lastVoteEpoch 3");
        let loaded = parse(&text, 5).unwrap();
        assert_eq!(loaded.myself, me);
        assert_eq!(loaded.current_epoch, 7);
        assert_eq!(loaded.last_vote_epoch, 3);
        assert_eq!(loaded.migrating, vec![(5, [b'b'; 40])]);
        assert_eq!(loaded.nodes[0].numslots, 102);
        assert_eq!(loaded.nodes[1].hostname, "host-b");
        assert_eq!(loaded.nodes[1].replica_of, Some(me));
    }

    proptest::proptest! {
        // The byte-skipping walk finds the same ranges as a slot-by-slot one.
        #[test]
        fn slot_ranges_match_a_plain_walk(runs in proptest::collection::vec((0usize..16384, 0usize..600), 0..12)) {
            let mut node = Node::new([b'a'; 40], flag::MASTER, 0);
            for (start, len) in runs {
                for slot in start..(start + len).min(SLOTS) {
                    crate::message::set_slot(&mut node.slots, slot);
                }
            }
            let mut plain = Vec::new();
            let mut start = None;
            for slot in 0..=SLOTS {
                let set = slot < SLOTS && slot_is_set(&node.slots, slot);
                match (set, start) {
                    (true, None) => start = Some(slot),
                    (false, Some(s)) => { plain.push((s, slot - 1)); start = None; }
                    _ => {}
                }
            }
            proptest::prop_assert_eq!(slot_ranges(&node), plain);
        }
    }

    #[test]
    fn broken_files_are_refused() {
        assert!(parse("garbage\n", 0).is_err());
        assert!(parse(&format!("{} 1.2.3.4:1@2 master - 0 0 0 connected\n", "a".repeat(40)), 0).is_err(), "no myself");
        assert!(parse(&format!("{} 1.2.3.4:1@2 myself,bogus - 0 0 0 connected\n", "a".repeat(40)), 0).is_err());
        assert!(parse(&format!("{} 1.2.3.4:1@2 myself,master - 0 0 0 connected 5-99999\n", "a".repeat(40)), 0).is_err());
    }
}
