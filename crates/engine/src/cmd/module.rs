//! MODULE: quince answers as a Redis with no modules loaded. It cannot load Redis modules
//! (shared libraries written against Redis's C module API), so LOAD and LOADEX fail as a
//! module that does not load fails in Redis, with the reason in the log.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::reply::ReplySink;

/// Redis's check of `enable-module-command` for LOAD, LOADEX and UNLOAD (protected
/// subcommands).
fn allowed(ctx: &Ctx<'_>) -> Result<(), CmdError> {
    if ctx.engine.config.read().protected_action_allowed("enable-module-command", super::debug::local_client(ctx)) {
        return Ok(());
    }
    Err(CmdError::msg(
        "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it \
         from a local connection, otherwise you need to set this option in the configuration file, and then \
         restart the server.",
    ))
}

/// MODULE LIST — O(N) in the modules loaded: none.
fn module_list(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    out.array(0);
    Ok(())
}

/// MODULE LOAD path [arg ...] / MODULE LOADEX path [CONFIG name value ...] [ARGS arg ...].
fn module_load(ctx: &mut Ctx<'_>, args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    allowed(ctx)?;
    if let Some(persistence) = ctx.engine.persistence() {
        persistence.log_warning(&format!(
            "Module {} failed to load: quince-server does not load Redis modules",
            String::from_utf8_lossy(args[2])
        ));
    }
    Err(CmdError::msg("ERR Error loading the extension. Please check the server logs."))
}

/// MODULE UNLOAD name — O(1): there is no module of any name.
fn module_unload(ctx: &mut Ctx<'_>, _args: &[&[u8]], _out: &mut dyn ReplySink) -> CmdResult {
    allowed(ctx)?;
    Err(CmdError::msg("ERR Error unloading module: no such module with that name"))
}

fn module_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "MODULE",
        &[
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
        ],
    )
}

/// MODULE, declared as Redis 7.0.15's src/commands/module*.json.
pub fn register() -> Vec<CommandSpec> {
    vec![CommandSpec::container(
        "module",
        "",
        "",
        vec![
            CommandSpec::new("help", 2, "loading stale", "", module_help).doc(
                "server",
                "5.0.0",
                "Show helpful text about the different subcommands",
                "O(1)",
            ),
            CommandSpec::new("list", 2, "admin noscript", "", module_list)
                .doc(
                    "server",
                    "4.0.0",
                    "List all modules loaded by the server",
                    "O(N) where N is the number of loaded modules.",
                )
                .tips(&["nondeterministic_output_order"]),
            CommandSpec::new("loadex", -3, "no_async_loading admin noscript", "", module_load)
                .doc("server", "7.0.0", "Load a module with extended parameters", "O(1)")
                .args(vec![
                    ArgDoc::new("path", ArgType::String),
                    ArgDoc::block(
                        "configs",
                        vec![ArgDoc::new("name", ArgType::String), ArgDoc::new("value", ArgType::String)],
                    )
                    .after("CONFIG")
                    .multiple()
                    .multiple_token()
                    .optional(),
                    ArgDoc::block("args", vec![ArgDoc::new("arg", ArgType::String)])
                        .after("ARGS")
                        .multiple()
                        .optional(),
                ]),
            CommandSpec::new("unload", 3, "no_async_loading admin noscript", "", module_unload)
                .doc("server", "4.0.0", "Unload a module", "O(1)")
                .args(vec![ArgDoc::new("name", ArgType::String)]),
            CommandSpec::new("load", -3, "no_async_loading admin noscript", "", module_load)
                .doc("server", "4.0.0", "Load a module", "O(1)")
                .args(vec![
                    ArgDoc::new("path", ArgType::String),
                    ArgDoc::new("arg", ArgType::String).optional().multiple(),
                ]),
        ],
    )
    .doc("server", "4.0.0", "A container for module commands", "Depends on subcommand.")]
}
