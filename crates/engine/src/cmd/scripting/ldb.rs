//! The Lua debugger, as Redis 7.0's LDB in its synchronous mode (SCRIPT DEBUG SYNC; what
//! `redis-cli --ldb-sync-mode` drives).
//!
//! After SCRIPT DEBUG SYNC, the client's next EVAL runs under a line hook that stops at the
//! first line and then wherever the user steps or set a breakpoint. At each stop the hook
//! talks to the client directly over its connection, through the worker that runs the
//! script (`ScriptService::debug_send` / `debug_receive`): it sends the log lines gathered
//! so far as an array of status replies and reads the user's debugger commands (`step`,
//! `print`, `redis`...) until one resumes the script. The script holds the transaction gate
//! alone for the whole session and counts as busy, so other clients get BUSY (Redis blocks
//! the whole server instead). The connection closes after the EVAL's reply, as in Redis.
//!
//! The session lives in a thread-local: the hook, redis.call's logging and redis.debug()
//! each take it for a moment, never across a call into Lua.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use mlua::{DebugEvent, Function, HookTriggers, Lua, Table, Value, Variadic, VmState};

use super::luaapi::fmt_g;
use super::{lua_err, RunState};
use crate::cmd::atoi;
use crate::exec::quote_repr;

/// Replies and values logged are cut at this length unless `maxlen` says otherwise.
const MAX_LEN_DEFAULT: usize = 256;
const BREAKPOINTS_MAX: usize = 64;
/// How deep nested tables are shown (Redis's LUA_MINSTACK / 2).
const MAX_VALUES_DEPTH: usize = 10;
/// A debugging client may buffer this much input without sending a whole command.
const MAX_INPUT: usize = 1 << 20;

