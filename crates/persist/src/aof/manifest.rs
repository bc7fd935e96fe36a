//! The multi-part AOF manifest (Redis 7.0): which base and incremental files make up the
//! append-only file, in order. One line per file:
//! `file <name> seq <n> type <b|h|i>` (base, history, incremental).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Base,
    History,
    Incr,
}

impl FileType {
    fn letter(self) -> char {
        match self {
            FileType::Base => 'b',
            FileType::History => 'h',
            FileType::Incr => 'i',
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AofFile {
    pub name: String,
    pub seq: u64,
    pub kind: FileType,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<AofFile>,
    pub history: Vec<AofFile>,
    pub incr: Vec<AofFile>,
    /// Highest sequence numbers handed out so far, per kind.
    pub base_seq: u64,
    pub incr_seq: u64,
}

impl Manifest {
    /// Parses a manifest as Redis's aofLoadManifestFromFile does: read in lines of at most
    /// 1,024 bytes (a longer one, or a last line without its newline, is "too long"), lines
    /// starting with `#` skipped, a blank line, a line of fewer than six words or an odd
    /// number of them, or one without file name, seq (non-zero) or type is an error, keys in
    /// any case, unknown keys ignored, an unknown type, a second base or a non-increasing
    /// incremental sequence is an error, and so is an empty manifest.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        const MAX_LINE: usize = 1024;
        let invalid = || "Invalid AOF manifest file format".to_string();
        let mut manifest = Manifest::default();
        let mut rest = text;
        let mut lines = 0;
        while !rest.is_empty() {
            // fgets: up to and including a newline, at most MAX_LINE bytes.
            let mut take = rest.find('\n').map_or(rest.len(), |i| i + 1).min(MAX_LINE);
            while !rest.is_char_boundary(take) {
                take -= 1;
            }
            let (chunk, after) = rest.split_at(take);
            rest = after;
            lines += 1;
            if chunk.starts_with('#') {
                continue;
            }
            if !chunk.ends_with('\n') {
                return Err("The AOF manifest file contains too long line".into());
            }
            let line = chunk.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
            if line.is_empty() {
                return Err(invalid());
            }
            let words = split_words(line).ok_or_else(invalid)?;
            if words.len() < 6 || words.len() % 2 != 0 {
                return Err(invalid());
            }
            let (mut name, mut seq, mut kind) = (None, 0u64, None);
            for pair in words.chunks(2) {
                if pair[0].eq_ignore_ascii_case("file") {
                    if pair[1].contains('/') {
                        return Err("File can't be a path, just a filename".into());
                    }
                    name = Some(pair[1].clone());
                } else if pair[0].eq_ignore_ascii_case("seq") {
                    // (A negative one is no valid sequence either.)
                    seq = quince_engine::cmd::atoi(pair[1].as_bytes()).max(0) as u64;
                } else if pair[0].eq_ignore_ascii_case("type") {
                    kind = pair[1].chars().next();
                }
            }
            let (Some(name), Some(kind)) = (name, kind) else { return Err(invalid()) };
            if seq == 0 {
                return Err(invalid());
            }
            match kind {
                'b' => {
                    if manifest.base.is_some() {
                        return Err("Found duplicate base file information".into());
                    }
                    manifest.base_seq = seq;
                    manifest.base = Some(AofFile { name, seq, kind: FileType::Base });
                }
                'h' => manifest.history.push(AofFile { name, seq, kind: FileType::History }),
                'i' => {
                    if seq <= manifest.incr_seq {
                        return Err("Found a non-monotonic sequence number".into());
                    }
                    manifest.incr_seq = seq;
                    manifest.incr.push(AofFile { name, seq, kind: FileType::Incr });
                }
                _ => return Err("Unknown AOF file type".into()),
            }
        }
        if lines == 0 {
            return Err("Found an empty AOF manifest".into());
        }
        Ok(manifest)
    }

    /// The manifest's text: base first, then history, then incremental files.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for file in self.base.iter().chain(&self.history).chain(&self.incr) {
            let name = if file.name.bytes().all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\') {
                file.name.clone()
            } else {
                format!("{:?}", file.name)
            };
            let _ = writeln!(out, "file {name} seq {} type {}", file.seq, file.kind.letter());
        }
        out
    }

    /// Adds a new base file (the previous one becomes history) and returns its name.
    pub fn new_base(&mut self, prefix: &str, rdb: bool) -> String {
        // Newest history first, as Redis's listAddNodeHead.
        if let Some(mut old) = self.base.take() {
            old.kind = FileType::History;
            self.history.insert(0, old);
        }
        self.base_seq += 1;
        let name = format!("{prefix}.{}.base.{}", self.base_seq, if rdb { "rdb" } else { "aof" });
        self.base = Some(AofFile { name: name.clone(), seq: self.base_seq, kind: FileType::Base });
        name
    }

    /// Adds a new incremental file and returns its name.
    pub fn new_incr(&mut self, prefix: &str) -> String {
        self.incr_seq += 1;
        let name = format!("{prefix}.{}.incr.aof", self.incr_seq);
        self.incr.push(AofFile { name: name.clone(), seq: self.incr_seq, kind: FileType::Incr });
        name
    }

    /// After a rewrite: every incremental file but the last one is now history.
    pub fn incr_rewritten_except_last(&mut self) {
        let keep = self.incr.pop();
        self.incr_rewritten();
        self.incr.extend(keep);
    }

    /// After a rewrite with no AOF open: every incremental file is now history. Added at
    /// the front of the history in their own order (Redis walks them from the last one,
    /// adding each at the head).
    pub fn incr_rewritten(&mut self) {
        let moved: Vec<AofFile> = self
            .incr
            .drain(..)
            .map(|mut file| {
                file.kind = FileType::History;
                file
            })
            .collect();
        self.history.splice(0..0, moved);
    }

    /// Files to load, in order: the base, then the incremental files.
    pub fn load_order(&self) -> impl Iterator<Item = &AofFile> {
        self.base.iter().chain(&self.incr)
    }

    /// Writes the manifest atomically: a temp file, fsync, rename, fsync of the directory.
    pub fn persist(&self, dir: &Path, manifest_name: &str) -> std::io::Result<()> {
        let tmp = dir.join(format!("temp-{manifest_name}"));
        {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(self.render().as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, dir.join(manifest_name))?;
        sync_dir(dir)
    }
}

