//! Startup configuration as redis-server takes it: `quince-server [config-file] [--name value ...]`.
//! The file uses redis.conf syntax; command-line options are appended after the file,
//! so they win, exactly as in Redis.

use quince_engine::Config;

#[derive(Debug)]
pub struct StartupConfig {
    pub config: Config,
    pub config_file: Option<String>,
}

/// What went wrong, rendered like redis-server's "FATAL CONFIG FILE ERROR" report.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub line_number: usize,
    pub line: String,
    pub reason: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "\n*** FATAL CONFIG FILE ERROR (Quince {}) ***\nReading the configuration file, at line {}\n>>> '{}'\n{}",
            quince_engine::QUINCE_VERSION,
            self.line_number,
            self.line,
            self.reason
        )
    }
}

/// Turns `--port 6380 --save "" --bind a b` into config lines, as redis-server's main() does.
pub fn args_to_lines(args: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for arg in args {
        if let Some(name) = arg.strip_prefix("--") {
            lines.push(name.to_string());
        } else if let Some(line) = lines.last_mut() {
            line.push(' ');
            line.push_str(&quote(arg));
        }
    }
    lines
}

/// Quotes an argument so `split_args` gives it back unchanged.
fn quote(arg: &str) -> String {
    let mut q = String::from("\"");
    for c in arg.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => q.push_str("\\r"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Applies redis.conf-syntax text to `config`.
pub fn apply_text(config: &mut Config, text: &str) -> Result<(), ConfigError> {
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |reason: String| ConfigError { line_number: i + 1, line: line.to_string(), reason };
        let words = quince_resp::split_args(line.as_bytes())
            .ok_or_else(|| fail("Unbalanced quotes in configuration line".into()))?;
        let words: Vec<String> = words.into_iter().map(|w| String::from_utf8_lossy(&w).into_owned()).collect();
        let Some((name, values)) = words.split_first() else { continue };
        if name.eq_ignore_ascii_case("include") {
            let [path] = values else { return Err(fail("Bad directive or wrong number of arguments".into())) };
            let included = std::fs::read_to_string(path).map_err(|e| fail(format!("Can't open included file: {e}")))?;
            apply_text(config, &included)?;
            continue;
        }
        config.set(name, values).map_err(fail)?;
    }
    Ok(())
}

/// Parses the process arguments (without argv[0]).
pub fn load(args: &[String]) -> Result<StartupConfig, String> {
    let mut config = Config::default();
    let (config_file, options) = match args.first() {
        Some(first) if !first.starts_with("--") => (Some(first.clone()), &args[1..]),
        _ => (None, args),
    };
    if let Some(path) = &config_file {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("Fatal error, can't open config file '{path}': {e}"))?;
        apply_text(&mut config, &text).map_err(|e| e.to_string())?;
    }
    if let Some(stray) = options.first().filter(|a| !a.starts_with("--")) {
        return Err(format!("Unexpected argument '{stray}': options are --name value"));
    }
    apply_text(&mut config, &args_to_lines(options).join("\n")).map_err(|e| e.to_string())?;
    // Redis keeps the absolute path, so CONFIG REWRITE works after a chdir (`dir`).
    let config_file =
        config_file.map(|p| std::fs::canonicalize(&p).map(|a| a.to_string_lossy().into_owned()).unwrap_or(p));
    Ok(StartupConfig { config, config_file })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_line_overrides() {
        let c = load(&strings(&["--port", "7000", "--save", "", "--bind", "127.0.0.1", "::1"])).unwrap().config;
        assert_eq!(c.get_int("port"), 7000);
        assert_eq!(c.get("save"), Some(""));
        assert_eq!(c.get("bind"), Some("127.0.0.1 ::1"));
    }

    #[test]
    fn file_then_args() {
        let dir = std::env::temp_dir().join(format!("quince-conf-{}", std::process::id()));
        std::fs::write(&dir, "# comment\nport 7001\ntimeout 5\nbind \"127.0.0.1\"\n").unwrap();
        let c = load(&strings(&[dir.to_str().unwrap(), "--timeout", "9"])).unwrap().config;
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(c.get_int("port"), 7001);
        assert_eq!(c.get_int("timeout"), 9);
        assert_eq!(c.get("bind"), Some("127.0.0.1"));
    }

    #[test]
    fn bad_directive_is_reported_like_redis() {
        let mut c = Config::default();
        let err = apply_text(&mut c, "port 1\nnot-a-directive yes\n").unwrap_err();
        assert_eq!(err.line_number, 2);
        assert_eq!(err.reason, "Bad directive or wrong number of arguments");
        assert!(err.to_string().contains("FATAL CONFIG FILE ERROR"));
    }
}