struct Session {
    /// The script's source, line by line (line 1 first).
    lines: Vec<Vec<u8>>,
    breakpoints: Vec<i64>,
    /// Stop at the next line.
    step: bool,
    /// redis.breakpoint() was called: stop at the next line.
    lua_breakpoint: bool,
    current_line: i64,
    maxlen: usize,
    maxlen_hint_sent: bool,
    /// Log lines not sent yet.
    logs: Vec<Vec<u8>>,
    /// Input received and not yet a whole command.
    input: Vec<u8>,
    /// Since the last stop: how long the script ran on its own (the timeout stop).
    resumed: Instant,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

fn with<R>(f: impl FnOnce(&mut Session) -> R) -> Option<R> {
    SESSION.with(|s| s.borrow_mut().as_mut().map(f))
}

/// A debugging session runs on this thread.
pub(super) fn active() -> bool {
    SESSION.with(|s| s.borrow().is_some())
}

/// Commands the script runs are logged with their replies (the user is stepping).
pub(super) fn stepping() -> bool {
    with(|s| s.step).unwrap_or(false)
}

/// Starts a session for the script `body` (Redis's ldbStartSession).
pub(super) fn begin(body: &[u8]) {
    let mut body = body;
    while let [rest @ .., b'\n' | b'\r'] = body {
        body = rest;
    }
    let lines = if body.is_empty() { Vec::new() } else { body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
    let session = Session {
        lines,
        breakpoints: Vec::new(),
        step: true,
        lua_breakpoint: false,
        current_line: -1,
        maxlen: MAX_LEN_DEFAULT,
        maxlen_hint_sent: false,
        logs: Vec::new(),
        input: Vec::new(),
        resumed: Instant::now(),
    };
    SESSION.with(|s| *s.borrow_mut() = Some(session));
}

/// Ends the session: what is left of the log and an `<endsession>` mark go to the client.
pub(super) fn end() {
    log(b"<endsession>".to_vec());
    send_logs();
    SESSION.with(|s| *s.borrow_mut() = None);
}

fn log(entry: Vec<u8>) {
    with(|s| s.logs.push(entry));
}

impl Session {
    fn log(&mut self, entry: impl Into<Vec<u8>>) {
        self.logs.push(entry.into());
    }

    /// Logs `entry` cut at `maxlen`, with a hint about `maxlen` the first time.
    fn log_with_maxlen(&mut self, mut entry: Vec<u8>) {
        let trimmed = self.maxlen != 0 && entry.len() > self.maxlen;
        if trimmed {
            entry.truncate(self.maxlen);
            entry.extend_from_slice(b" ...");
        }
        self.logs.push(entry);
        if trimmed && !self.maxlen_hint_sent {
            self.maxlen_hint_sent = true;
            self.log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
        }
    }

    fn is_breakpoint(&self, line: i64) -> bool {
        self.breakpoints.contains(&line)
    }

    fn source_line(&self, line: i64) -> &[u8] {
        match usize::try_from(line - 1).ok().and_then(|i| self.lines.get(i)) {
            Some(text) => text,
            None => b"<out of range source code line>",
        }
    }

    /// One line of source as the debugger shows it: `->` marks the current line, `#` a
    /// breakpoint.
    fn log_source_line(&mut self, line: i64) {
        let prefix = match (line == self.current_line, self.is_breakpoint(line)) {
            (true, true) => "->#",
            (true, false) => "-> ",
            (false, true) => "  #",
            (false, false) => "   ",
        };
        let mut entry = format!("{prefix}{line:<3} ").into_bytes();
        entry.extend_from_slice(self.source_line(line));
        self.log(entry);
    }

    /// The lines within `context` of `around` (every line when `around` is 0).
    fn list(&mut self, around: i64, context: i64) {
        for line in 1..=self.lines.len() as i64 {
            if around != 0 && (around - line).abs() > context {
                continue;
            }
            self.log_source_line(line);
        }
    }
}

/// Sends the log to the client as an array of status replies (newlines become spaces).
fn send_logs() {
    let Some(logs) = with(|s| std::mem::take(&mut s.logs)) else { return };
    let mut proto = format!("*{}\r\n", logs.len()).into_bytes();
    for entry in logs {
        proto.push(b'+');
        proto.extend(entry.into_iter().map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
        proto.extend_from_slice(b"\r\n");
    }
    // A failed send shows as the client being gone at the next read.
    super::debug_send(&proto);
}

/// What the hook needs of the VM.
pub(super) struct HookContext {
    pub hooks: Table,
    pub env: Table,
    pub run: Arc<RunState>,
    /// `busy-reply-threshold`: running this long without a stop counts as a timeout.
    pub timeout_ms: i64,
}

/// Puts the debugger's hook on `lua` (a line hook, and a count hook for the timeout and
/// for serving the worker's other clients).
pub(super) fn install_hook(lua: &Lua, context: HookContext) {
    let triggers = HookTriggers::new().every_line().every_nth_instruction(100_000);
    lua.set_hook(triggers, move |lua, debug| {
        let line = debug.curr_line() as i64;
        let counted = matches!(debug.event(), DebugEvent::Count);
        let in_script = debug.source().short_src.is_some_and(|s| s.contains("user_script"));
        line_hook(lua, &context, line, counted, in_script)
    });
}

fn line_hook(lua: &Lua, context: &HookContext, line: i64, counted: bool, in_script: bool) -> mlua::Result<VmState> {
    if !active() {
        return Ok(VmState::Continue);
    }
    if counted && super::serve_while_busy() {
        context.run.killed.store(true, Ordering::SeqCst);
    }
    if context.run.killed.load(Ordering::SeqCst) {
        return Err(lua_err("Script killed by user with SCRIPT KILL..."));
    }
    // Lines outside the script (the sandbox's Lua helpers) are not stops.
    if !in_script {
        return Ok(VmState::Continue);
    }
    let Some((breakpoint, step)) = with(|s| {
        s.current_line = line;
        (s.is_breakpoint(line) || s.lua_breakpoint, s.step)
    }) else {
        return Ok(VmState::Continue);
    };
    let mut timeout = false;
    if counted && !step && !breakpoint {
        let limit = if context.timeout_ms > 0 { context.timeout_ms } else { 5000 };
        let elapsed = with(|s| s.resumed.elapsed().as_millis() as i64).unwrap_or(0);
        if elapsed < limit {
            return Ok(VmState::Continue);
        }
        timeout = true;
    }
    if !(step || breakpoint || timeout) {
        return Ok(VmState::Continue);
    }
    with(|s| {
        let reason = if breakpoint {
            if s.lua_breakpoint {
                "redis.breakpoint() called"
            } else {
                "break point"
            }
        } else if timeout {
            "timeout reached, infinite loop?"
        } else {
            "step over"
        };
        s.step = false;
        s.lua_breakpoint = false;
        s.log(format!("* Stopped at {line}, stop reason = {reason}"));
        s.log_source_line(line);
    });
    send_logs();
    let client_left = !repl(lua, context)?;
    if client_left && timeout {
        // Nobody will ever step it on: stop a script that may never end.
        return Err(lua_err("timeout during Lua debugging with client closing connection"));
    }
    with(|s| s.resumed = Instant::now());
    Ok(VmState::Continue)
}

/// What parsing the input gave.
enum Parsed {
    Command(Vec<Vec<u8>>),
    More,
    Error,
}

/// Where `needle` starts in `text`, searching as C's strstr does (a NUL ends the text).
fn c_find(text: &[u8], needle: &[u8]) -> Option<usize> {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    text[..end].windows(needle.len()).position(|w| w == needle)
}

/// One debugger command from the input: a RESP array of bulk strings of at most 1,024
/// arguments of 1 to 1,024 bytes each (Redis's ldbReplParseCommand, as forgiving: text
/// before the `*` is skipped).
fn parse_command(input: &[u8]) -> Parsed {
    if input.is_empty() {
        return Parsed::More;
    }
    let Some(star) = c_find(input, b"*") else { return Parsed::Error };
    let mut p = star + 1;
    let Some(eol) = c_find(&input[p..], b"\r\n") else { return Parsed::More };
    let argc = atoi(&input[p..p + eol]);
    p += eol + 2;
    if !(1..=1024).contains(&argc) {
        return Parsed::Error;
    }
    let mut argv = Vec::with_capacity(argc as usize);
    while argv.len() < argc as usize {
        match input.get(p) {
            None | Some(0) => return Parsed::More,
            Some(b'$') => {}
            Some(_) => return Parsed::Error,
        }
        let Some(eol) = c_find(&input[p + 1..], b"\r\n") else { return Parsed::More };
        let len = atoi(&input[p + 1..p + 1 + eol]);
        p += 1 + eol + 2;
        if !(1..=1024).contains(&len) {
            return Parsed::Error;
        }
        let len = len as usize;
        if p + len + 2 > input.len() {
            return Parsed::More;
        }
        argv.push(input[p..p + len].to_vec());
        p += len;
        if &input[p..p + 2] != b"\r\n" {
            return Parsed::Error;
        }
        p += 2;
    }
    Parsed::Command(argv)
}

/// Reads and runs debugger commands until one resumes the script. False: the client is
/// gone (the script then runs on without stopping).
fn repl(lua: &Lua, context: &HookContext) -> mlua::Result<bool> {
    loop {
        let argv = loop {
            match with(|s| parse_command(&s.input)).unwrap_or(Parsed::More) {
                Parsed::Command(argv) => break argv,
                Parsed::Error => return Err(lua_err("protocol error")),
                Parsed::More => {}
            }
            let Some(bytes) = super::debug_receive() else {
                with(|s| {
                    s.step = false;
                    s.breakpoints.clear();
                });
                return Ok(false);
            };
            let overflow = with(|s| {
                s.input.extend_from_slice(&bytes);
                let over = s.input.len() > MAX_INPUT;
                if over {
                    s.input = Vec::new();
                }
                over
            });
            if overflow == Some(true) {
                return Err(lua_err("max client buffer reached"));
            }
        };
        with(|s| s.input.clear());
        // Compared as C strings, as Redis does (up to a NUL).
        let name = argv[0].split(|&b| b == 0).next().unwrap_or_default().to_ascii_lowercase();
        match &name[..] {
            b"h" | b"help" => {
                with(|s| {
                    for line in HELP {
                        s.log(*line);
                    }
                });
            }
            b"s" | b"step" | b"n" | b"next" => {
                with(|s| s.step = true);
                return Ok(true);
            }
            b"c" | b"continue" => return Ok(true),
            b"t" | b"trace" => trace(context)?,
            b"m" | b"maxlen" => with(|s| maxlen(s, &argv)).unwrap_or(()),
            b"b" | b"break" => with(|s| breakpoints(s, &argv)).unwrap_or(()),
            b"e" | b"eval" => eval(context, &argv)?,
            b"a" | b"abort" => return Err(lua_err("script aborted for user request")),
            b"r" | b"redis" if argv.len() > 1 => redis(lua, context, &argv)?,
            b"p" | b"print" => {
                if argv.len() == 2 {
                    print(context, &argv[1])?
                } else {
                    print_all(context)?
                }
            }
            b"l" | b"list" => with(|s| {
                let mut around = s.current_line;
                let mut lines = 5;
                if let Some(arg) = argv.get(1) {
                    let n = atoi(arg);
                    if n > 0 {
                        around = n;
                    }
                }
                if let Some(arg) = argv.get(2) {
                    lines = atoi(arg);
                }
                s.list(around, lines);
            })
            .unwrap_or(()),
            b"w" | b"whole" => with(|s| s.list(1, 1_000_000)).unwrap_or(()),
            _ => log(b"<error> Unknown Redis Lua debugger command or wrong number of arguments.".to_vec()),
        }
        send_logs();
    }
}

const HELP: &[&str] = &[
    "Redis Lua debugger help:",
    "[h]elp               Show this help.",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist               List source code around current line.",
    "[l]ist [line]        List source code around [line].",
    "                     line = 0 means: current position.",
    "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
    "                     to show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint              Show all the local variables.",
    "[p]rint <var>        Show the value of the specified variable.",
    "                     Can also show global vars KEYS and ARGV.",
    "[b]reak              Show all breakpoints.",
    "[b]reak <line>       Add a breakpoint to the specified line.",
    "[b]reak -<line>      Remove breakpoint from the specified line.",
    "[b]reak 0            Remove all breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[r]edis <cmd>        Execute a Redis command.",
    "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
    "                     Specifying zero as <len> means unlimited.",
    "[a]bort              Stop the execution of the script. In sync",
    "                     mode dataset changes will be retained.",
    "",
    "Debugger functions you can call from Lua scripts:",
    "redis.debug()        Produce logs in the debugger console.",
    "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
    "                     next line of code.",
];

fn maxlen(s: &mut Session, argv: &[Vec<u8>]) {
    if argv.len() == 2 {
        let mut len = atoi(&argv[1]);
        // The user knows about the command now.
        s.maxlen_hint_sent = true;
        if len != 0 && len <= 60 {
            len = 60;
        }
        s.maxlen = len as usize;
    }
    if s.maxlen != 0 {
        let entry = format!("<value> replies are truncated at {} bytes.", s.maxlen);
        s.log(entry);
    } else {
        s.log("<value> replies are unlimited.");
    }
}

fn breakpoints(s: &mut Session, argv: &[Vec<u8>]) {
    if argv.len() == 1 {
        if s.breakpoints.is_empty() {
            s.log("No breakpoints set. Use 'b <line>' to add one.");
        } else {
            s.log(format!("{} breakpoints set:", s.breakpoints.len()));
            for line in s.breakpoints.clone() {
                s.log_source_line(line);
            }
        }
        return;
    }
    for arg in &argv[1..] {
        let Some(line) = quince_resp::parse_i64_strict(arg) else {
            let mut entry = b"Invalid argument:'".to_vec();
            entry.extend_from_slice(arg);
            entry.push(b'\'');
            s.log(entry);
            continue;
        };
        if line == 0 {
            s.breakpoints.clear();
            s.log("All breakpoints removed.");
        } else if line > 0 {
            if s.breakpoints.len() == BREAKPOINTS_MAX {
                s.log("Too many breakpoints set.");
            } else if line <= s.lines.len() as i64 && !s.is_breakpoint(line) {
                s.breakpoints.push(line);
                s.list(line, 1);
            } else {
                s.log("Wrong line number.");
            }
        } else if let Some(at) = s.breakpoints.iter().position(|&b| b == -line) {
            s.breakpoints.remove(at);
            s.log("Breakpoint removed.");
        } else {
            s.log("No breakpoint in the specified line.");
        }
    }
}

/// `eval <code>`: runs the code (as an expression first) in the script's environment and
/// logs its value or error.
fn eval(context: &HookContext, argv: &[Vec<u8>]) -> mlua::Result<()> {
    let code = argv[1..].join(&b' ');
    let run: Function = context.hooks.raw_get("ldb_eval")?;
    let (ok, value): (bool, Value) = run.call(mlua::String::wrap(code))?;
    with(|s| {
        if ok {
            let mut entry = b"<retval> ".to_vec();
            cat_value(&mut entry, &value, 0);
            s.log_with_maxlen(entry);
        } else {
            let mut entry = b"<error> ".to_vec();
            cat_value_plain(&mut entry, &value);
            s.log(entry);
        }
    });
    Ok(())
}

/// `redis <command>`: runs it through redis.call, which logs the command and its reply.
fn redis(lua: &Lua, context: &HookContext, argv: &[Vec<u8>]) -> mlua::Result<()> {
    let redis: Table = context.env.get("redis")?;
    let call: Function = redis.get("call")?;
    let args = argv[1..].iter().map(|a| lua.create_string(a).map(Value::String)).collect::<mlua::Result<Vec<_>>>()?;
    with(|s| s.step = true);
    // Its error is logged already (as the reply).
    let _ = call.call::<Value>(Variadic::from_iter(args));
    with(|s| s.step = false);
    Ok(())
}

/// `print <var>`: the first local of that name from the current frame outwards, else the
/// global KEYS or ARGV.
fn print(context: &HookContext, name: &[u8]) -> mlua::Result<()> {
    let locals: Function = context.hooks.raw_get("ldb_locals")?;
    let mut level = 0;
    loop {
        let (names, values, n): (Option<Table>, Option<Table>, i64) = locals.call(level)?;
        let (Some(names), Some(values)) = (names, values) else { break };
        for i in 1..=n {
            let local: mlua::String = names.raw_get(i)?;
            if &local.as_bytes()[..] == name {
                let value: Value = values.raw_get(i)?;
                with(|s| {
                    let mut entry = b"<value> ".to_vec();
                    cat_value(&mut entry, &value, 0);
                    s.log_with_maxlen(entry);
                });
                return Ok(());
            }
        }
        level += 1;
    }
    if name == b"KEYS" || name == b"ARGV" {
        let value: Value = context.env.get(mlua::String::wrap(name))?;
        with(|s| {
            let mut entry = b"<value> ".to_vec();
            cat_value(&mut entry, &value, 0);
            s.log_with_maxlen(entry);
        });
    } else {
        log(b"No such variable.".to_vec());
    }
    Ok(())
}

/// `print`: every local of the current frame.
fn print_all(context: &HookContext) -> mlua::Result<()> {
    let locals: Function = context.hooks.raw_get("ldb_locals")?;
    let (names, values, n): (Option<Table>, Option<Table>, i64) = locals.call(0)?;
    let mut shown = 0;
    if let (Some(names), Some(values)) = (names, values) {
        for i in 1..=n {
            let local: mlua::String = names.raw_get(i)?;
            let local = local.as_bytes().to_vec();
            if c_find(&local, b"(*temporary)").is_some() {
                continue;
            }
            let value: Value = values.raw_get(i)?;
            with(|s| {
                let mut entry = b"<value> ".to_vec();
                entry.extend_from_slice(&local);
                entry.extend_from_slice(b" = ");
                cat_value(&mut entry, &value, 0);
                s.log_with_maxlen(entry);
            });
            shown += 1;
        }
    }
    if shown == 0 {
        log(b"No local variables in the current context.".to_vec());
    }
    Ok(())
}

/// `trace`: the script's frames from the current one outwards.
fn trace(context: &HookContext) -> mlua::Result<()> {
    let frames: Function = context.hooks.raw_get("ldb_frames")?;
    let frames: Table = frames.call(())?;
    let count = frames.raw_len();
    for level in 1..=count {
        let frame: Table = frames.raw_get(level)?;
        let source: mlua::String = frame.raw_get(1)?;
        if c_find(&source.as_bytes(), b"user_script").is_none() {
            continue;
        }
        let name: Value = frame.raw_get(2)?;
        let line: i64 = frame.raw_get(3)?;
        let name = match name {
            Value::String(n) => n.to_string_lossy(),
            _ => "top level".to_string(),
        };
        with(|s| {
            s.log(format!("{} {name}:", if level == 1 { "In" } else { "From" }));
            s.log_source_line(line);
        });
    }
    if count == 0 {
        log(b"<error> Can't retrieve Lua stack.".to_vec());
    }
    Ok(())
}

/// redis.debug(...): logs its arguments (`<debug> line N: a, b`). Nothing outside a session.
pub(super) fn debug_call(values: &[Value]) {
    with(|s| {
        let mut entry = format!("<debug> line {}: ", s.current_line).into_bytes();
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                entry.extend_from_slice(b", ");
            }
            cat_value(&mut entry, value, 0);
        }
        s.log(entry);
    });
}

/// redis.breakpoint(): stop at the next line. False outside a session.
pub(super) fn breakpoint_call() -> bool {
    with(|s| s.lua_breakpoint = true).is_some()
}

/// Logs a command the script runs (`<redis> SET k v`), while stepping.
pub(super) fn log_command(args: &[&[u8]]) {
    with(|s| {
        let mut entry = b"<redis>".to_vec();
        for (j, arg) in args.iter().enumerate() {
            if j == 10 {
                entry.extend_from_slice(format!(" ... ({} more)", args.len() - j - 1).as_bytes());
                break;
            }
            entry.push(b' ');
            entry.extend_from_slice(arg);
        }
        s.log(entry);
    });
}

/// Logs a command's reply (RESP) in a readable form; an error reply also as an error.
pub(super) fn log_reply(reply: &[u8]) {
    with(|s| {
        if let Some(line) = reply.strip_prefix(b"-") {
            let end = line.iter().position(|&b| b == b'\r').unwrap_or(line.len());
            let mut entry = b"<error> -".to_vec();
            entry.extend_from_slice(&line[..end]);
            s.log(entry);
        }
        let mut entry = b"<reply> ".to_vec();
        let mut pos = 0;
        reply_to_human(&mut entry, reply, &mut pos);
        s.log_with_maxlen(entry);
    });
}

/// Logs a command refused before it ran (`error` as redis.call raises it).
pub(super) fn log_error(error: &str) {
    let text = error.strip_prefix('-').unwrap_or(error);
    let text = text.strip_prefix("ERR ").unwrap_or(text);
    log(format!("<error> {text}").into_bytes());
}

/// A Lua value as the debugger shows it (Redis's ldbCatStackValue).
fn cat_value(out: &mut Vec<u8>, value: &Value, level: usize) {
    if level == MAX_VALUES_DEPTH {
        out.extend_from_slice(b"<max recursion level reached! Nested table?>");
        return;
    }
    match value {
        Value::String(s) => out.extend_from_slice(quote_repr(&s.as_bytes()).as_bytes()),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => out.extend_from_slice(fmt_g(*i as f64, 6).as_bytes()),
        Value::Number(n) => out.extend_from_slice(fmt_g(*n, 6).as_bytes()),
        Value::Nil => out.extend_from_slice(b"nil"),
        Value::Table(t) => {
            // Shown as an array while the keys are 1, 2, 3..., else as key=value pairs.
            let (mut as_array, mut as_map) = (Vec::new(), Vec::new());
            let mut is_array = true;
            let mut expected = 1.0;
            for pair in t.pairs::<Value, Value>() {
                let Ok((k, v)) = pair else { break };
                let index = match k {
                    Value::Integer(i) => Some(i as f64),
                    Value::Number(n) => Some(n),
                    _ => None,
                };
                if is_array && index != Some(expected) {
                    is_array = false;
                }
                cat_value(&mut as_array, &v, level + 1);
                as_array.extend_from_slice(b"; ");
                as_map.push(b'[');
                cat_value(&mut as_map, &k, level + 1);
                as_map.extend_from_slice(b"]=");
                cat_value(&mut as_map, &v, level + 1);
                as_map.extend_from_slice(b"; ");
                expected += 1.0;
            }
            let shown = if is_array { &mut as_array } else { &mut as_map };
            shown.truncate(shown.len().saturating_sub(2));
            out.push(b'{');
            out.extend_from_slice(shown);
            out.push(b'}');
        }
        other => {
            let kind = match other {
                Value::Function(_) => "function",
                Value::Thread(_) => "thread",
                Value::LightUserData(_) => "light-userdata",
                _ => "userdata",
            };
            out.extend_from_slice(format!("\"{kind}@{:p}\"", other.to_pointer()).as_bytes());
        }
    }
}

/// An error value as Lua's tostring shows it (a compile or run error's message).
fn cat_value_plain(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(s) => out.extend_from_slice(&s.as_bytes()),
        other => cat_value(out, other, 0),
    }
}

