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

/// Turns `--port 6380 --save "" --bind a b` into config lines, as redis-server 7.0's main()
/// does: an argument starting with `--` names an option, unless the option before has no
/// value yet (then `--port --loglevel verbose` sets port to "--loglevel verbose", which
/// fails as Redis's does); an argument holding a name and its value (`"--port 6380"`)
/// counts as both; `--save` followed by another option, or last, means `save ""`.
pub fn args_to_lines(args: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut last_has_value = true;
    for (j, arg) in args.iter().enumerate() {
        match arg.strip_prefix("--") {
            Some(name) if last_has_value => {
                let mut line = name.to_string();
                let words = quince_resp::split_args(arg.as_bytes()).map_or(1, |w| w.len());
                last_has_value = words > 1;
                if !last_has_value && arg.eq_ignore_ascii_case("--save") {
                    let next_is_option = args.get(j + 1).is_some_and(|n| n.starts_with("--"));
                    if next_is_option || j + 1 == args.len() {
                        line.push_str(" \"\"");
                        last_has_value = true;
                    }
                }
                lines.push(line);
            }
            _ => {
                // (Words before any `--name` start a line of their own, as Redis reads
                // `redis-server file loglevel verbose`.)
                match lines.last_mut() {
                    Some(line) => {
                        line.push(' ');
                        line.push_str(&quote(arg));
                    }
                    None => lines.push(quote(arg)),
                }
                last_has_value = true;
            }
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
    // Numbered as Redis numbers them: the options follow the file's text after a newline.
    let file_lines = match &config_file {
        Some(path) => std::fs::read_to_string(path).map_or(0, |t| t.split('\n').count()),
        None => 1,
    };
    let options_text = "\n".repeat(file_lines) + &args_to_lines(options).join("\n");
    apply_text(&mut config, &options_text).map_err(|e| e.to_string())?;
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
    fn option_values_may_start_with_dashes_as_in_redis() {
        let lines = |a: &[&str]| args_to_lines(&strings(a));
        assert_eq!(lines(&["--port", "--loglevel", "verbose"]), ["port \"--loglevel\" \"verbose\""]);
        assert_eq!(lines(&["--port", "6379", "--loglevel", "verbose"]), ["port \"6379\"", "loglevel \"verbose\""]);
        assert_eq!(lines(&["--port 6380", "--loglevel", "verbose"]), ["port 6380", "loglevel \"verbose\""]);
        assert_eq!(lines(&["--save", "--loglevel", "verbose"]), ["save \"\"", "loglevel \"verbose\""]);
        assert_eq!(lines(&["--loglevel", "verbose", "--save"]), ["loglevel \"verbose\"", "save \"\""]);
        // Redis's "wrong usage that we support anyway".
        assert_eq!(
            lines(&["loglevel", "verbose", "--maxmemory '700mb'"]),
            ["\"loglevel\" \"verbose\"", "maxmemory '700mb'"]
        );
        let file = std::env::temp_dir().join(format!("quince-wrong-usage-{}", std::process::id()));
        std::fs::write(&file, "port 7001\n").unwrap();
        let args =
            [file.to_str().unwrap(), "loglevel", "verbose", "--maxmemory '700mb'", "--maxmemory-policy 'volatile-lru'"];
        let c = load(&strings(&args)).unwrap().config;
        std::fs::remove_file(&file).unwrap();
        assert_eq!((c.get("loglevel"), c.get_int("maxmemory")), (Some("verbose"), 734_003_200));
        assert_eq!(c.get("maxmemory-policy"), Some("volatile-lru"));
        let err = load(&strings(&["--port", "--bla", "--loglevel", "verbose"])).unwrap_err();
        assert!(
            err.contains("'port \"--bla\"'") && err.contains("argument couldn't be parsed into an integer"),
            "{err}"
        );
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