/// Makes a rename or creation in `dir` durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Splits a manifest line into words, honouring double-quoted names with escapes.
fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else { return Some(words) };
        let mut word = String::new();
        if first == '"' {
            chars.next();
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => match chars.next()? {
                        'n' => word.push('\n'),
                        'r' => word.push('\r'),
                        't' => word.push('\t'),
                        c => word.push(c),
                    },
                    c => word.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_redis_manifests() {
        let text = "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.base.as_ref().unwrap().name, "appendonly.aof.1.base.rdb");
        assert_eq!(m.incr.len(), 1);
        assert_eq!(m.render(), text);
    }

    #[test]
    fn rewrite_moves_old_files_to_history() {
        let mut m = Manifest::default();
        m.new_base("appendonly.aof", true);
        m.new_incr("appendonly.aof");
        m.new_incr("appendonly.aof");
        m.new_base("appendonly.aof", true);
        m.incr_rewritten_except_last();
        assert_eq!(
            m.render(),
            "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.1.incr.aof seq 1 type h\n\
             file appendonly.aof.1.base.rdb seq 1 type h\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
        );
    }

    #[test]
    fn history_is_newest_first_as_redis_lists_it() {
        // Redis's "AOF enable/disable auto gc" expects this manifest after two rewrites.
        let mut m = Manifest::default();
        for _ in 0..5 {
            m.new_base("appendonly.aof", true);
        }
        m.history.clear();
        m.new_incr("appendonly.aof");
        for _ in 0..2 {
            m.new_base("appendonly.aof", true);
            m.new_incr("appendonly.aof");
            m.incr_rewritten_except_last();
        }
        assert_eq!(
            m.render(),
            "file appendonly.aof.7.base.rdb seq 7 type b\nfile appendonly.aof.2.incr.aof seq 2 type h\n\
             file appendonly.aof.6.base.rdb seq 6 type h\nfile appendonly.aof.1.incr.aof seq 1 type h\n\
             file appendonly.aof.5.base.rdb seq 5 type h\nfile appendonly.aof.3.incr.aof seq 3 type i\n"
        );
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(Manifest::parse("file a seq 1\n").is_err());
        assert!(Manifest::parse("file a seq x type b\n").is_err());
        assert!(Manifest::parse("file a/b seq 1 type b\n").is_err());
        assert!(Manifest::parse("file a seq 1 type b\nfile b seq 2 type b\n").is_err());
        assert!(Manifest::parse("file \"a b\" seq 1 type i\n").unwrap().incr[0].name == "a b");
        // As Redis: a blank line, an unknown type, an empty manifest, a line of more than
        // 1,024 bytes or a last line without its newline are errors; comments and keys in
        // any case are fine.
        let err = |text: &str| Manifest::parse(text).unwrap_err();
        assert_eq!(err("file a seq 1 type b\n\nfile b seq 1 type i\n"), "Invalid AOF manifest file format");
        assert_eq!(err("file a seq 1 type x\n"), "Unknown AOF file type");
        assert_eq!(err(""), "Found an empty AOF manifest");
        assert_eq!(
            err(&format!("file {} seq 1 type b\n", "a".repeat(1100))),
            "The AOF manifest file contains too long line"
        );
        assert_eq!(err("file a seq 1 type b"), "The AOF manifest file contains too long line");
        assert_eq!(err("file a seq 0 type b\n"), "Invalid AOF manifest file format");
        let m = Manifest::parse("# note\nFILE a SEQ 1 TYPE b extra x\n").unwrap();
        assert_eq!(m.base.unwrap().name, "a");
    }
}