/// A RESP reply in the debugger's readable form (Redis's ldbRedisProtocolToHuman).
fn reply_to_human(out: &mut Vec<u8>, reply: &[u8], pos: &mut usize) {
    let Some(&kind) = reply.get(*pos) else { return };
    let line_end = |from: usize| reply[from..].iter().position(|&b| b == b'\r').map_or(reply.len(), |i| from + i);
    let end = line_end(*pos + 1);
    let header = &reply[*pos + 1..end];
    let next = (end + 2).min(reply.len());
    let count = || atoi(header);
    match kind {
        b':' | b'(' => {
            out.extend_from_slice(header);
            *pos = next;
        }
        b'$' | b'=' => {
            let len = count();
            if len < 0 {
                out.extend_from_slice(b"NULL");
                *pos = next;
            } else {
                let stop = (next + len as usize).min(reply.len());
                out.extend_from_slice(quote_repr(&reply[next..stop]).as_bytes());
                *pos = (stop + 2).min(reply.len());
            }
        }
        b'+' | b'-' => {
            out.extend_from_slice(quote_repr(&reply[*pos..end]).as_bytes());
            *pos = next;
        }
        b'*' => {
            let n = count();
            *pos = next;
            if n < 0 {
                out.extend_from_slice(b"NULL");
                return;
            }
            elements_to_human(out, reply, pos, n, b"[", b"]");
        }
        b'~' => {
            let n = count();
            *pos = next;
            elements_to_human(out, reply, pos, n, b"~(", b")");
        }
        b'%' => {
            let n = count();
            *pos = next;
            out.push(b'{');
            for j in 0..n {
                reply_to_human(out, reply, pos);
                out.extend_from_slice(b" => ");
                reply_to_human(out, reply, pos);
                if j != n - 1 {
                    out.push(b',');
                }
            }
            out.push(b'}');
        }
        b'_' => {
            out.extend_from_slice(b"(null)");
            *pos = next;
        }
        b'#' => {
            out.extend_from_slice(if header.first() == Some(&b't') { b"#true" } else { b"#false" });
            *pos = next;
        }
        b',' => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(header);
            *pos = next;
        }
        _ => *pos = reply.len(),
    }
}

