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
    /// Parses a manifest as Redis's aofLoadManifestFromFile does: unknown keys are ignored,
    /// a line without file name, seq or type is an error, and so is more than one base.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut manifest = Manifest::default();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_words(line).ok_or("Invalid AOF manifest file format")?;
            if words.len() % 2 != 0 {
                return Err("Invalid AOF manifest file format".into());
            }
            let (mut name, mut seq, mut kind) = (None, None, None);
            for pair in words.chunks(2) {
                match pair[0].as_str() {
                    "file" => name = Some(pair[1].clone()),
                    "seq" => seq = pair[1].parse::<u64>().ok(),
                    "type" => {
                        kind = match pair[1].as_str() {
                            "b" => Some(FileType::Base),
                            "h" => Some(FileType::History),
                            "i" => Some(FileType::Incr),
                            _ => None,
                        }
                    }
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
                return Err("Invalid AOF manifest file format".into());
            };
            if name.contains('/') {
                return Err("File can't be a path, just a filename".into());
            }
            let file = AofFile { name, seq, kind };
            match kind {
                FileType::Base => {
                    if manifest.base.is_some() {
                        return Err("Found duplicate base file information".into());
                    }
                    manifest.base_seq = seq;
                    manifest.base = Some(file);
                }
                FileType::History => manifest.history.push(file),
                FileType::Incr => {
                    if seq <= manifest.incr_seq && !manifest.incr.is_empty() {
                        return Err("Found a non-monotonic sequence number".into());
                    }
                    manifest.incr_seq = seq;
                    manifest.incr.push(file);
                }
            }
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
        if let Some(mut old) = self.base.take() {
            old.kind = FileType::History;
            self.history.push(old);
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
        for mut file in self.incr.drain(..) {
            file.kind = FileType::History;
            self.history.push(file);
        }
        self.incr.extend(keep);
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
            "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.1.base.rdb seq 1 type h\n\
             file appendonly.aof.1.incr.aof seq 1 type h\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
        );
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(Manifest::parse("file a seq 1\n").is_err());
        assert!(Manifest::parse("file a seq x type b\n").is_err());
        assert!(Manifest::parse("file a/b seq 1 type b\n").is_err());
        assert!(Manifest::parse("file a seq 1 type b\nfile b seq 2 type b\n").is_err());
        assert!(Manifest::parse("file \"a b\" seq 1 type i\n").unwrap().incr[0].name == "a b");
    }
}
