//! Command errors. Handlers return a small enum; the exact Redis text lives here, in one place.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CmdError {
    Syntax,
    NotInteger,
    WrongType,
    /// `invalid expire time in '<command>' command`.
    InvalidExpireTime,
    DbIndexOutOfRange,
    /// `unknown subcommand '<sub>'. Try <COMMAND> HELP.`
    UnknownSubcommand(Vec<u8>),
    /// Any other error, already formatted with its code (e.g. `ERR ...`, `NOPROTO ...`).
    Message(String),
}

impl CmdError {
    pub fn msg(text: impl Into<String>) -> Self {
        Self::Message(text.into())
    }

    /// The error line (without `-` and CRLF) for a command whose full name is `command`.
    pub fn render(&self, command: &str) -> String {
        match self {
            CmdError::Syntax => "ERR syntax error".into(),
            CmdError::NotInteger => "ERR value is not an integer or out of range".into(),
            CmdError::WrongType => "WRONGTYPE Operation against a key holding the wrong kind of value".into(),
            CmdError::InvalidExpireTime => format!("ERR invalid expire time in '{command}' command"),
            CmdError::DbIndexOutOfRange => "ERR DB index is out of range".into(),
            CmdError::UnknownSubcommand(sub) => {
                let base = command.split('|').next().unwrap_or(command).to_ascii_uppercase();
                format!("ERR unknown subcommand '{}'. Try {} HELP.", truncate_c(sub, 128), base)
            }
            CmdError::Message(m) => m.clone(),
        }
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render("?"))
    }
}

impl std::error::Error for CmdError {}

/// `%.Ns` of a user argument: at most `max` bytes, stopping at a NUL as C does.
pub fn truncate_c(arg: &[u8], max: usize) -> String {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len()).min(max);
    String::from_utf8_lossy(&arg[..end]).into_owned()
}

pub type CmdResult = Result<(), CmdError>;

/// Redis's addReplySubcommandSyntaxError: the subcommand as given, the command uppercased.
pub(crate) fn subcommand_syntax(args: &[&[u8]]) -> CmdError {
    CmdError::msg(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        truncate_c(args[1], 128),
        String::from_utf8_lossy(args[0]).to_uppercase()
    ))
}