/// An array's or a set's `n` elements, comma-separated between `open` and `close`.
fn elements_to_human(out: &mut Vec<u8>, reply: &[u8], pos: &mut usize, n: i64, open: &[u8], close: &[u8]) {
    out.extend_from_slice(open);
    for j in 0..n {
        reply_to_human(out, reply, pos);
        if j != n - 1 {
            out.push(b',');
        }
    }
    out.extend_from_slice(close);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(input: &[u8]) -> Option<Vec<Vec<u8>>> {
        match parse_command(input) {
            Parsed::Command(argv) => Some(argv),
            _ => None,
        }
    }

    #[test]
    fn parses_commands_as_redis() {
        assert_eq!(command(b"*2\r\n$1\r\np\r\n$1\r\na\r\n"), Some(vec![b"p".to_vec(), b"a".to_vec()]));
        assert!(matches!(parse_command(b"*2\r\n$1\r\np\r\n"), Parsed::More));
        assert!(matches!(parse_command(b"*2\r\n$1\r\np\r"), Parsed::More));
        assert!(matches!(parse_command(b"hello"), Parsed::Error));
        assert!(matches!(parse_command(b"*0\r\n"), Parsed::Error));
        assert!(matches!(parse_command(b"*1\r\n$0\r\n\r\n"), Parsed::Error));
        assert!(matches!(parse_command(b"*1\r\n$2000\r\n"), Parsed::Error));
        // A NUL inside an argument is part of it.
        assert_eq!(command(b"*1\r\n$3\r\na\0b\r\n"), Some(vec![b"a\0b".to_vec()]));
    }

    #[test]
    fn replies_read_as_redis_shows_them() {
        let human = |reply: &[u8]| {
            let mut out = Vec::new();
            reply_to_human(&mut out, reply, &mut 0);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(human(b"+OK\r\n"), "\"+OK\"");
        assert_eq!(human(b"$3\r\nbar\r\n"), "\"bar\"");
        assert_eq!(human(b"$-1\r\n"), "NULL");
        assert_eq!(human(b"*2\r\n:1\r\n$1\r\na\r\n"), "[1,\"a\"]");
        assert_eq!(human(b"%1\r\n$1\r\nk\r\n#t\r\n"), "{\"k\" => #true}");
        assert_eq!(human(b",1.5\r\n"), "(double) 1.5");
        assert_eq!(human(b"-ERR x\r\n"), "\"-ERR x\"");
    }
}
