//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, over one Lua 5.1 VM
//! (mlua) shared by all clients, as Redis 7.0 does.
//!
//! A script runs with the engine's transaction gate held exclusively (see `Engine::execute`
//! and docs/threading.md), so it is atomic across shards and may touch any key. Each
//! `redis.call` goes through the executor's normal path (`Engine::execute_in_script`), as
//! the calling client, which locks the shards of that one command. The script's replies
//! are encoded in the script's protocol (RESP2 unless `redis.setresp(3)`) and parsed back
//! into Lua values the way Redis's script_lua.c converts them.
//!
//! The sandbox follows Redis 7.0 with its 2025 Lua fixes (tests/lua_sandbox.rs compares it
//! with redis-server): the global table, the library tables and the string metatable are
//! read-only (writes, rawset, setmetatable and table.insert on them are "Attempt to modify a
//! readonly table"; reading a missing global is an error); getfenv, setfenv, newproxy, os,
//! io, loadfile, dofile, print and debug are absent; load and loadstring take text only;
//! unpack is bounded. `math.random` is Redis's rand48 generator. The `bit`, `cjson`,
//! `cmsgpack` and `struct` libraries are implemented in Rust.

use hashbrown::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, Variadic};
use parking_lot::{Mutex, RwLock};
use quince_resp::{Encoder, Protocol};
use smallvec::SmallVec;

use crate::command::{ArgDoc, ArgType, CommandSpec, Resolved};
use crate::error::{CmdError, CmdResult};
use crate::exec::{Client, Ctx, LockedShards, ShardAccess};
use crate::reply::ReplySink;
use crate::Engine;

use super::{is, parse_i64};

mod bit;
mod cjson;
mod cmsgpack;
mod ldb;
mod luaapi;
mod structlib;
use bit::bit_library;
use cjson::cjson_library;
use cmsgpack::cmsgpack_library;
use structlib::struct_library;

/// Script flags from a `#!lua flags=...` shebang.
pub(crate) mod flag {
    pub const NO_WRITES: u32 = 1;
    pub const ALLOW_OOM: u32 = 2;
    pub const ALLOW_STALE: u32 = 4;
    pub const NO_CLUSTER: u32 = 8;
    /// No shebang: the script runs with EVAL's pre-7.0 semantics.
    pub const EVAL_COMPAT: u32 = 16;
    pub const ALLOW_CROSS_SLOT: u32 = 32;
}

const FLAG_NAMES: &[(&str, u32)] = &[
    ("no-writes", flag::NO_WRITES),
    ("allow-oom", flag::ALLOW_OOM),
    ("allow-stale", flag::ALLOW_STALE),
    ("no-cluster", flag::NO_CLUSTER),
    ("allow-cross-slot-keys", flag::ALLOW_CROSS_SLOT),
];

/// What other threads see of the script a VM runs (BUSY replies, SCRIPT KILL).
#[derive(Debug, Default)]
pub struct RunState {
    running: AtomicBool,
    /// Seen by its count hook running past `busy-reply-threshold` (counted in
    /// `Scripting::busy_scripts` until it ends).
    busy: AtomicBool,
    /// The script reached beyond its declared keys' shards before writing, running
    /// alongside others: it stops (like a killed script) to run again alone.
    escalated: AtomicBool,
    killed: AtomicBool,
    wrote: AtomicBool,
    start_ms: AtomicI64,
    threshold_ms: AtomicI64,
    /// The running script is an EVAL (not a function).
    eval_mode: AtomicBool,
    /// Name (sha or function) and command of the running script (valid while `running`).
    current: Mutex<(String, Vec<Vec<u8>>)>,
}

/// A host's warning log line writer (the server's log); none: lines are dropped.
type WarningLog = Arc<std::sync::OnceLock<Box<dyn Fn(&str) + Send + Sync>>>;

/// The scripting state the engine owns.
///
/// Scripts run in Lua VMs taken from pools, one VM per running script, so scripts on
/// different workers run at once. EVAL scripts are cached by SHA here and compiled by each
/// VM on its first use; function libraries load into a VM when it is made (after any
/// library change, older VMs are dropped instead of reused).
#[derive(Default)]
pub struct Scripting {
    /// Idle EVAL VMs.
    eval_vms: VmPool,
    /// The EVAL script cache by SHA (SCRIPT LOAD, EVAL), which every VM compiles from.
    eval_scripts: RwLock<ShaMap<Arc<ScriptSource>>>,
    /// Bumped by SCRIPT FLUSH: VMs made before are dropped instead of reused.
    eval_generation: AtomicU64,
    /// The VM function libraries are checked and registered in (FUNCTION LOAD, RESTORE).
    fvm: Mutex<Option<Vm>>,
    /// Idle VMs FCALL runs functions in, each with every library loaded.
    function_vms: VmPool,
    /// Bumped by every change of the libraries.
    libraries_generation: AtomicU64,
    libraries: Mutex<Libraries>,
    /// Every VM's run state (BUSY replies, SCRIPT KILL, FUNCTION STATS).
    runs: Arc<Mutex<Vec<Arc<RunState>>>>,
    /// Running scripts past `busy-reply-threshold`: other clients get BUSY meanwhile.
    busy_scripts: Arc<AtomicUsize>,
    /// Synchronous Lua debugger sessions running (`SCRIPT DEBUG SYNC`).
    debug_sessions: AtomicUsize,
    /// Where "Slow script detected" goes (the server's log, set by the host).
    warning_log: WarningLog,
    /// math.random's generator, shared by every VM (Redis's is global).
    rand: Arc<Mutex<Rand48>>,
    /// Commands run on one thread only (a server with one worker): scripts always run
    /// alone, which costs less than holding shards when nothing could run alongside.
    one_thread: AtomicBool,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call `noscript` commands.
    pub(crate) disable_deny: AtomicBool,
    /// Scripts in the EVAL cache (INFO's number_of_cached_scripts; a script calling INFO
    /// holds the VM, so INFO can't count them there).
    cached_scripts: std::sync::atomic::AtomicUsize,
    /// INFO memory, kept as the VMs change for the same reason: the bytes of the EVAL
    /// VM, of the functions' VM, and of the cached scripts' bodies.
    eval_vm_bytes: Arc<std::sync::atomic::AtomicUsize>,
    functions_vm_bytes: Arc<std::sync::atomic::AtomicUsize>,
    eval_bodies_bytes: std::sync::atomic::AtomicUsize,
}

/// INFO memory's view of scripting (Redis 7.0's fields).
pub struct ScriptingMemory {
    pub cached_scripts: usize,
    pub functions: usize,
    pub libraries: usize,
    /// Bytes the Lua VMs use: EVAL's, and the functions'.
    pub vm_eval: usize,
    pub vm_functions: usize,
    /// Bytes of the cached scripts' bodies, and of the libraries' code.
    pub scripts_eval: usize,
    pub functions_code: usize,
}

/// Hashes a script's SHA (hex, uniformly spread already) from its first 16 characters:
/// EVALSHA's lookups cost no SipHash.
#[derive(Default)]
struct ShaHasher(u64);

impl std::hash::Hasher for ShaHasher {
    fn write(&mut self, bytes: &[u8]) {
        // A String hashes its bytes, then a 0xff terminator (one byte: ignored).
        if bytes.len() > 1 {
            let mut head = [0u8; 16];
            let n = bytes.len().min(16);
            head[..n].copy_from_slice(&bytes[..n]);
            let (a, b) = head.split_at(8);
            let a = u64::from_le_bytes(a.try_into().unwrap_or_default());
            let b = u64::from_le_bytes(b.try_into().unwrap_or_default());
            self.0 = (self.0 ^ a ^ b.rotate_left(29) ^ bytes.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

type ShaMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<ShaHasher>>;

/// Idle VMs of one kind. Each thread keeps the VM it used last (`LOCAL_VMS`), so a
/// worker's scripts run in a VM whose memory is already in its core's cache, without
/// touching the shared list; the list holds the others (a thread running a script inside
/// another engine's script, VMs given back while the thread's slot was taken).
struct VmPool {
    /// Tells this pool's VMs apart in the threads' slots (unique in the process).
    id: u64,
    /// Bumped by `clear`: VMs made before are dropped when next taken, and no longer count
    /// in INFO's memory (those in other threads' slots can't be dropped at once).
    epoch: Arc<AtomicU64>,
    /// Boxed: a script run takes and gives back a pointer, not the VM.
    #[allow(clippy::vec_box)]
    idle: Mutex<Vec<Box<Vm>>>,
}

impl Default for VmPool {
    fn default() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        VmPool { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), epoch: Arc::default(), idle: Mutex::new(Vec::new()) }
    }
}

/// How many VMs a thread keeps (of different pools: engines, kinds).
const LOCAL_VMS_KEPT: usize = 4;

thread_local! {
    /// The VM each pool's last script on this thread ran in, by pool id.
    static LOCAL_VMS: std::cell::RefCell<Vec<(u64, Box<Vm>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl VmPool {
    /// The epoch a VM made now belongs to (`Vm::new`).
    fn birth(&self) -> (Arc<AtomicU64>, u64) {
        (Arc::clone(&self.epoch), self.epoch.load(Ordering::SeqCst))
    }

    fn take(&self) -> Option<Box<Vm>> {
        let local = LOCAL_VMS.with(|slots| {
            let mut slots = slots.borrow_mut();
            let at = slots.iter().position(|(id, _)| *id == self.id)?;
            Some(slots.swap_remove(at).1)
        });
        let vm = local.or_else(|| self.idle.lock().pop())?;
        // One from before a flush: the caller makes a new one.
        vm.counted().then_some(vm)
    }

    fn give_back(&self, vm: Box<Vm>) {
        let vm = LOCAL_VMS.with(|slots| {
            let Ok(mut slots) = slots.try_borrow_mut() else { return Some(vm) };
            if slots.iter().any(|(id, _)| *id == self.id) {
                return Some(vm);
            }
            if slots.len() == LOCAL_VMS_KEPT {
                // The oldest goes (an engine dropped long ago, most likely).
                slots.remove(0);
            }
            slots.push((self.id, vm));
            None
        });
        if let Some(vm) = vm {
            self.idle.lock().push(vm);
        }
    }

    /// Drops the idle VMs (this thread's too; other threads drop theirs when they next
    /// take one and find it stale).
    fn clear(&self, gauge: &std::sync::atomic::AtomicUsize) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        gauge.store(0, Ordering::SeqCst);
        let idle = std::mem::take(&mut *self.idle.lock());
        drop(idle);
        let mine = LOCAL_VMS.with(|slots| {
            let mut slots = slots.try_borrow_mut().ok()?;
            let at = slots.iter().position(|(id, _)| *id == self.id)?;
            Some(slots.swap_remove(at))
        });
        drop(mine);
    }
}

/// A cached EVAL script.
struct ScriptSource {
    body: Vec<u8>,
    flags: u32,
    conduct: Arc<Conduct>,
}

/// One Lua state and every handle to it. mlua is built without its `send` feature: with
/// it, each Lua API call takes a reentrant mutex and every handle clone is an atomic
/// count, which was a fifth of the server's CPU time per EVALSHA (perf, P=16).
struct Vm {
    lua: Lua,
    /// The `eval_generation` or `libraries_generation` it was made in.
    generation: u64,
    /// The libraries loaded in a function VM, with its callbacks.
    libs: Libraries,
    /// Running scripts past the threshold (`Scripting::busy_scripts`).
    busy_scripts: Arc<AtomicUsize>,
    /// `Scripting::warning_log`.
    warning_log: WarningLog,
    /// Where the engine lists this VM's run state (removed when the VM is dropped).
    registry: Arc<Mutex<Vec<Arc<RunState>>>>,
    /// What this VM last told its memory gauge.
    noted_memory: std::cell::Cell<usize>,
    /// Its pool's epoch, and the one it was made in: it counts in INFO's memory while they
    /// are the same (`VmPool::clear`).
    pool_epoch: (Arc<AtomicU64>, u64),
    /// Hidden table the prelude reads the per-run callbacks from (`call`, `setresp`).
    hooks: Table,
    /// Runs a function under the error handler: returns ok, result.
    runner: Function,
    /// Classifies a table of a script's reply (`lua_to_reply`).
    classify: Function,
    /// The read-only environment scripts see as their globals.
    env: Table,
    scripts: ShaMap<Script>,
    /// The scripts' compiled functions by slot (see `Vm::create`).
    compiled: Table,
    run: Arc<RunState>,
    clock: Arc<dyn crate::Clock>,
    /// redis.call's reply and number buffers, kept from script to script.
    call_buffers: (Vec<u8>, Vec<Vec<u8>>),
    /// Where INFO reads the memory of the VMs of this VM's kind (`note_memory` keeps this
    /// VM's share current).
    memory_gauge: Arc<std::sync::atomic::AtomicUsize>,
}

#[derive(Clone)]
struct Script {
    flags: u32,
    /// Where `Vm::compiled` keeps its function.
    slot: i64,
    /// The cached script's conduct (shared by every VM).
    conduct: Arc<Conduct>,
}

impl RunState {
    /// Records the running script's name and command, in buffers kept from run to run.
    fn set_current(&self, name: &str, command: &[&[u8]]) {
        let mut current = self.current.lock();
        let (current_name, current_command) = &mut *current;
        current_name.clear();
        current_name.push_str(name);
        current_command.resize_with(command.len(), Vec::new);
        for (buffer, arg) in current_command.iter_mut().zip(command) {
            buffer.clear();
            buffer.extend_from_slice(arg);
        }
    }

    fn busy_at(&self, now_ms: i64) -> bool {
        self.running.load(Ordering::Acquire) && {
            let threshold = self.threshold_ms.load(Ordering::Relaxed);
            threshold > 0 && now_ms - self.start_ms.load(Ordering::Relaxed) >= threshold
        }
    }
}

impl Scripting {
    /// Where warnings about running scripts ("Slow script detected") go; set once by the
    /// host (later calls change nothing).
    pub fn set_warning_log(&self, log: Box<dyn Fn(&str) + Send + Sync>) {
        let _ = self.warning_log.set(log);
    }

    /// Tells whether commands run on one thread only (a server with one worker thread).
    pub fn set_one_thread(&self, one: bool) {
        self.one_thread.store(one, Ordering::Relaxed);
    }

    /// Whether a script has run longer than `busy-reply-threshold` (other clients get BUSY):
    /// its count hook noticed, as Redis's does, every 100,000 instructions. One atomic read.
    pub fn busy(&self, _clock: &dyn crate::Clock) -> bool {
        self.busy_scripts.load(Ordering::SeqCst) > 0
    }

    /// Before a command on another thread gets BUSY from a debugger session: waits up to
    /// 100 ms for the session to end. Redis serves no one during a synchronous session, so
    /// a client that connects just as the debugging client leaves is served once the
    /// session ends (unit/scripting's "lua stack overflow" test reconnects at once); here
    /// the session ends when its worker reads the close, which may come a moment later.
    pub(crate) fn wait_for_debug_session(&self) {
        // (Not on the session's own thread: it serves its other clients from inside.)
        if self.debug_sessions.load(Ordering::SeqCst) == 0 || INVOCATION.with(|c| c.get()).is_some() || ldb::active() {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(100);
        while self.debug_sessions.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The busy script SCRIPT KILL, FUNCTION KILL and FUNCTION STATS act on (the one that
    /// has run longest when several are).
    fn busy_run(&self) -> Option<Arc<RunState>> {
        if self.busy_scripts.load(Ordering::SeqCst) == 0 {
            return None;
        }
        self.runs
            .lock()
            .iter()
            .filter(|r| r.running.load(Ordering::SeqCst) && r.busy.load(Ordering::SeqCst))
            .min_by_key(|r| r.start_ms.load(Ordering::SeqCst))
            .cloned()
    }
}

/// What the host thread that runs scripts offers them while they run (see
/// `with_script_service`).
pub trait ScriptService {
    /// Serves the thread's other work while a script is busy: a server's worker serves its
    /// other connections, as Redis's processEventsWhileBlocked does, so they get BUSY and
    /// SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE reach the script. Returns true when
    /// the script must stop as SCRIPT KILL would (the server is shutting down).
    fn serve(&mut self) -> bool;
    /// The running command's client has a connection the Lua debugger can talk over
    /// (SCRIPT DEBUG SYNC).
    fn debug_link(&self) -> bool {
        false
    }
    /// Writes debugger output straight to that client; false if it could not.
    fn debug_send(&mut self, _bytes: &[u8]) -> bool {
        false
    }
    /// Waits for more input from that client; None once it is gone.
    fn debug_receive(&mut self) -> Option<Vec<u8>> {
        None
    }
}

thread_local! {
    /// What this thread offers the scripts it runs (see `with_script_service`).
    static SERVICE: std::cell::Cell<Option<std::ptr::NonNull<dyn ScriptService>>> =
        const { std::cell::Cell::new(None) };
}

/// Runs `f` (which may run a script) with `service` as what this thread offers the script:
/// its count hook calls `serve` every 100,000 Lua instructions once past
/// `busy-reply-threshold`, and the Lua debugger talks to its client through it.
pub fn with_script_service<R>(service: &mut dyn ScriptService, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<std::ptr::NonNull<dyn ScriptService>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SERVICE.with(|c| c.set(self.0));
        }
    }
    let ptr: std::ptr::NonNull<dyn ScriptService + '_> = std::ptr::NonNull::from(service);
    // SAFETY: only the lifetime is erased; the pointer leaves the thread-local (Restore, on
    // return or unwind) before the borrow of `service` ends.
    let ptr: std::ptr::NonNull<dyn ScriptService + 'static> = unsafe { std::mem::transmute(ptr) };
    let _restore = Restore(SERVICE.with(|c| c.replace(Some(ptr))));
    f()
}

/// `with_script_service` for a host that only serves other work while a script is busy.
pub fn with_busy_service<R>(serve: &mut dyn FnMut() -> bool, f: impl FnOnce() -> R) -> R {
    struct Serve<'a>(&'a mut dyn FnMut() -> bool);
    impl ScriptService for Serve<'_> {
        fn serve(&mut self) -> bool {
            (self.0)()
        }
    }
    with_script_service(&mut Serve(serve), f)
}

/// Uses this thread's script service, if any. Taken out of the thread-local meanwhile, so
/// it never re-enters itself (what it serves finds none).
fn using_service<R>(f: impl FnOnce(&mut dyn ScriptService) -> R) -> Option<R> {
    let mut service = SERVICE.with(|c| c.take())?;
    // SAFETY: set by `with_script_service`, whose frame is below this one on the stack.
    let result = f(unsafe { service.as_mut() });
    SERVICE.with(|c| c.set(Some(service)));
    Some(result)
}

/// Called by a busy script's hook: runs this thread's busy service, if any.
fn serve_while_busy() -> bool {
    using_service(|s| s.serve()).unwrap_or(false)
}

fn debug_link() -> bool {
    using_service(|s| s.debug_link()).unwrap_or(false)
}

fn debug_send(bytes: &[u8]) -> bool {
    using_service(|s| s.debug_send(bytes)).unwrap_or(false)
}

fn debug_receive() -> Option<Vec<u8>> {
    using_service(|s| s.debug_receive()).flatten()
}

/// The BUSY error other clients get while a script runs too long.
pub const BUSY_EVAL: &str = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// The same while a function runs.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

impl Scripting {
    /// The BUSY error for the busy script.
    pub fn busy_error(&self) -> &'static str {
        match self.busy_run() {
            Some(run) if !run.eval_mode.load(Ordering::SeqCst) => BUSY_FUNCTION,
            _ => BUSY_EVAL,
        }
    }
}

/// The loaded function libraries.
#[derive(Default)]
struct Libraries {
    libs: std::collections::BTreeMap<String, Library>,
    functions: HashMap<String, FunctionInfo>,
}

struct Library {
    code: Vec<u8>,
    functions: Vec<String>,
}

struct FunctionInfo {
    /// The name as registered (lookups are case-insensitive, keyed by the lowercase name).
    display: String,
    library: String,
    flags: u32,
    description: Option<String>,
    /// The function in a VM's own libraries; `None` in the registered ones (`function_vm`
    /// takes them out: no Lua handle may outlive its VM's lock, see `Vm`'s `Send`).
    callback: Option<VmFunction>,
    /// How it behaved so far (shared by the registered entry and every VM's copy:
    /// `sync_libraries` links them).
    conduct: Arc<Conduct>,
}

/// A library function's handle in the VM that loaded it.
struct VmFunction(Function);

// SAFETY: as for `Vm`: a `VmFunction` is either in a VM's own libraries (it moves with its
// VM) or, between `function_vm`'s two lock guards, in the registered libraries, and
// `function_vm` drops those before it lets the registering VM go.
unsafe impl Send for VmFunction {}

/// How a script behaved in its runs so far, which decides whether it may run alongside
/// other clients' commands and scripts, holding only the shards of its declared keys.
#[derive(Default)]
struct Conduct {
    /// It ran once (a first run is always alone: that is how its conduct is learned).
    seen: AtomicBool,
    /// It touched keys outside its declared keys' shards, or ran a command that may touch
    /// any key (KEYS, SCAN, INFO...): it always runs alone.
    wide: AtomicBool,
}

impl Conduct {
    fn runs_alongside(&self) -> bool {
        self.seen.load(Ordering::Relaxed) && !self.wide.load(Ordering::Relaxed)
    }
}

/// Whether `name` is a command that runs a script (they take the gate exclusively).
pub fn is_script_command(name: &[u8]) -> bool {
    matches!(name.first(), Some(b'e' | b'E'))
        && ["eval", "evalsha", "eval_ro", "evalsha_ro"].iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
        || matches!(name.first(), Some(b'f' | b'F'))
            && ["fcall", "fcall_ro"].iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}

impl Engine {
    /// Whether running `args` for `client` may run a script (EVAL, EVALSHA, FCALL and their
    /// _RO forms outside MULTI, or EXEC of a transaction that queued one): a server runs
    /// such commands where it can serve its other connections while the script is busy
    /// (`with_busy_service`).
    pub fn runs_script(&self, client: &Client, args: &[&[u8]]) -> bool {
        let Some(&name) = args.first() else { return false };
        match &client.multi {
            None => is_script_command(name),
            Some(queue) => {
                !client.in_exec
                    && name.eq_ignore_ascii_case(b"exec")
                    && queue.iter().any(|cmd| cmd.first().is_some_and(|n| is_script_command(n)))
            }
        }
    }
}

impl Scripting {
    /// INFO memory: cached EVAL scripts, functions and libraries, and their memory.
    pub fn memory(&self) -> ScriptingMemory {
        let (functions, libraries, functions_code) = self
            .libraries
            .try_lock()
            .map(|l| (l.functions.len(), l.libs.len(), l.libs.values().map(|lib| lib.code.len()).sum()))
            .unwrap_or_default();
        ScriptingMemory {
            cached_scripts: self.cached_scripts.load(Ordering::Relaxed),
            functions,
            libraries,
            vm_eval: self.eval_vm_bytes.load(Ordering::Relaxed),
            vm_functions: self.functions_vm_bytes.load(Ordering::Relaxed),
            scripts_eval: self.eval_bodies_bytes.load(Ordering::Relaxed),
            functions_code,
        }
    }
}

/// The error of a command refused because used memory is over `maxmemory`.
pub use crate::evict::OOM_ERROR;
pub const NOREPLICAS_ERROR: &str = "NOREPLICAS Not enough good replicas to write.";

impl Engine {
    /// Whether the command may grow memory (Redis's CMD_DENYOOM). For scripts it comes from
    /// the script's flags: a shebang script denies OOM unless `allow-oom` or `no-writes`;
    /// an EVAL without shebang checks at its first write instead.
    pub fn command_denies_oom(&self, spec: &CommandSpec, args: &[&[u8]]) -> bool {
        if !is_script_command(args[0]) {
            return spec.has_flag(crate::command::flags::DENYOOM);
        }
        let flags = self.script_flags(args);
        flags.is_some_and(|f| f & flag::EVAL_COMPAT == 0 && f & (flag::ALLOW_OOM | flag::NO_WRITES) == 0)
    }

    /// Whether the command may write or replicate (Redis's CMD_WRITE | CMD_MAY_REPLICATE after
    /// evalGetCommandFlags / fcallGetCommandFlags): what CLIENT PAUSE WRITE holds. EVAL,
    /// EVALSHA and FCALL may, unless their script or function declares `no-writes`.
    pub fn may_replicate(&self, spec: &CommandSpec, args: &[&[u8]]) -> bool {
        if spec.has_flag(crate::command::flags::WRITE) {
            return true;
        }
        if !has_may_replicate_flag(spec) {
            return false;
        }
        !is_script_command(args[0])
            || !self.script_flags(args).is_some_and(|f| f & flag::EVAL_COMPAT == 0 && f & flag::NO_WRITES != 0)
    }

    /// Whether the command writes (CMD_WRITE) and may run on a stale replica (CMD_STALE),
    /// as Redis's processCommand sees it: for a script command whose script declares flags
    /// (a shebang, or a function), those flags decide (scriptFlagsToCmdFlags); an EVAL
    /// without shebang keeps its command's.
    pub(crate) fn writes_and_stale_ok(&self, spec: &CommandSpec, args: &[&[u8]]) -> (bool, bool) {
        let declared = (spec.has_flag(crate::command::flags::WRITE), spec.has_flag(crate::command::flags::STALE));
        if !is_script_command(args[0]) {
            return declared;
        }
        match self.script_flags(args) {
            Some(f) if f & flag::EVAL_COMPAT == 0 => (f & flag::NO_WRITES == 0, f & flag::ALLOW_STALE != 0),
            _ => declared,
        }
    }

    /// The flags of the script or function a script command runs, when known (a shebang, a
    /// cached script, a loaded function).
    fn script_flags(&self, args: &[&[u8]]) -> Option<u32> {
        let name = args[0].to_ascii_lowercase();
        match name.as_slice() {
            b"eval" | b"eval_ro" => args.get(1).and_then(|body| parse_shebang(body).ok()).map(|(f, _)| f),
            b"evalsha" | b"evalsha_ro" => {
                let sha = args.get(1).map(|s| String::from_utf8_lossy(s).to_ascii_lowercase());
                let sha = sha?;
                self.scripting.eval_scripts.read().get(&sha).map(|s| s.flags)
            }
            _ => {
                let key = args.get(1).map(|s| String::from_utf8_lossy(s).to_lowercase());
                let libs = self.scripting.libraries.try_lock();
                libs.as_ref().and_then(|libs| libs.functions.get(key.as_deref()?).map(|f| f.flags))
            }
        }
    }

    /// Redis's checkGoodReplicasStatus: `min-replicas-to-write` is met (quince has no
    /// replicas yet, so any requirement fails).
    pub(crate) fn enough_good_replicas(&self) -> bool {
        !self.hot.writes_need_replicas.load(Ordering::Relaxed)
            || self.persistence().map_or(0, |p| p.good_replicas()) as u64
                >= self.hot.min_replicas_to_write.load(Ordering::Relaxed)
    }
}

/// The commands Redis 7.0 flags MAY_REPLICATE (in its command JSON; COMMAND INFO never
/// lists the flag): they count as writes for read-only scripts and CLIENT PAUSE WRITE.
fn has_may_replicate_flag(spec: &CommandSpec) -> bool {
    matches!(spec.name.as_str(), "pfcount" | "publish" | "spublish" | "eval" | "evalsha" | "fcall")
}

/// Redis's sha1hex: lowercase hex SHA1.
pub fn sha1hex(data: &[u8]) -> String {
    sha1_smol::Sha1::from(data).digest().to_string()
}

/// Runs `f` on `name` in ASCII lowercase (function names are case-insensitive, as Redis's
/// ASCII-only strcasecmp compares them), without allocating for short names; a name that
/// is not UTF-8 can't be a function's.
fn with_lowercase<R>(name: &[u8], f: impl FnOnce(&str) -> R) -> R {
    let mut short = [0u8; 64];
    let mut long = Vec::new();
    let lowered: &mut [u8] = if name.len() <= short.len() {
        short[..name.len()].copy_from_slice(name);
        &mut short[..name.len()]
    } else {
        long.extend_from_slice(name);
        &mut long
    };
    lowered.make_ascii_lowercase();
    f(std::str::from_utf8(lowered).unwrap_or_default())
}

/// `sha1hex` into a buffer, with no allocation.
fn sha1hex_into(data: &[u8], out: &mut [u8; 40]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, byte) in sha1_smol::Sha1::from(data).digest().bytes().iter().enumerate() {
        out[2 * i] = HEX[(byte >> 4) as usize];
        out[2 * i + 1] = HEX[(byte & 15) as usize];
    }
}

thread_local! {
    /// The SHA of the EVAL body about to run, with the body's address and length: computed
    /// while choosing how to lock it, used by the run that follows on this thread.
    static EVAL_SHA: std::cell::Cell<Option<(usize, usize, [u8; 40])>> = const { std::cell::Cell::new(None) };
}

/// The SHA of `body`, from `EVAL_SHA` when it is this very body's.
fn eval_sha(body: &[u8], out: &mut [u8; 40]) {
    match EVAL_SHA.with(|c| c.take()) {
        Some((at, len, sha)) if at == body.as_ptr() as usize && len == body.len() => *out = sha,
        _ => body_sha(body, out),
    }
}

/// Bodies cached per thread by `body_sha`, and the longest one kept.
const RECENT_BODIES: usize = 16;
const RECENT_BODY_MAX: usize = 16 * 1024;

/// A body seen recently: its cheap hash, the body, its SHA.
type RecentBody = (u64, Box<[u8]>, [u8; 40]);

thread_local! {
    /// The SHAs of the EVAL bodies this thread saw last, by a hash of the body: direct
    /// mapped, an entry replaced by the next body that maps to it.
    static RECENT: std::cell::RefCell<Vec<Option<RecentBody>>> =
        std::cell::RefCell::new(vec![None; RECENT_BODIES]);
}

/// The SHA1 (hex) of an EVAL body. PERF: Redis hashes the body on every EVAL; here a body
/// this thread saw recently is found by a much cheaper hash and a comparison of its bytes
/// (SHA1 of `return 1` costs more than running it).
fn body_sha(body: &[u8], out: &mut [u8; 40]) {
    use std::hash::BuildHasher;
    if body.len() > RECENT_BODY_MAX {
        return sha1hex_into(body, out);
    }
    static HASHER: std::sync::OnceLock<hashbrown::DefaultHashBuilder> = std::sync::OnceLock::new();
    let hash = HASHER.get_or_init(Default::default).hash_one(body);
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        let entry = &mut recent[hash as usize % RECENT_BODIES];
        match entry {
            Some((h, seen, sha)) if *h == hash && **seen == *body => *out = *sha,
            _ => {
                sha1hex_into(body, out);
                *entry = Some((hash, body.into(), *out));
            }
        }
    })
}

impl Engine {
    /// Whether a script command may run alongside other clients' commands and scripts,
    /// holding only the shards of its declared keys under the shared gate: the script ran
    /// before and kept to those shards (`Conduct`). Otherwise it runs alone, with the gate
    /// held exclusively. For EVAL, the body's SHA is kept for the run (`EVAL_SHA`).
    pub(crate) fn script_runs_alongside(&self, args: &[&[u8]]) -> bool {
        if self.scripting.one_thread.load(Ordering::Relaxed) {
            return false;
        }
        let numkeys_ok = args
            .get(2)
            .and_then(|n| quince_resp::parse_i64_strict(n))
            .is_some_and(|n| usize::try_from(n).is_ok_and(|n| n <= args.len() - 3));
        if !numkeys_ok {
            return false;
        }
        let name = args[0];
        if name.eq_ignore_ascii_case(b"eval") || name.eq_ignore_ascii_case(b"eval_ro") {
            let mut sha = [0u8; 40];
            body_sha(args[1], &mut sha);
            EVAL_SHA.with(|c| c.set(Some((args[1].as_ptr() as usize, args[1].len(), sha))));
            let sha = std::str::from_utf8(&sha).unwrap_or_default();
            self.scripting.eval_scripts.read().get(sha).is_some_and(|s| s.conduct.runs_alongside())
        } else if name.eq_ignore_ascii_case(b"evalsha") || name.eq_ignore_ascii_case(b"evalsha_ro") {
            let mut sha = [0u8; 40];
            if args[1].len() != 40 {
                return false;
            }
            sha.copy_from_slice(args[1]);
            sha.make_ascii_lowercase();
            let Ok(sha) = std::str::from_utf8(&sha) else { return false };
            self.scripting.eval_scripts.read().get(sha).is_some_and(|s| s.conduct.runs_alongside())
        } else {
            with_lowercase(args[1], |function| {
                self.scripting.libraries.lock().functions.get(function).is_some_and(|f| f.conduct.runs_alongside())
            })
        }
    }
}

// ---------------------------------------------------------------------------------------
// The VM
// ---------------------------------------------------------------------------------------

/// Lua code run once when the VM starts: the `redis` table, the error handler, the
/// sandbox. Its arguments are the Rust helpers; it returns the hooks table, the runner and
/// the script environment.
const PRELUDE: &str = r#"
local hooks, sha1_impl, bit_lib, cjson_lib, cmsgpack_lib, struct_lib, math_random, math_randomseed, c_wrap,
  c_guard, c_pairs, c_unpack, c_redis_call, c_redis_pcall, c_runner, compiled = ...
local dbg = debug
local raw_setfenv = setfenv
debug = nil
print = nil
loadfile = nil
dofile = nil
local G = _G
local prelude_source = dbg.getinfo(1, 'S').source
local raw_pcall = pcall
-- A map or set reply as an array of keys (and values), read one element at a time by Rust.
hooks.flatten = function(t, with_values)
  local flat, n = {}, 0
  for k, v in next, t do
    n = n + 1
    flat[n] = k
    if with_values then n = n + 1; flat[n] = v end
  end
  return flat
end

-- What a table in a script's reply is, in one call from Rust (in Redis's order of checks):
-- 1 err, 2 ok, 3 double, 4 big_number, 5 verbatim_string (format, string), 6 map, 7 set,
-- each with its value; else 0, the array's length up to its first nil and, for a short
-- array when `fetch`, its elements.
local raw_get, raw_type, raw_unpack = rawget, type, unpack
hooks.classify = function(t, fetch)
  local v = raw_get(t, 'err')
  if raw_type(v) == 'string' then return 1, v end
  v = raw_get(t, 'ok')
  if raw_type(v) == 'string' then return 2, v end
  v = raw_get(t, 'double')
  if raw_type(v) == 'number' then return 3, v end
  v = raw_get(t, 'big_number')
  if raw_type(v) == 'string' then return 4, v end
  v = raw_get(t, 'verbatim_string')
  if raw_type(v) == 'table' then
    local f, s = raw_get(v, 'format'), raw_get(v, 'string')
    if raw_type(f) == 'string' and raw_type(s) == 'string' then return 5, f, s end
  end
  v = raw_get(t, 'map')
  if raw_type(v) == 'table' then return 6, v end
  v = raw_get(t, 'set')
  if raw_type(v) == 'table' then return 7, v end
  local n = 0
  while raw_get(t, n + 1) ~= nil do n = n + 1 end
  if fetch and n <= 64 then return 0, n, raw_unpack(t, 1, n) end
  return 0, n
end

-- Errors raised by Rust functions arrive as mlua error objects: keep just the message.
local function clean(e)
  if type(e) == 'string' or type(e) == 'table' then return e end
  local s = tostring(e)
  s = string.gsub(s, '^runtime error: ', '')
  local tb = string.find(s, '\nstack traceback:', 1, true)
  if tb then s = string.sub(s, 1, tb - 1) end
  return s
end
-- Rust library functions raise their errors at the caller's line, as C functions do, and
-- argument errors name the function as the caller called it (lauxlib's luaL_argerror).
-- With `packed`, the function gets its arguments as a table and their count: Rust then
-- reads numbers exactly (mlua turns a number within 2^-52 of an integer into it).
local function wrap(f, packed)
  return c_wrap(function(...)
    local res
    if packed then res = {raw_pcall(f, {...}, select('#', ...))} else res = {raw_pcall(f, ...)} end
    if res[1] then return unpack(res, 2, table.maxn(res)) end
    local e = clean(res[2])
    if type(e) == 'string' and string.find(e, '\1', 1, true) then
      local info = dbg.getinfo(2, 'n')
      e = string.gsub(e, '\1', (info and info.name) or '?')
    end
    -- Errors the VM raises inside a C function (not luaL_error) carry no position.
    if type(e) == 'string' and string.byte(e, 1) == 2 then error(string.sub(e, 2), 0) end
    error(e, 3)
  end)
end
local function wrap_all(t, packed)
  for k, v in pairs(t) do
    if type(v) == 'function' then t[k] = wrap(v, packed) end
  end
  return t
end
bit_lib = wrap_all(bit_lib)
local function cjson_instance(t)
  t = wrap_all(t, true)
  local make = t.new
  t.new = function() return cjson_instance(make()) end
  return t
end
cjson_lib = cjson_instance(cjson_lib)
cmsgpack_lib = wrap_all(cmsgpack_lib, true)
struct_lib = wrap_all(struct_lib, true)
sha1_impl = wrap(sha1_impl)
math_random = wrap(math_random)
math_randomseed = wrap(math_randomseed)

-- Redis's pcall hands back the message of an error table, as before 7.0.
local function pcall_result(ok, ...)
  if ok then return true, ... end
  local e = clean((...))
  if type(e) == 'table' and (type(e.err) == 'string' or type(e.err) == 'number') then e = e.err end
  return false, e
end
G.pcall = function(...) return pcall_result(raw_pcall(...)) end

local function handler(err)
  local level, info = 2, nil
  while true do
    info = dbg.getinfo(level, 'nSl')
    if not info then break end
    if info.what ~= 'C' and info.what ~= 'tail' and info.source ~= prelude_source then break end
    level = level + 1
  end
  err = clean(err)
  if type(err) ~= 'table' then err = {err = 'ERR ' .. tostring(err)} end
  if info then
    err['source'] = info.source
    err['line'] = info.currentline
  end
  return err
end

local function errtable(s)
  local code, msg
  if string.sub(s, 1, 1) == '-' then
    local sp = string.find(s, ' ', 1, true)
    if sp then code = string.sub(s, 2, sp - 1); msg = string.sub(s, sp + 1)
    else code = 'ERR'; msg = string.sub(s, 2) end
  else
    code = 'ERR'; msg = s
  end
  msg = (string.gsub(msg, '^[\r\n]+', ''))
  msg = (string.gsub(msg, '[\r\n]+$', ''))
  return {err = code .. ' ' .. msg}
end
hooks.errtable = errtable

local function raise(msg) error(errtable(msg)) end

local redis = {}
-- C functions (Rust's c_redis_call): a tail call keeps the script's frame for error line
-- numbers, and the arguments are read in place from the stack.
redis.call = c_redis_call
redis.pcall = c_redis_pcall
function redis.error_reply(...)
  local e = ...
  if select('#', ...) ~= 1 or type(e) ~= 'string' then return errtable('wrong number or type of arguments') end
  if string.sub(e, 1, 1) ~= '-' then e = '-' .. e end
  return errtable(e)
end
function redis.status_reply(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then return errtable('wrong number or type of arguments') end
  return {ok = s}
end
-- C functions, as in Redis: called as `return redis.x(...)` they keep the script's frame,
-- so an error names the script's line.
redis.sha1hex = c_wrap(function(...)
  if select('#', ...) ~= 1 then raise('wrong number of arguments') end
  local s = ...
  if type(s) ~= 'string' and type(s) ~= 'number' then s = '' end
  return sha1_impl(tostring(s))
end)
redis.log = c_wrap(function(...)
  local n = select('#', ...)
  if n < 2 then raise('redis.log() requires two arguments or more.') end
  local level = ...
  if type(level) ~= 'number' then raise('First argument must be a number (log level).') end
  if level < 0 or level > 3 then raise('Invalid debug level.') end
end)
redis.setresp = c_wrap(function(...)
  if select('#', ...) ~= 1 then raise('redis.setresp() requires one argument.') end
  local v = ...
  if type(v) ~= 'number' or (v ~= 2 and v ~= 3) then raise('RESP version must be 2 or 3.') end
  hooks.setresp(v)
end)
redis.set_repl = c_wrap(function(...)
  if select('#', ...) ~= 1 then raise('redis.set_repl() requires two arguments.') end
  local flags = ...
  if type(flags) ~= 'number' or flags < 0 or flags > 3 or flags ~= math.floor(flags) then
    raise('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.')
  end
  hooks.set_repl(flags)
end)
function redis.replicate_commands() return true end
function redis.breakpoint() return hooks.ldb_breakpoint() end
function redis.debug(...) hooks.ldb_debug(...) end
-- A C function (as in Redis): `return redis.acl_check_cmd(...)` keeps the script's frame,
-- so an error names the script's line.
redis.acl_check_cmd = c_wrap(function(...)
  if select('#', ...) < 1 then raise('Please specify at least one argument for this redis lib call') end
  local allowed = hooks.acl_check(...)
  if type(allowed) == 'string' then raise(allowed) end
  if allowed == nil then raise('Invalid command passed to redis.acl_check_cmd()') end
  return allowed
end)
redis.REDIS_VERSION_NUM = 458767
redis.REDIS_VERSION = '7.0.15'
redis.LOG_DEBUG = 0
redis.LOG_VERBOSE = 1
redis.LOG_NOTICE = 2
redis.LOG_WARNING = 3
redis.REPL_NONE = 0
redis.REPL_AOF = 1
redis.REPL_SLAVE = 2
redis.REPL_REPLICA = 2
redis.REPL_ALL = 3

math.random = math_random
math.randomseed = math_randomseed

local function readonly() error('Attempt to modify a readonly table', 2) end
-- Read-only tables are empty proxies: `backing[proxy]` is the table they show, `shown[proxy]`
-- what getmetatable tells of them. Lua 5.1 has no read-only tables, so every builtin that
-- writes a table raw (rawset, setmetatable, table.insert) is wrapped by a C
-- guard that refuses a proxy, and those that read raw (rawget, next, pairs) read through
-- it, so scripts see the libraries as Redis's read-only tables.
local backing = setmetatable({}, {__mode = 'k'})
local shown = setmetatable({}, {__mode = 'k'})
local function protect(t)
  local p = setmetatable({}, {__index = t, __newindex = readonly, __metatable = false})
  backing[p] = t
  return p
end
local GUARD_WRITE, GUARD_READ, GUARD_META = 0, 1, 2
local function guarded(f, mode) return c_guard(f, backing, shown, mode) end
local raw_setmetatable = setmetatable
G.setmetatable = guarded(setmetatable, GUARD_WRITE)
G.rawset = guarded(rawset, GUARD_WRITE)
G.rawget = guarded(rawget, GUARD_READ)
G.next = guarded(next, GUARD_READ)
G.pairs = c_pairs(G.next)
G.getmetatable = guarded(getmetatable, GUARD_META)
table.insert = guarded(table.insert, GUARD_WRITE)
-- (table.remove and table.sort never write to a proxy: its length is 0.)
unpack = c_unpack
-- What Redis's sandbox leaves out: no way to the real globals, to new userdata or to files.
getfenv = nil
setfenv = nil
newproxy = nil
module = nil
require = nil
package = nil
G.__redis__err__handler = handler

-- Redis's Lua never loads binary chunks (crafted bytecode reads and writes memory): its
-- parser takes every chunk as text, so one starting with ESC fails at that byte. A space in
-- front gives the same error here; the chunk keeps its name. Loaded code sees the sandbox.
local raw_loadstring, raw_load = loadstring, load
local function as_text(s)
  if type(s) == 'string' and string.byte(s, 1) == 27 then return ' ' .. s end
  return s
end
local function where(level)
  local info = dbg.getinfo(level + 1, 'Sl')
  if info and info.currentline > 0 then return info.short_src .. ':' .. info.currentline .. ': ' end
  return ''
end
G.loadstring = function(...)
  local s, name = ...
  if type(s) ~= 'string' and type(s) ~= 'number' then
    local got = select('#', ...) == 0 and 'no value' or type(s)
    error("bad argument #1 to 'loadstring' (string expected, got " .. got .. ')', 2)
  end
  if name ~= nil and type(name) ~= 'string' and type(name) ~= 'number' then
    error("bad argument #2 to 'loadstring' (string expected, got " .. type(name) .. ')', 2)
  end
  local f, e = raw_loadstring(as_text(s), name or s)
  if f then raw_setfenv(f, hooks.env) end
  return f, e
end
G.load = function(...)
  local reader, name = ...
  if type(reader) ~= 'function' then
    local got = select('#', ...) == 0 and 'no value' or type(reader)
    error("bad argument #1 to 'load' (function expected, got " .. got .. ')', 2)
  end
  if name ~= nil and type(name) ~= 'string' and type(name) ~= 'number' then
    error("bad argument #2 to 'load' (string expected, got " .. type(name) .. ')', 2)
  end
  local at, first = where(2), true
  local f, e = raw_load(function()
    local piece = reader()
    if piece ~= nil and type(piece) ~= 'string' and type(piece) ~= 'number' then
      error(at .. 'reader function must return a string', 0)
    end
    if first then
      first = false
      piece = as_text(piece)
    end
    return piece
  end, name or '=(load)')
  if f then raw_setfenv(f, hooks.env) end
  return f, e
end

-- The Lua debugger (SCRIPT DEBUG, ldb.rs) reads the stopped script's frames from its hook
-- through these. Called from the hook, a helper's caller is the script's current frame.
-- The locals of the frame `level` steps out from there (nil: no such frame).
hooks.ldb_locals = function(level)
  local at = level + 2
  if not dbg.getinfo(at, 'l') then return nil, nil, 0 end
  local names, values, i = {}, {}, 1
  while true do
    local name, value = dbg.getlocal(at, i)
    if name == nil then break end
    names[i], values[i] = name, value
    i = i + 1
  end
  return names, values, i - 1
end
-- Every frame from the script's current one outwards: short source, name, current line.
hooks.ldb_frames = function()
  local frames, at = {}, 2
  while true do
    local info = dbg.getinfo(at, 'Snl')
    if not info then return frames end
    frames[#frames + 1] = {info.short_src, info.name or false, info.currentline}
    at = at + 1
  end
end
-- `eval <code>`: as an expression if it compiles as one, in the scripts' environment.
hooks.ldb_eval = function(code)
  local f, e = raw_loadstring(as_text('return ' .. code), '@ldb_eval')
  if not f then
    f, e = raw_loadstring(as_text(code), '@ldb_eval')
    if not f then return false, e end
  end
  raw_setfenv(f, hooks.env)
  local ok, v = raw_pcall(f)
  return ok, v
end

G.redis = protect(redis)
G.bit = protect(bit_lib)
G.cjson = protect(cjson_lib)
G.cmsgpack = protect(cmsgpack_lib)
G.struct = protect(struct_lib)
G.string = protect(string)
G.math = protect(math)
G.table = protect(table)
G.coroutine = protect(coroutine)
-- Methods on strings go through the read-only string library, and getmetatable('') shows
-- a read-only view of the metatable (CVE-2025-46818: a script rewrote it for all others).
local string_meta = getmetatable('')
string_meta.__index = G.string
string_meta.__metatable = protect(string_meta)

local flag_bits = {['no-writes'] = 1, ['allow-oom'] = 2, ['allow-stale'] = 4, ['no-cluster'] = 8,
  ['allow-cross-slot-keys'] = 32}
local function register_function(...)
  if not hooks.loading then raise('redis.register_function can only be called on FUNCTION LOAD command') end
  local n = select('#', ...)
  if n < 1 or n > 2 then raise('wrong number of arguments to redis.register_function') end
  local name, cb, flags, desc
  flags = 0
  if n == 1 then
    local t = ...
    if type(t) ~= 'table' then
      raise('calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).')
    end
    for k, v in pairs(t) do
      if type(k) ~= 'string' and type(k) ~= 'number' then raise('named argument key given to redis.register_function is not a string') end
      local lk = string.lower(tostring(k))
      if lk == 'function_name' then
        if type(v) ~= 'string' and type(v) ~= 'number' then raise('function_name argument given to redis.register_function must be a string') end
        name = tostring(v)
      elseif lk == 'description' then
        if type(v) ~= 'string' and type(v) ~= 'number' then raise('description argument given to redis.register_function must be a string') end
        desc = tostring(v)
      elseif lk == 'callback' then
        if type(v) ~= 'function' then raise('callback argument given to redis.register_function must be a function') end
        cb = v
      elseif lk == 'flags' then
        if type(v) ~= 'table' then raise('flags argument to redis.register_function must be a table representing function flags') end
        local j = 1
        while v[j] ~= nil do
          local f = v[j]
          if type(f) ~= 'string' and type(f) ~= 'number' then raise('unknown flag given') end
          local b = flag_bits[string.lower(tostring(f))]
          if not b then raise('unknown flag given') end
          flags = bit_lib.bor(flags, b)
          j = j + 1
        end
      else
        raise('unknown argument given to redis.register_function')
      end
    end
    if not name then raise('redis.register_function must get a function name argument') end
    if not cb then raise('redis.register_function must get a callback argument') end
  else
    name, cb = ...
    if type(name) ~= 'string' and type(name) ~= 'number' then raise('first argument to redis.register_function must be a string') end
    if type(cb) ~= 'function' then raise('second argument to redis.register_function must be a function') end
    name = tostring(name)
  end
  if name == '' or string.find(name, '[^%w_]') then
    raise('Library names can only contain letters, numbers, or underscores(_) and must be at least one character long')
  end
  if hooks.registered[string.lower(name)] then raise('Function already exists in the library') end
  hooks.registered[string.lower(name)] = {cb, flags, desc, name}
end
local load_redis = {register_function = register_function, log = redis.log,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM, REDIS_VERSION = redis.REDIS_VERSION}
local load_globals = {redis = raw_setmetatable({}, {
  __index = function(_, k)
    local v = rawget(load_redis, k)
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end
    return v
  end,
  __newindex = readonly,
  __metatable = false,
})}

backing[load_globals.redis] = load_redis

local function missing_global(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
-- Reads of the scripts' globals go through `env` to G as a table (Lua follows the chain
-- itself, no function call per read); only a name G lacks reaches missing_global. While a
-- library loads, they go to load_globals instead (hooks.set_loading).
local load_view = raw_setmetatable({}, {__index = function(_, k)
  local v = rawget(load_globals, k)
  if v == nil then
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end
  return v
end})
local env_meta = {__index = G, __newindex = readonly, __metatable = false}
local env = raw_setmetatable({}, env_meta)
function hooks.set_loading(on)
  hooks.loading = on
  env_meta.__index = on and load_view or G
end
-- What getmetatable(_G) shows: never G itself (a script could write to it), but a reader.
shown[env] = protect({
  __index = function(_, k)
    local v = rawget(hooks.loading and load_globals or G, k)
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end
    return v
  end,
  __newindex = readonly,
  __metatable = false,
})
backing[env] = G
hooks.env = env
G._G = env
raw_setmetatable(G, {__index = missing_global})

return hooks, c_runner(handler, G, compiled), env
"#;

/// Calls the Lua function in upvalue 1 with this C function's arguments and returns all
/// its results. Being a C function, it keeps the calling script's frame on the stack even
/// when called in tail position, so errors report the script's line as in Redis.
unsafe extern "C-unwind" fn c_trampoline(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: Lua calls this with its state and the closure's upvalue set by `c_wrap`. The
    // frame holds nothing with a destructor, so a Lua error may unwind through it.
    unsafe {
        let n = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, n, ffi::LUA_MULTRET);
        ffi::lua_gettop(l)
    }
}

/// `c_wrap(f)`: a C closure of `c_trampoline` over the function `f`.
unsafe extern "C-unwind" fn c_wrap(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: called by Lua with the function to wrap as its only argument.
    unsafe {
        ffi::lua_settop(l, 1);
        ffi::lua_pushcclosure(l, c_trampoline, 1);
        1
    }
}

/// `c_runner(handler, G, compiled)`: the runner, a C closure of `c_run` over the error
/// handler, the scripts' real globals, the compiled EVAL scripts (`Vm::compiled`), and the
/// KEYS and ARGV tables EVAL scripts get, with those two names, and whether the globals
/// hold those tables (a function VM has no KEYS or ARGV globals: they are made on the first
/// EVAL run, and again when a table is replaced).
unsafe extern "C-unwind" fn c_runner(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: called by the prelude with the three values as arguments.
    unsafe {
        ffi::lua_settop(l, 3);
        ffi::lua_createtable(l, 0, 0);
        ffi::lua_createtable(l, 0, 0);
        ffi::lua_pushstring(l, c"KEYS".as_ptr());
        ffi::lua_pushstring(l, c"ARGV".as_ptr());
        ffi::lua_pushboolean(l, 0);
        ffi::lua_pushcclosure(l, c_run, 8);
        1
    }
}

/// Upvalues of `c_run`.
const RUN_HANDLER: i32 = 1;
const RUN_GLOBALS: i32 = 2;
const RUN_COMPILED: i32 = 3;
const RUN_KEYS: i32 = 4;
const RUN_ARGV: i32 = 5;
const RUN_KEYS_NAME: i32 = 6;
const RUN_ARGV_NAME: i32 = 7;
const RUN_PUBLISHED: i32 = 8;

/// `runner(f)`: calls `f` (a function, or the slot of a compiled EVAL script: no
/// reference to it is made per run) under the error handler and returns `ok, result`
/// (xpcall's). The running script (`Invocation::installed`) gives the arguments: for an
/// EVAL, KEYS and ARGV are set as globals and `f` gets none; for a library function they
/// are its two arguments. With no script installed (FUNCTION LOAD runs a library's body),
/// `f` gets no arguments.
///
/// PERF: an EVAL's KEYS and ARGV are the same two tables each run, emptied and filled
/// again: two tables less of garbage per script, so the collector runs less. A script
/// cannot keep them past its run (the globals and libraries are read-only), so it sees
/// fresh ones, as in Redis; one it gave a metatable is replaced by a new table. A library
/// function can keep its arguments (in a local of its library), so it gets new ones.
unsafe extern "C-unwind" fn c_run(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: upvalues as `c_runner` set them; the invocation pointer is valid while the
    // script runs (`installed`), its key and argument slices with it. The frame holds only
    // plain data, so a Lua (memory) error may unwind it.
    unsafe {
        ffi::lua_settop(l, 1);
        if ffi::lua_type(l, 1) == ffi::LUA_TNUMBER {
            ffi::lua_rawgeti(l, ffi::lua_upvalueindex(RUN_COMPILED), ffi::lua_tointeger(l, 1));
            ffi::lua_replace(l, 1);
        }
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(RUN_HANDLER));
        ffi::lua_insert(l, 1);
        // Stack: handler, f.
        let nargs = match INVOCATION.with(|c| c.get()) {
            None => 0,
            Some(ptr) => {
                let inv = ptr.as_ptr();
                let (keys, argv): (&[&[u8]], &[&[u8]]) = ((*inv).keys, (*inv).argv);
                if (*inv).eval_mode {
                    let mut published = ffi::lua_toboolean(l, ffi::lua_upvalueindex(RUN_PUBLISHED)) != 0;
                    for (table, name, items) in [(RUN_KEYS, RUN_KEYS_NAME, keys), (RUN_ARGV, RUN_ARGV_NAME, argv)] {
                        if refill_array(l, ffi::lua_upvalueindex(table), items) || !published {
                            // G[name] = the table.
                            ffi::lua_pushvalue(l, ffi::lua_upvalueindex(name));
                            ffi::lua_pushvalue(l, ffi::lua_upvalueindex(table));
                            ffi::lua_rawset(l, ffi::lua_upvalueindex(RUN_GLOBALS));
                        }
                    }
                    if !published {
                        published = true;
                        ffi::lua_pushboolean(l, published as std::ffi::c_int);
                        ffi::lua_replace(l, ffi::lua_upvalueindex(RUN_PUBLISHED));
                    }
                    0
                } else {
                    push_array(l, keys);
                    push_array(l, argv);
                    2
                }
            }
        };
        let status = ffi::lua_pcall(l, nargs, 1, 1);
        ffi::lua_pushboolean(l, (status == 0) as std::ffi::c_int);
        ffi::lua_replace(l, 1);
        2
    }
}

/// Makes the table at `index` (an upvalue) the array `items`: emptied of what an earlier
/// run left (and of what its script added), or replaced when a script gave it a metatable
/// (then true: the globals must be given the new table).
///
/// # Safety
/// `l` has room for three more values; `index` is a pseudo-index holding a table.
unsafe fn refill_array(l: *mut mlua::ffi::lua_State, index: i32, items: &[&[u8]]) -> bool {
    use mlua::ffi;
    let mut replaced = false;
    unsafe {
        if ffi::lua_getmetatable(l, index) != 0 {
            ffi::lua_pop(l, 1);
            ffi::lua_createtable(l, items.len().min(i32::MAX as usize) as i32, 0);
            ffi::lua_replace(l, index);
            replaced = true;
        } else {
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, index) != 0 {
                // Stack: key, value. Clearing the field just visited keeps `next` valid.
                ffi::lua_pop(l, 1);
                ffi::lua_pushvalue(l, -1);
                ffi::lua_pushnil(l);
                ffi::lua_rawset(l, index);
            }
        }
        for (i, item) in items.iter().enumerate() {
            ffi::lua_pushlstring(l, item.as_ptr() as *const _, item.len());
            ffi::lua_rawseti(l, index, i as ffi::lua_Integer + 1);
        }
    }
    replaced
}

/// Pushes an array of strings.
///
/// # Safety
/// `l` has room for two more values.
unsafe fn push_array(l: *mut mlua::ffi::lua_State, items: &[&[u8]]) {
    use mlua::ffi;
    unsafe {
        ffi::lua_createtable(l, items.len().min(i32::MAX as usize) as i32, 0);
        for (i, item) in items.iter().enumerate() {
            ffi::lua_pushlstring(l, item.as_ptr() as *const _, item.len());
            ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
        }
    }
}

/// `c_guard(f, backing, shown, mode)`: a C closure over the C function `f` that first checks
/// whether its first argument is a read-only proxy (a key of `backing`): in mode 0 (writes)
/// that is "Attempt to modify a readonly table", in mode 1 (raw reads) `f` reads the proxied
/// table instead, in mode 2 (getmetatable) the result is `shown[proxy]`.
unsafe extern "C-unwind" fn c_guard(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: called by Lua with the four arguments the prelude passes.
    unsafe {
        ffi::lua_settop(l, 4);
        ffi::lua_pushcclosure(l, c_guarded, 4);
        1
    }
}

unsafe extern "C-unwind" fn c_guarded(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: the closure's upvalues are those `c_guard` set: a C function, two tables and a
    // mode. The wrapped builtins use no upvalues of their own, so calling them in this
    // frame is calling them directly: their argument errors name the function as the script
    // called it. The frame holds nothing with a destructor, so a Lua error may unwind it.
    unsafe {
        if ffi::lua_type(l, 1) == ffi::LUA_TTABLE {
            ffi::lua_pushvalue(l, 1);
            ffi::lua_rawget(l, ffi::lua_upvalueindex(2));
            if ffi::lua_isnil(l, -1) == 0 {
                match ffi::lua_tointeger(l, ffi::lua_upvalueindex(4)) {
                    0 => {
                        ffi::lua_pushstring(l, c"Attempt to modify a readonly table".as_ptr());
                        ffi::lua_error(l)
                    }
                    1 => ffi::lua_replace(l, 1),
                    _ => {
                        ffi::lua_pop(l, 1);
                        ffi::lua_pushvalue(l, 1);
                        ffi::lua_rawget(l, ffi::lua_upvalueindex(3));
                        return 1;
                    }
                }
            } else {
                ffi::lua_pop(l, 1);
            }
        }
        match ffi::lua_tocfunction(l, ffi::lua_upvalueindex(1)) {
            Some(f) => f(l),
            None => 0,
        }
    }
}

/// `c_pairs(next)`: Lua's `pairs` returning the given (guarded) `next`.
unsafe extern "C-unwind" fn c_pairs(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: called by Lua with the `next` function as its only argument.
    unsafe {
        ffi::lua_settop(l, 1);
        ffi::lua_pushcclosure(l, c_pairs_impl, 1);
        1
    }
}

unsafe extern "C-unwind" fn c_pairs_impl(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: upvalue 1 is the `next` given to `c_pairs`.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_pushvalue(l, 1);
        ffi::lua_pushnil(l);
        3
    }
}

/// Lua's `unpack` with Redis's fix for CVE-2025-46817: the count is computed without
/// overflow, so `unpack(t, -2, 2147483647)` is "too many results to unpack", not a crash.
unsafe extern "C-unwind" fn c_unpack(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: a plain Lua C function over its own stack frame; errors unwind nothing.
    unsafe {
        ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
        // luaL_optint and luaL_checkint: the integer, truncated to a C int.
        let first = ffi::luaL_optinteger(l, 2, 1) as i32;
        let last = if ffi::lua_isnoneornil(l, 3) != 0 {
            ffi::lua_objlen(l, 1) as i32
        } else {
            ffi::luaL_checkinteger(l, 3) as i32
        };
        if first > last {
            return 0;
        }
        let count = last as i64 - first as i64 + 1;
        if count >= i32::MAX as i64 || ffi::lua_checkstack(l, count as i32) == 0 {
            return ffi::luaL_error(l, c"too many results to unpack".as_ptr());
        }
        for i in first..=last {
            ffi::lua_rawgeti(l, 1, i as ffi::lua_Integer);
        }
        count as i32
    }
}

/// Redis's rand48 generator (rand.c): the same sequence on every platform.
struct Rand48(u64);

impl Default for Rand48 {
    /// As redisSrand48(0) leaves it (and the process starts with).
    fn default() -> Self {
        Rand48(0x1234_ABCD_330E)
    }
}

impl Rand48 {
    const MASK: u64 = (1 << 48) - 1;

    fn seed(&mut self, seed: i32) {
        self.0 = (((seed as u32 as u64) << 16) | 0x330E) & Self::MASK;
    }

    fn next(&mut self) -> i32 {
        self.0 = (self.0.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & Self::MASK;
        (self.0 >> 17) as i32
    }
}

fn lua_err(msg: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(msg.into())
}

// SAFETY: mlua's handles (`Lua`, `Table`, `Function`, values) share non-atomic counts of
// the state they point to, so they must never be used from two threads at once. Every
// handle to a Vm's state lives in the Vm itself or inside the Lua state (the hook and
// callback closures), and values made during a run are dropped before it ends; the Vm
// moves between threads only as a whole (a `Box` handed through `VmPool`, or `fvm` under
// its mutex), so one thread at a time uses all of them.
unsafe impl Send for Vm {}

impl Vm {
    fn new(
        engine: &Engine,
        memory_gauge: Arc<std::sync::atomic::AtomicUsize>,
        pool_epoch: (Arc<AtomicU64>, u64),
        generation: u64,
    ) -> mlua::Result<Vm> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG;
        // SAFETY: the debug library is only captured by the prelude's error handler (which
        // reads line information) and removed from the globals before any script runs.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::new()) };
        let hooks = lua.create_table()?;
        let sha1 = lua.create_function(|_, s: mlua::String| Ok(sha1hex(&s.as_bytes())))?;
        // One generator for every VM, as Redis's is one for the process: scripts draw from
        // the same sequence whichever VM runs them.
        let rand = Arc::clone(&engine.scripting.rand);
        let r = rand.clone();
        let random = lua.create_function(move |_, args: Variadic<Value>| {
            let x = r.lock().next();
            let r = (x % i32::MAX) as f64 / i32::MAX as f64;
            let int = |v: &Value, n: usize| -> mlua::Result<i64> {
                match v {
                    Value::Integer(i) => Ok(*i),
                    Value::Number(f) => Ok(*f as i64),
                    Value::String(s) => s
                        .to_str()
                        .ok()
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .map(|f| f as i64)
                        .ok_or_else(|| lua_err(format!("bad argument #{n} to 'random' (number expected)"))),
                    _ => {
                        Err(lua_err(format!("bad argument #{n} to 'random' (number expected, got {})", v.type_name())))
                    }
                }
            };
            match args.len() {
                0 => Ok(r),
                1 => {
                    let u = int(&args[0], 1)?;
                    if u < 1 {
                        return Err(lua_err("bad argument #1 to 'random' (interval is empty)"));
                    }
                    Ok((r * u as f64).floor() + 1.0)
                }
                2 => {
                    let (l, u) = (int(&args[0], 1)?, int(&args[1], 2)?);
                    if l > u {
                        return Err(lua_err("bad argument #2 to 'random' (interval is empty)"));
                    }
                    Ok((r * (u - l + 1) as f64).floor() + l as f64)
                }
                _ => Err(lua_err("wrong number of arguments")),
            }
        })?;
        let r = rand;
        let randomseed = lua.create_function(move |_, seed: f64| {
            r.lock().seed(seed as i64 as i32);
            Ok(())
        })?;
        let bit = bit_library(&lua)?;
        let cjson = cjson_library(&lua)?;
        let cmsgpack = cmsgpack_library(&lua)?;
        let structlib = struct_library(&lua)?;
        // SAFETY: `c_wrap` only builds a closure over its argument (see `c_trampoline`).
        let wrap = unsafe { lua.create_c_function(c_wrap)? };
        // SAFETY: C functions over their own stack frames (see each one).
        let (guard, pairs, unpack) = unsafe {
            (lua.create_c_function(c_guard)?, lua.create_c_function(c_pairs)?, lua.create_c_function(c_unpack)?)
        };
        // The per-run callbacks are made once and find the running script's state through
        // a thread-local (`Invocation::installed`): no closure is made per run.
        // SAFETY: both read their arguments from their own stack frame (see `redis_call`).
        let (call, pcall) = unsafe { (lua.create_c_function(c_redis_call)?, lua.create_c_function(c_redis_pcall)?) };
        // SAFETY: `c_runner` only builds a closure over its arguments (see `c_run`).
        let make_runner = unsafe { lua.create_c_function(c_runner)? };
        let compiled = lua.create_table()?;
        let prelude = lua.load(PRELUDE).set_name("=quince_prelude").into_function()?;
        let (hooks, runner, env): (Table, Function, Table) = prelude.call((
            hooks,
            sha1,
            bit,
            cjson,
            cmsgpack,
            structlib,
            random,
            randomseed,
            wrap,
            guard,
            pairs,
            unpack,
            call,
            pcall,
            make_runner,
            compiled.clone(),
        ))?;
        lua.set_named_registry_value("quince_flatten", hooks.raw_get::<Function>("flatten")?)?;
        let classify: Function = hooks.raw_get("classify")?;
        hooks.raw_set(
            "setresp",
            lua.create_function(|_, v: i64| {
                Invocation::with_current(|inv| {
                    inv.resp = v as u8;
                    Ok(())
                })
            })?,
        )?;
        hooks.raw_set(
            "set_repl",
            lua.create_function(|_, flags: i64| {
                Invocation::with_current(|inv| {
                    // REPL_AOF (1) and REPL_REPLICA (2) are the effects' targets.
                    inv.client.script_repl = flags as u8;
                    Ok(())
                })
            })?,
        )?;
        hooks.raw_set(
            "ldb_debug",
            lua.create_function(|_, values: Variadic<Value>| {
                ldb::debug_call(&values);
                Ok(())
            })?,
        )?;
        hooks.raw_set("ldb_breakpoint", lua.create_function(|_, ()| Ok(ldb::breakpoint_call()))?)?;
        hooks.raw_set(
            "acl_check",
            lua.create_function(|lua, values: Variadic<Value>| {
                // The arguments as redis.call takes them: strings, or numbers made strings.
                let mut owned: Vec<Vec<u8>> = Vec::with_capacity(values.len());
                for v in values.iter() {
                    match v {
                        Value::String(s) => owned.push(s.as_bytes().to_vec()),
                        Value::Integer(i) => owned.push(i.to_string().into_bytes()),
                        Value::Number(n) => {
                            let mut buf = Vec::new();
                            quince_resp::format_double(*n, &mut buf);
                            owned.push(buf);
                        }
                        _ => {
                            let text =
                                lua.create_string("Lua redis lib command arguments must be strings or integers")?;
                            return Ok(Value::String(text));
                        }
                    }
                }
                let args: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
                Invocation::with_current(|inv| match inv.engine.table.resolve(&args) {
                    // Checked against the user of the client running the script.
                    Resolved::Found(spec) => {
                        Ok(Value::Boolean(crate::acl::check(&inv.client.user.rules(), spec, &args).is_ok()))
                    }
                    _ => Ok(Value::Nil),
                })
            })?,
        )?;
        let run = Arc::new(RunState::default());
        engine.scripting.runs.lock().push(Arc::clone(&run));
        let vm = Vm {
            lua,
            generation,
            libs: Libraries::default(),
            busy_scripts: Arc::clone(&engine.scripting.busy_scripts),
            warning_log: Arc::clone(&engine.scripting.warning_log),
            registry: Arc::clone(&engine.scripting.runs),
            noted_memory: std::cell::Cell::new(0),
            pool_epoch,
            hooks,
            runner,
            classify,
            env,
            scripts: ShaMap::default(),
            compiled,
            run,
            clock: engine.clock.clone(),
            call_buffers: Default::default(),
            memory_gauge,
        };
        vm.install_script_hook();
        // What the prelude left behind (its temporaries) goes before the VM is counted.
        let _ = vm.lua.gc_collect();
        vm.note_memory();
        Ok(vm)
    }

    /// Tells INFO what the VM uses now.
    fn note_memory(&self) {
        if !self.counted() {
            return;
        }
        let now = self.lua.used_memory();
        let before = self.noted_memory.replace(now);
        // One locked instruction, none when nothing changed (the gauge wraps as usize).
        if now != before {
            self.memory_gauge.fetch_add(now.wrapping_sub(before), Ordering::Relaxed);
        }
    }

    /// The count hook every script runs under (installed once; FUNCTION LOAD and a killed
    /// script replace it for a while and put it back): every 100,000 instructions, a busy
    /// script lets its thread serve others (`with_busy_service`) and a killed one fails.
    fn install_script_hook(&self) {
        let (run, clock, busy_scripts) = (self.run.clone(), self.clock.clone(), self.busy_scripts.clone());
        let warning_log = self.warning_log.clone();
        self.lua.set_hook(HookTriggers::new().every_nth_instruction(100_000), move |lua, _| {
            let now_ms = clock.now_ms();
            if !run.killed.load(Ordering::SeqCst) && run.busy_at(now_ms) {
                // From now on other clients get BUSY (until `run_script` ends it).
                if !run.busy.load(Ordering::Relaxed) {
                    // What SCRIPT KILL, FUNCTION STATS and the log show of a busy script.
                    let recorded = Invocation::with_current(|invocation| {
                        run.set_current(invocation.name, invocation.command);
                        Ok(())
                    });
                    if recorded.is_err() {
                        run.set_current("?", &[]);
                    }
                }
                if !run.busy.swap(true, Ordering::SeqCst) {
                    busy_scripts.fetch_add(1, Ordering::SeqCst);
                    if let Some(log) = warning_log.get() {
                        let kill = if run.eval_mode.load(Ordering::SeqCst) { "SCRIPT KILL" } else { "FUNCTION KILL" };
                        log(&format!(
                            "Slow script detected: still in execution after {} milliseconds. You can try killing the script using the {kill} command. Script name is: {}.",
                            now_ms - run.start_ms.load(Ordering::SeqCst),
                            run.current.lock().0
                        ));
                    }
                }
                if serve_while_busy() {
                    run.killed.store(true, Ordering::SeqCst);
                }
            }
            if run.escalated.load(Ordering::SeqCst) {
                lua.set_hook(HookTriggers::EVERY_LINE, |_, _| Err(lua_err(REACH_STOP)));
                Err(lua_err(REACH_STOP))
            } else if run.killed.load(Ordering::SeqCst) {
                // From now on fail on every line, so a pcall in the script can't swallow it.
                lua.set_hook(HookTriggers::EVERY_LINE, |_, _| {
                    Err(lua_err("Script killed by user with SCRIPT KILL..."))
                });
                Err(lua_err("Script killed by user with SCRIPT KILL..."))
            } else {
                Ok(mlua::VmState::Continue)
            }
        });
    }

    /// Compiles `body` as script `sha` (a no-op if already known). Errors are the reply line.
    /// `conduct` gives the script's shared conduct once it compiled (given its flags).
    fn create(&mut self, sha: &str, body: &[u8], conduct: impl FnOnce(u32) -> Arc<Conduct>) -> Result<Script, String> {
        if let Some(script) = self.scripts.get(sha) {
            return Ok(script.clone());
        }
        let (flags, shebang_len) = parse_shebang(body)?;
        let func = self
            .lua
            .load(&*as_text(&body[shebang_len..]))
            .set_name("@user_script")
            .into_function()
            .map_err(|e| format!("ERR Error compiling script (new function): {}", lua_error_text(&e)))?;
        if let Err(e) = func.set_environment(self.env.clone()) {
            return Err(format!("ERR {e}"));
        }
        // In a Lua table, not held by Rust: each value Rust holds takes one of mlua's ~8,000
        // reference slots, and the script cache has no bound (as in Redis 7.0).
        let slot = self.scripts.len() as i64 + 1;
        self.compiled.raw_set(slot, func).map_err(|e| format!("ERR {e}"))?;
        let script = Script { flags, slot, conduct: conduct(flags) };
        self.scripts.insert(sha.to_string(), script.clone());
        self.note_memory();
        Ok(script)
    }
}

impl Vm {
    /// Whether it still counts in INFO's memory (made since its pool's last flush).
    fn counted(&self) -> bool {
        self.pool_epoch.1 == self.pool_epoch.0.load(Ordering::SeqCst)
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        if self.counted() {
            self.memory_gauge.fetch_sub(self.noted_memory.get(), Ordering::Relaxed);
        }
        self.registry.lock().retain(|r| !Arc::ptr_eq(r, &self.run));
    }
}

impl Scripting {
    /// An EVAL VM for one script run (`give_back_eval_vm` after).
    fn take_eval_vm(&self, engine: &Engine) -> Result<Box<Vm>, CmdError> {
        let generation = self.eval_generation.load(Ordering::SeqCst);
        loop {
            let idle = self.eval_vms.take();
            match idle {
                Some(vm) if vm.generation == generation => return Ok(vm),
                Some(stale) => drop(stale),
                None => {
                    return Vm::new(engine, self.eval_vm_bytes.clone(), self.eval_vms.birth(), generation)
                        .map(Box::new)
                        .map_err(|e| CmdError::msg(format!("ERR {e}")))
                }
            }
        }
    }

    fn give_back_eval_vm(&self, vm: Box<Vm>) {
        if vm.generation == self.eval_generation.load(Ordering::SeqCst) {
            self.eval_vms.give_back(vm);
        }
    }

    /// Compiles `body` (SHA `sha`) in `vm` and caches it for every VM: the script's slot and
    /// flags, or the error to reply.
    fn compile(&self, vm: &mut Vm, sha: &str, body: &[u8]) -> Result<Script, CmdError> {
        vm.create(sha, body, |flags| self.register(sha, body, flags)).map_err(CmdError::msg)
    }

    /// Caches a script that compiled (unless another VM did first): its shared conduct.
    fn register(&self, sha: &str, body: &[u8], flags: u32) -> Arc<Conduct> {
        if let Some(source) = self.eval_scripts.read().get(sha) {
            return Arc::clone(&source.conduct);
        }
        let mut scripts = self.eval_scripts.write();
        let source = scripts.entry(sha.to_string()).or_insert_with(|| {
            self.eval_bodies_bytes.fetch_add(body.len(), Ordering::Relaxed);
            Arc::new(ScriptSource { body: body.to_vec(), flags, conduct: Arc::default() })
        });
        let conduct = Arc::clone(&source.conduct);
        self.cached_scripts.store(scripts.len(), Ordering::Relaxed);
        conduct
    }

    /// The compiled script `sha` in `vm`, compiled now from the cache if this VM has not
    /// run it yet; None if the cache does not have it.
    fn cached(&self, vm: &mut Vm, sha: &str) -> Option<Script> {
        if let Some(script) = vm.scripts.get(sha) {
            return Some(script.clone());
        }
        let source = self.eval_scripts.read().get(sha).cloned()?;
        vm.create(sha, &source.body, |_| Arc::clone(&source.conduct)).ok()
    }

    /// A VM with every function library loaded, for one FCALL (`give_back_function_vm`).
    fn take_function_vm(&self, engine: &Engine) -> Result<Box<Vm>, CmdError> {
        let idle = self.function_vms.take();
        let mut vm = match idle {
            Some(vm) => vm,
            None => Box::new(
                Vm::new(engine, self.functions_vm_bytes.clone(), self.function_vms.birth(), u64::MAX)
                    .map_err(|e| CmdError::msg(format!("ERR {e}")))?,
            ),
        };
        if vm.generation != self.libraries_generation.load(Ordering::SeqCst) {
            self.sync_libraries(engine, &mut vm)?;
        }
        Ok(vm)
    }

    /// Brings `vm`'s libraries in line with the registered ones: those gone or changed
    /// go first (so a function that moved to another library is free), then the new and
    /// changed ones load. A FUNCTION LOAD REPLACE costs each VM one compile, not a new VM.
    fn sync_libraries(&self, engine: &Engine, vm: &mut Vm) -> Result<(), CmdError> {
        // The libraries and their generation, read together.
        let (wanted, generation) = {
            let libs = self.libraries.lock();
            let wanted: Vec<(String, Vec<u8>)> =
                libs.libs.iter().map(|(name, lib)| (name.clone(), lib.code.clone())).collect();
            (wanted, self.libraries_generation.load(Ordering::SeqCst))
        };
        let stale: Vec<String> = vm
            .libs
            .libs
            .iter()
            .filter(|(name, lib)| !wanted.iter().any(|(n, code)| n == *name && *code == lib.code))
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            if let Some(lib) = vm.libs.libs.remove(&name) {
                for f in lib.functions {
                    vm.libs.functions.remove(&f);
                }
            }
        }
        let now = engine.clock.now_ms();
        let mut libs = std::mem::take(&mut vm.libs);
        for (name, code) in &wanted {
            if !libs.libs.contains_key(name) {
                if let Err(e) = load_library(vm, &mut libs, code, false, now) {
                    vm.libs = libs;
                    return Err(CmdError::msg(e));
                }
            }
        }
        // A function's conduct is learned across VMs: each VM's copy shares the registered
        // one (FCALL reads it from the VM).
        let registered = self.libraries.lock();
        for (name, function) in libs.functions.iter_mut() {
            if let Some(shared) = registered.functions.get(name) {
                if !Arc::ptr_eq(&function.conduct, &shared.conduct) {
                    function.conduct = Arc::clone(&shared.conduct);
                }
            }
        }
        drop(registered);
        vm.libs = libs;
        vm.generation = generation;
        Ok(())
    }

    fn give_back_function_vm(&self, vm: Box<Vm>) {
        self.function_vms.give_back(vm);
    }

    /// The function libraries changed: each function VM loads the changes when next used.
    fn libraries_changed(&self) {
        self.libraries_generation.fetch_add(1, Ordering::SeqCst);
    }
}

/// Redis's Lua parses every chunk as text, so a body starting with ESC (a bytecode
/// signature) fails at that byte instead of loading crafted bytecode; a space in front gives
/// Lua 5.1 the same error at the same line.
fn as_text(code: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if code.first() == Some(&0x1b) {
        std::borrow::Cow::Owned([&b" "[..], code].concat())
    } else {
        std::borrow::Cow::Borrowed(code)
    }
}

/// The message of a Lua error without mlua's decorations.
fn lua_error_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => lua_error_text(cause),
        other => other.to_string(),
    }
}

/// Parses a `#!lua flags=...` first line: the flags and how many bytes to skip (the line
/// feed stays so line numbers are kept).
fn parse_shebang(body: &[u8]) -> Result<(u32, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((flag::EVAL_COMPAT, 0));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid script shebang".into());
    };
    let parts = quince_resp::split_args(&body[..end]).unwrap_or_default();
    if parts.is_empty() {
        return Err("ERR Invalid engine in script shebang".into());
    }
    if parts[0] != b"#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {}", String::from_utf8_lossy(&parts[0])));
    }
    let mut flags = 0;
    for part in &parts[1..] {
        if let Some(list) = part.strip_prefix(b"flags=") {
            // `flags=` alone: no flags (sdssplitlen of an empty string has no parts).
            for name in list.split(|&b| b == b',').filter(|_| !list.is_empty()) {
                match FLAG_NAMES.iter().find(|(n, _)| n.as_bytes() == name) {
                    Some((_, f)) => flags |= f,
                    None => {
                        return Err(format!("ERR Unexpected flag in script shebang: {}", String::from_utf8_lossy(name)))
                    }
                }
            }
        } else {
            return Err(format!("ERR Unknown lua shebang option: {}", String::from_utf8_lossy(part)));
        }
    }
    Ok((flags, end))
}

// ---------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------

/// An error line's code and message as a script's error table holds them: `-CODE msg`
/// splits at the first space, a line without a code gets ERR; line ends are trimmed.
fn error_parts(text: &[u8]) -> (&[u8], &[u8]) {
    let (code, msg): (&[u8], &[u8]) = match text.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", text),
    };
    let is_end = |b: &u8| *b == b'\r' || *b == b'\n';
    let start = msg.iter().position(|b| !is_end(b)).unwrap_or(msg.len());
    let end = msg.iter().rposition(|b| !is_end(b)).map_or(start, |i| i + 1);
    (code, &msg[start..end.max(start)])
}

/// How deep a script's reply may nest: Redis fails with "reached lua stack limit" where
/// its conversion runs out of Lua stack (LUAI_MAXCSTACK), 7,995 levels down.
const REPLY_MAX_DEPTH: usize = 7995;

/// Writes a Lua value as the script's reply (luaReplyToRedisReply). Iterative, holding one
/// element at a time: a reply may be millions of elements long or thousands of levels deep
/// without growing the thread's stack or mlua's reference stack.
fn lua_to_reply(lua: &Lua, classify: &Function, value: Value, out: &mut dyn ReplySink, script_resp: u8) {
    /// An aggregate being written: its elements, fetched already (a short array), or its
    /// table (maps and sets flattened to arrays of keys, or of keys and values, by the
    /// prelude) with the next index and the last. Past `HELD_IN_RUST` levels the tables
    /// wait in a Lua table instead (`deep`): each value Rust holds takes a slot of mlua's
    /// reference stack, which has about 8,000.
    enum Open {
        Fetched(std::vec::IntoIter<Value>),
        Table { table: Option<Table>, next: usize, last: usize },
    }
    const HELD_IN_RUST: usize = 64;
    const FETCHED_LEVELS: usize = 16;
    // PERF: one call (`classify`) classifies a table and hands over a short array's
    // elements (instead of a lookup per special key and per element, each taking mlua's
    // lock).
    let mut open: Vec<Open> = Vec::new();
    let mut deep: Option<Table> = None;
    let mut value = Some(value);
    loop {
        let Some(v) = value.take() else {
            let depth = open.len();
            let Some(top) = open.last_mut() else { return };
            match top {
                Open::Fetched(elements) => match elements.next() {
                    Some(element) => value = Some(element),
                    None => {
                        open.pop();
                    }
                },
                Open::Table { table, next, last } => {
                    if *next > *last {
                        open.pop();
                        continue;
                    }
                    let element = match (&*table, &deep) {
                        (Some(t), _) => t.raw_get::<Value>(*next),
                        (None, Some(d)) => d.raw_get::<Table>(depth).and_then(|t| t.raw_get::<Value>(*next)),
                        (None, None) => Ok(Value::Nil),
                    };
                    value = Some(element.unwrap_or(Value::Nil));
                    *next += 1;
                }
            }
            continue;
        };
        if open.len() >= REPLY_MAX_DEPTH {
            // Redis writes this error in place of the value and goes on with the next one
            // (the aggregates already announced still need their elements).
            out.error("ERR reached lua stack limit");
            continue;
        }
        // (Fetched elements each hold a reference: only near the top, so deep replies don't
        // run out of mlua's reference slots.)
        let fetch = open.len() < FETCHED_LEVELS;
        match write_lua_value(lua, classify, v, out, script_resp, fetch) {
            None => {}
            Some(Aggregate::Fetched(elements)) => open.push(Open::Fetched(elements.into_iter())),
            Some(Aggregate::Table(table, last)) => {
                let depth = open.len() + 1;
                let table = if depth <= HELD_IN_RUST {
                    Some(table)
                } else {
                    if deep.is_none() {
                        deep = lua.create_table().ok();
                    }
                    match &deep {
                        Some(d) if d.raw_set(depth, table.clone()).is_ok() => None,
                        // Its header is written: hold it here rather than lose its elements.
                        _ => Some(table),
                    }
                };
                open.push(Open::Table { table, next: 1, last });
            }
        }
    }
}

/// An aggregate whose header `write_lua_value` wrote: its elements, or the table holding
/// them with their count.
enum Aggregate {
    Fetched(Vec<Value>),
    Table(Table, usize),
}

/// Writes a scalar or a special table (`err`, `ok`, `double`...) and returns None, or writes
/// an aggregate's header and returns its elements (`fetch`: as values when the array is
/// short, else as its table).
fn write_lua_value(
    lua: &Lua,
    classify: &Function,
    value: Value,
    out: &mut dyn ReplySink,
    script_resp: u8,
    fetch: bool,
) -> Option<Aggregate> {
    let replace_crlf = |s: &[u8]| -> String {
        String::from_utf8_lossy(s).chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect()
    };
    match value {
        Value::String(s) => out.bulk(&s.as_bytes()),
        Value::Boolean(b) => {
            if script_resp == 2 {
                if b {
                    out.integer(1)
                } else {
                    out.null()
                }
            } else {
                out.boolean(b)
            }
        }
        Value::Integer(i) => out.integer(i),
        // (long long) of the double, as x86-64 converts it (NaN and out of range: INT64_MIN).
        Value::Number(n) => out.integer(luaapi::c_double_to_i64(n)),
        Value::Table(t) => {
            // (If Lua can't classify or copy it, the element is an error: a count written
            // for it would not match what follows.)
            const NO_COPY: &str = "ERR internal error while converting the script's reply";
            let Ok(found) = classify.call::<mlua::MultiValue>((&t, fetch)) else {
                out.error(NO_COPY);
                return None;
            };
            let mut found = found.into_iter();
            let kind = match found.next() {
                Some(Value::Integer(k)) => k,
                Some(Value::Number(k)) => k as i64,
                _ => -1,
            };
            let mut text = || match found.next() {
                Some(Value::String(s)) => Some(s),
                _ => None,
            };
            let flatten = |t: &Table, with_values: bool| -> Option<(Table, usize)> {
                let f: Function = lua.named_registry_value("quince_flatten").ok()?;
                let flat: Table = f.call((t.clone(), with_values)).ok()?;
                let len = flat.raw_len();
                Some((flat, len))
            };
            match kind {
                1 => out.error(&replace_crlf(&text()?.as_bytes())),
                2 => out.simple(&replace_crlf(&text()?.as_bytes())),
                3 => match found.next() {
                    Some(Value::Number(d)) => out.double(d),
                    Some(Value::Integer(i)) => out.double(i as f64),
                    _ => out.error(NO_COPY),
                },
                4 => out.big_number(replace_crlf(&text()?.as_bytes()).as_bytes()),
                5 => {
                    let (Some(f), Some(s)) = (text(), text()) else {
                        out.error(NO_COPY);
                        return None;
                    };
                    let f = f.as_bytes();
                    let mut format = *b"txt";
                    for (i, b) in f.iter().take(3).enumerate() {
                        format[i] = *b;
                    }
                    out.verbatim(&format, &s.as_bytes());
                }
                6 | 7 => {
                    let Some(Value::Table(inner)) = found.next() else {
                        out.error(NO_COPY);
                        return None;
                    };
                    let Some((flat, len)) = flatten(&inner, kind == 6) else {
                        out.error(NO_COPY);
                        return None;
                    };
                    if kind == 6 {
                        out.map(len / 2);
                    } else {
                        out.set(len);
                    }
                    return Some(Aggregate::Table(flat, len));
                }
                0 => {
                    let len = match found.next() {
                        Some(Value::Integer(n)) => n.max(0) as usize,
                        Some(Value::Number(n)) => n.max(0.0) as usize,
                        _ => 0,
                    };
                    out.array(len);
                    let elements: Vec<Value> = found.collect();
                    if elements.len() == len && len > 0 {
                        return Some(Aggregate::Fetched(elements));
                    }
                    return Some(Aggregate::Table(t, len));
                }
                _ => out.error(NO_COPY),
            }
        }
        _ => out.null(),
    }
    None
}

// ---------------------------------------------------------------------------------------
// Running scripts
// ---------------------------------------------------------------------------------------

/// One script invocation's view of the caller.
struct Invocation<'a> {
    engine: &'a Engine,
    /// The state of the VM running the script, as other threads see it.
    run: &'a RunState,
    /// The script runs alongside others, holding `held` (the shards of its declared keys,
    /// ascending, then any it locked since): the outer command's locks, which its commands
    /// use instead of locking their own.
    alongside: bool,
    held: Option<std::ptr::NonNull<LockedShards<'static>>>,
    /// Its commands are checked against `declared`: it runs alongside, or its conduct is
    /// being learned (its first run).
    checks: bool,
    /// The shards of the script's declared keys (and, alongside, those it locked since).
    declared: SmallVec<[usize; 4]>,
    /// A command reached beyond `declared` (or may touch any key): the script is `wide`.
    reached_beyond: bool,
    /// Something other clients could see happened (a write, a PUBLISH): from then on the
    /// script can't stop and run again alone.
    effects: bool,
    /// It stopped to run again alone (see `RunState::escalated`).
    escalated: bool,
    client: &'a mut Client,
    /// The script's name (SHA or function) and command, for `RunState::set_current`.
    name: &'a str,
    command: &'a [&'a [u8]],
    /// The script's keys and arguments (the runner hands them to it).
    keys: &'a [&'a [u8]],
    argv: &'a [&'a [u8]],
    /// An EVAL script (KEYS and ARGV are globals), not a library function.
    eval_mode: bool,
    read_only: bool,
    resp: u8,
    /// The script's `allow-oom` flag.
    allow_oom: bool,
    /// Used memory was over `maxmemory` when the script started.
    oom_at_start: bool,
    /// A write command ran (later writes can't be refused: the script is half done).
    wrote: bool,
    /// The last redis.call's reply (RESP) or error text, kept from call to call so a call
    /// allocates nothing once warm.
    reply: Vec<u8>,
    error_text: String,
    /// Numbers given to redis.call, formatted.
    numbers: Vec<Vec<u8>>,
    /// The Lua debugger runs this script (SCRIPT DEBUG SYNC): commands are logged.
    debugging: bool,
}

/// What a redis.call came to (its bytes are in the invocation's `reply` or `error_text`).
#[derive(Clone, Copy)]
enum CallOutcome {
    /// The command's reply, RESP in `reply`.
    Reply,
    /// Refused by the Lua API itself (`error_text`): an error table for redis.call to raise.
    Fail,
    /// Refused before running (`error_text`, counted already): an error table the script's
    /// own error reply does not count again.
    Reject,
    /// No script runs on this thread.
    NoScript,
    /// The script must stop and run again alone (`Invocation::escalated`).
    Escalate,
}

/// The error that stops a script running alongside others when it reaches beyond its
/// declared keys before writing (it then runs again alone; nobody sees this error).
const REACH_STOP: &str = "ERR script stopped to run again alone";

/// The error of a script running alongside others that, after writing, needs a shard
/// another client holds for more than `REACH_WAIT`. Only a script that kept to its
/// declared keys in every earlier run and then takes a new path can meet it.
const REACH_ERROR: &str = "ERR script accessed a key outside the shards of its declared keys, after writing, while another client held it; declare every key a script uses";

/// How long such a script waits for a shard another client holds.
const REACH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

thread_local! {
    /// The script this thread runs now (see `Invocation::installed`).
    static INVOCATION: std::cell::Cell<Option<std::ptr::NonNull<Invocation<'static>>>> =
        const { std::cell::Cell::new(None) };
}

/// Puts back what `INVOCATION` held, on return or unwind.
struct RestoreInvocation(Option<std::ptr::NonNull<Invocation<'static>>>);

impl Drop for RestoreInvocation {
    fn drop(&mut self) {
        INVOCATION.with(|c| c.set(self.0));
    }
}

impl Invocation<'_> {
    /// Runs `f` with `self` as the running script the VM's callbacks (redis.call,
    /// redis.setresp...) act on.
    fn installed<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let ptr = std::ptr::NonNull::from(self).cast::<Invocation<'static>>();
        // The lifetime is erased; the pointer leaves the thread-local (on return or unwind)
        // before the borrow of `self` ends.
        let _restore = RestoreInvocation(INVOCATION.with(|c| c.replace(Some(ptr))));
        f()
    }

    /// Runs `f` on the running script's state; an error outside a script. Taken out of the
    /// thread-local meanwhile, so a nested use finds none instead of aliasing it.
    fn with_current<R>(f: impl FnOnce(&mut Invocation<'_>) -> mlua::Result<R>) -> mlua::Result<R> {
        let Some(mut ptr) = INVOCATION.with(|c| c.take()) else {
            return Err(lua_err("This Redis API is only available while a script runs"));
        };
        let _restore = RestoreInvocation(Some(ptr));
        // SAFETY: installed by `installed`, whose frame is below this one and whose
        // invocation nothing else touches while the script runs.
        f(unsafe { ptr.as_mut() })
    }

    /// redis.call / redis.pcall: runs one command, leaving its reply or error in `self`.
    /// Under the Lua debugger, while the user steps, the command and its reply are logged.
    fn call(&mut self, args: &[&[u8]]) -> CallOutcome {
        if !self.debugging || !ldb::stepping() {
            return self.call_command(args);
        }
        ldb::log_command(args);
        let outcome = self.call_command(args);
        match outcome {
            CallOutcome::Reply => ldb::log_reply(&self.reply),
            CallOutcome::Fail | CallOutcome::Reject => ldb::log_error(&self.error_text),
            CallOutcome::NoScript | CallOutcome::Escalate => {}
        }
        outcome
    }

    fn call_command(&mut self, args: &[&[u8]]) -> CallOutcome {
        if args.is_empty() {
            return self.fail("Please specify at least one argument for this redis lib call");
        }
        // Refused before running (Redis's scriptCall checks): the error counts in the error
        // stats and as a rejected call of the command, and the script's own error reply
        // does not count it again.
        let spec = match self.engine.table.resolve(args) {
            Resolved::Found(spec) => spec,
            _ => return self.reject(None, "ERR Unknown Redis command called from script"),
        };
        let argc = args.len() as i32;
        if (spec.arity > 0 && spec.arity != argc) || argc < -spec.arity {
            return self.reject(Some(spec), "ERR Wrong number of args calling Redis command from script");
        }
        if spec.has_flag(crate::command::flags::NOSCRIPT) && !self.engine.scripting.disable_deny.load(Ordering::Relaxed)
        {
            return self.reject(Some(spec), "ERR This Redis command is not allowed from script");
        }
        let writes = spec.has_flag(crate::command::flags::WRITE);
        if self.read_only && (writes || has_may_replicate_flag(spec)) {
            return self.reject(Some(spec), "ERR Write commands are not allowed from read-only scripts.");
        }
        // Redis's scriptVerifyWriteCommandAllow: no write on a read-only replica (an EVAL
        // without shebang gets this far there, in a transaction too), unless the script
        // wrote already or its client is the master's link.
        if writes && !self.wrote && !self.client.must_obey && self.engine.read_only_replica() {
            return self.reject(Some(spec), "READONLY You can't write against a read only replica.");
        }
        // No write while persistence is failing (MISCONF), checked until the script wrote:
        // in Redis the state can't change while a script runs, here another thread's failed
        // write can set it, and a script refused half way would not be atomic.
        if writes && !self.wrote {
            if let Some(line) = self.engine.persistence().and_then(|p| p.write_refusal()) {
                return self.reject(Some(spec), &line);
            }
        }
        // Once the script wrote, it can't stop half way for the server's state.
        if writes && !self.wrote && !self.engine.enough_good_replicas() {
            return self.reject(Some(spec), NOREPLICAS_ERROR);
        }
        if !self.allow_oom && !self.wrote && self.oom_at_start && spec.has_flag(crate::command::flags::DENYOOM) {
            return self.reject(Some(spec), OOM_ERROR);
        }
        // (Redis's scriptVerifyAllowStale.)
        if !spec.has_flag(crate::command::flags::STALE) && self.engine.running_stale() {
            return self.reject(Some(spec), "ERR Can not execute the command on a stale replica");
        }
        // (Redis's scriptVerifyACL: the user of the client running the script.)
        if !self.client.user.is_unrestricted() && !self.client.must_obey {
            if let Err(denial) = self.engine.acl_check(self.client, spec, args) {
                let context = crate::cmd::acl::context::LUA;
                self.engine.acl_log_denial(self.client, spec, args, denial, context);
                let text = format!("ERR The user executing the script {}", denial.script_message());
                return self.reject(Some(spec), &text);
            }
        }
        // (Redis's scriptVerifyClusterState: only this node's keys, and one slot unless
        // the script may cross slots.)
        if self.engine.cluster.enabled() && !self.client.must_obey {
            if let Some(line) = self.engine.cluster_refusal(self.client, spec, args, None, true) {
                return self.reject(Some(spec), &line);
            }
        }
        if self.escalated {
            return CallOutcome::Escalate;
        }
        // The shards this command needs, against those the script holds or declared.
        let mut shards: SmallVec<[usize; 4]> = SmallVec::new();
        if self.checks {
            spec.each_key_position(args, |p| shards.push(self.engine.keyspace.shard_of(args[p])));
        }
        let confined = crate::exec::confined(spec, !shards.is_empty());
        let within = !self.checks || confined && shards.iter().all(|s| self.declared.contains(s));
        if !within {
            self.reached_beyond = true;
            if self.alongside {
                if !self.effects {
                    // Nothing happened yet that anyone could see: stop, and run again alone.
                    self.escalated = true;
                    self.run.escalated.store(true, Ordering::SeqCst);
                    return CallOutcome::Escalate;
                }
                if !confined || !self.lock_more(&shards) {
                    return self.reject(Some(spec), REACH_ERROR);
                }
            }
        }
        // Found once: the executor uses them instead of finding them again.
        let known = self.checks.then_some(shards);
        self.effects |= writes || has_may_replicate_flag(spec);
        if writes {
            self.wrote = true;
            self.run.wrote.store(true, Ordering::SeqCst);
        }
        let protocol = if self.resp == 3 { Protocol::Resp3 } else { Protocol::Resp2 };
        let saved = self.client.protocol;
        self.client.protocol = protocol;
        self.reply.clear();
        {
            let mut enc = Encoder::new(&mut self.reply, protocol);
            // SAFETY: the outer command's locks (see `held`), alive until the script ends;
            // nothing else uses them while this command runs.
            let mut held = self.held.map(|mut p| unsafe { &mut p.as_mut()[..] });
            let shard = known.as_ref().and_then(|shards| shards.first().copied());
            if !self.engine.fast_in_script(self.client, args, spec, shard, held.as_deref_mut(), &mut enc) {
                self.engine.execute_in_script(self.client, args, spec, &mut enc, held, known);
            }
        }
        self.client.protocol = saved;
        CallOutcome::Reply
    }

    /// Alongside, after writing: locks the shards of `shards` the script does not hold
    /// yet, without ever blocking on one (the script holds shards out of order now), so
    /// that two such scripts wanting each other's shards give up instead of deadlocking.
    fn lock_more(&mut self, shards: &[usize]) -> bool {
        let Some(held) = self.held else { return false };
        for &shard in shards {
            if self.declared.contains(&shard) {
                continue;
            }
            let deadline = std::time::Instant::now() + REACH_WAIT;
            let guard = loop {
                if let Some(guard) = self.engine.keyspace.try_lock(shard) {
                    break guard;
                }
                if std::time::Instant::now() >= deadline {
                    return false;
                }
                std::thread::yield_now();
            };
            // SAFETY: the guard borrows the engine's keyspace, which outlives the script;
            // it joins the outer command's locks and is released with them.
            let guard: parking_lot::MutexGuard<'static, crate::keyspace::Shard> = unsafe { std::mem::transmute(guard) };
            unsafe { held.as_ptr().as_mut().expect("non-null").push((shard, ShardAccess::Locked(guard))) };
            self.declared.push(shard);
        }
        true
    }

    fn fail(&mut self, text: &str) -> CallOutcome {
        self.error_text.clear();
        self.error_text.push_str(text);
        CallOutcome::Fail
    }

    fn reject(&mut self, spec: Option<&CommandSpec>, text: &str) -> CallOutcome {
        if let Some(spec) = spec {
            self.engine.observe.commands[spec.id].rejected_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.engine.observe.errors.record(text);
        self.error_text.clear();
        self.error_text.push('-');
        self.error_text.push_str(text);
        CallOutcome::Reject
    }
}

/// redis.call: runs a command; an error (refused, or the command's error reply) is raised.
unsafe extern "C-unwind" fn c_redis_call(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    // SAFETY: called by Lua as a C function (see `redis_call`).
    unsafe { redis_call(l, true) }
}

/// redis.pcall: as redis.call, but an error is returned as its error table.
unsafe extern "C-unwind" fn c_redis_pcall(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    // SAFETY: called by Lua as a C function (see `redis_call`).
    unsafe { redis_call(l, false) }
}

/// The work of redis.call and redis.pcall (Redis's luaRedisGenericCommand): a raw C
/// function, so arguments are read in place from the Lua strings on the stack and the
/// reply is built on the Lua stack directly, with no per-argument copies or references.
///
/// Two phases: `run_call` (Rust values with destructors live only in there) runs the
/// command; then this frame, which holds only plain data, builds the result and raises it
/// if it is an error and `raise`: a Lua error (raised, or out of memory) may unwind it.
///
/// # Safety
/// `l` is the state Lua called a C function with; the invocation pointer is valid while the
/// script runs (`installed`), and only this thread uses it.
unsafe fn redis_call(l: *mut mlua::ffi::lua_State, raise: bool) -> std::ffi::c_int {
    use mlua::ffi;
    unsafe {
        let outcome = run_call(l);
        // The arguments are done with (the reply is in the invocation's buffer): the result
        // is built on an empty frame, so a call with thousands of arguments (`unpack` of a
        // big table, up to Lua's C stack limit) still has room for it.
        ffi::lua_settop(l, 0);
        let inv = match INVOCATION.with(|c| c.get()) {
            Some(ptr) if !matches!(outcome, CallOutcome::NoScript) => ptr.as_ptr(),
            _ => {
                push_error_table(l, b"ERR This Redis API is only available while a script runs", false);
                return if raise { ffi::lua_error(l) } else { 1 };
            }
        };
        let failed = match outcome {
            CallOutcome::Reply => {
                let reply: &[u8] = &(*inv).reply;
                if reply.is_empty() {
                    ffi::lua_pushnil(l);
                    false
                } else {
                    let mut pos = 0;
                    push_resp(l, reply, &mut pos);
                    if reply[0] == b'-' {
                        // An error reply (an `{err = ...}` table), counted by the command.
                        mark(l, c"ignore_error_stats_update");
                        true
                    } else {
                        false
                    }
                }
            }
            CallOutcome::Fail => {
                let text: &str = &(*inv).error_text;
                push_error_table(l, text.as_bytes(), false);
                true
            }
            CallOutcome::Reject => {
                let text: &str = &(*inv).error_text;
                push_error_table(l, text.as_bytes(), true);
                true
            }
            CallOutcome::Escalate => {
                push_error_table(l, REACH_STOP.as_bytes(), true);
                ffi::lua_error(l)
            }
            CallOutcome::NoScript => unreachable!(),
        };
        if failed && raise {
            ffi::lua_error(l)
        } else {
            1
        }
    }
}

/// Phase one of `redis_call`: reads the arguments and runs the command.
///
/// # Safety
/// `l` is the state `redis_call` was called with, the command's arguments on its stack.
unsafe fn run_call(l: *mut mlua::ffi::lua_State) -> CallOutcome {
    use mlua::ffi;
    unsafe {
        let n = ffi::lua_gettop(l);
        let mut slices: SmallVec<[(*const u8, usize); 8]> = SmallVec::new();
        let mut bad = false;
        let outcome = Invocation::with_current(|inv| {
            let mut numbers = std::mem::take(&mut inv.numbers);
            let mut used_numbers = 0;
            // (string pointer, length) or (null, index into `numbers`).
            for i in 1..=n {
                match ffi::lua_type(l, i) {
                    ffi::LUA_TSTRING => {
                        let mut len = 0usize;
                        let ptr = ffi::lua_tolstring(l, i, &mut len);
                        // The stack keeps the string alive while the command runs.
                        slices.push((ptr as *const u8, len));
                    }
                    ffi::LUA_TNUMBER => {
                        if numbers.len() == used_numbers {
                            numbers.push(Vec::new());
                        }
                        let buf = &mut numbers[used_numbers];
                        buf.clear();
                        quince_resp::format_double(ffi::lua_tonumber(l, i), buf);
                        slices.push((std::ptr::null(), used_numbers));
                        used_numbers += 1;
                    }
                    _ => {
                        bad = true;
                        break;
                    }
                }
            }
            let outcome = if bad {
                inv.fail("Lua redis lib command arguments must be strings or integers")
            } else {
                let args: SmallVec<[&[u8]; 8]> = slices
                    .iter()
                    .map(
                        |&(ptr, len)| {
                            if ptr.is_null() {
                                &numbers[len][..]
                            } else {
                                std::slice::from_raw_parts(ptr, len)
                            }
                        },
                    )
                    .collect();
                inv.call(&args)
            };
            inv.numbers = numbers;
            Ok(outcome)
        });
        outcome.unwrap_or(CallOutcome::NoScript)
    }
}

/// Sets `t[name] = true` on the table on top of the stack.
///
/// # Safety
/// A table is on top of `l`'s stack.
unsafe fn mark(l: *mut mlua::ffi::lua_State, name: &std::ffi::CStr) {
    use mlua::ffi;
    unsafe {
        ffi::lua_pushstring(l, name.as_ptr());
        ffi::lua_pushboolean(l, 1);
        ffi::lua_rawset(l, -3);
    }
}

/// Pushes `{err = "<CODE> <message>"}` for an error line (`-CODE message` or a bare
/// message, which gets ERR), marked as already counted in the error stats when `counted`.
///
/// # Safety
/// `l` has room for three more values.
unsafe fn push_error_table(l: *mut mlua::ffi::lua_State, text: &[u8], counted: bool) {
    use mlua::ffi;
    let (code, msg) = error_parts(text);
    unsafe {
        ffi::lua_createtable(l, 0, 3);
        ffi::lua_pushstring(l, c"err".as_ptr());
        ffi::lua_pushlstring(l, code.as_ptr() as *const _, code.len());
        ffi::lua_pushlstring(l, c" ".as_ptr(), 1);
        ffi::lua_pushlstring(l, msg.as_ptr() as *const _, msg.len());
        ffi::lua_concat(l, 3);
        ffi::lua_rawset(l, -3);
        if counted {
            mark(l, c"ignore_error_stats_update");
        }
    }
}

/// Pushes one RESP reply from `buf` at `pos` as the Lua value Redis gives scripts (as
/// `resp_to_lua`, straight onto the stack).
///
/// # Safety
/// `l` is a running state; nested replies check the stack's room as they go.
unsafe fn push_resp(l: *mut mlua::ffi::lua_State, buf: &[u8], pos: &mut usize) {
    use mlua::ffi;
    let line_end = buf[*pos..].windows(2).position(|w| w == b"\r\n").map(|p| *pos + p).unwrap_or(buf.len());
    let kind = buf[*pos];
    let line = &buf[*pos + 1..line_end];
    *pos = (line_end + 2).min(buf.len());
    let num = || std::str::from_utf8(line).ok().and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
    unsafe {
        let push_bytes = |b: &[u8]| ffi::lua_pushlstring(l, b.as_ptr() as *const _, b.len());
        // {key = <value on top>}
        let single = |key: &std::ffi::CStr| {
            ffi::lua_createtable(l, 0, 1);
            ffi::lua_pushstring(l, key.as_ptr());
            ffi::lua_pushvalue(l, -3);
            ffi::lua_rawset(l, -3);
            ffi::lua_replace(l, -2);
        };
        if ffi::lua_checkstack(l, 4) == 0 {
            ffi::lua_pushnil(l);
            return;
        }
        match kind {
            b'+' => {
                push_bytes(line);
                single(c"ok");
            }
            b'-' => {
                push_bytes(line);
                single(c"err");
            }
            b':' => ffi::lua_pushnumber(l, num() as f64),
            b'$' | b'=' => {
                let n = num();
                if n < 0 {
                    ffi::lua_pushboolean(l, 0);
                    return;
                }
                let data = &buf[*pos..*pos + n as usize];
                *pos += n as usize + 2;
                if kind == b'=' {
                    ffi::lua_createtable(l, 0, 2);
                    ffi::lua_pushstring(l, c"format".as_ptr());
                    push_bytes(&data[..3.min(data.len())]);
                    ffi::lua_rawset(l, -3);
                    ffi::lua_pushstring(l, c"string".as_ptr());
                    push_bytes(data.get(4..).unwrap_or_default());
                    ffi::lua_rawset(l, -3);
                    single(c"verbatim_string");
                } else {
                    push_bytes(data);
                }
            }
            b'*' | b'~' | b'%' | b'>' => {
                let n = num();
                if n < 0 {
                    ffi::lua_pushboolean(l, 0);
                    return;
                }
                let n = n as i32;
                ffi::lua_createtable(l, if kind == b'*' || kind == b'>' { n } else { 0 }, 0);
                for i in 0..n {
                    match kind {
                        b'%' => {
                            push_resp(l, buf, pos);
                            push_resp(l, buf, pos);
                            raw_set_checked(l);
                        }
                        b'~' => {
                            push_resp(l, buf, pos);
                            ffi::lua_pushboolean(l, 1);
                            raw_set_checked(l);
                        }
                        _ => {
                            push_resp(l, buf, pos);
                            ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
                        }
                    }
                }
                match kind {
                    b'%' => single(c"map"),
                    b'~' => single(c"set"),
                    _ => {}
                }
            }
            b'_' => ffi::lua_pushnil(l),
            b'#' => ffi::lua_pushboolean(l, (line == b"t") as i32),
            b',' => {
                let d = match line {
                    b"inf" => f64::INFINITY,
                    b"-inf" => f64::NEG_INFINITY,
                    _ => std::str::from_utf8(line).ok().and_then(|t| t.parse::<f64>().ok()).unwrap_or(f64::NAN),
                };
                ffi::lua_pushnumber(l, d);
                single(c"double");
            }
            b'(' => {
                push_bytes(line);
                single(c"big_number");
            }
            // Attributes are not shown to scripts: the reply that follows them is.
            b'|' => {
                for _ in 0..num().max(0) * 2 {
                    push_resp(l, buf, pos);
                    ffi::lua_settop(l, -2);
                }
                push_resp(l, buf, pos);
            }
            _ => ffi::lua_pushnil(l),
        }
    }
}

/// `t[k] = v` for the table under a key and a value on top of the stack; a nil or NaN key
/// (which Lua refuses) drops the pair, as mlua's raw_set would have failed.
///
/// # Safety
/// A table, a key and a value are the top three values of `l`'s stack.
unsafe fn raw_set_checked(l: *mut mlua::ffi::lua_State) {
    use mlua::ffi;
    unsafe {
        let key_ok = match ffi::lua_type(l, -2) {
            ffi::LUA_TNIL => false,
            ffi::LUA_TNUMBER => !ffi::lua_tonumber(l, -2).is_nan(),
            _ => true,
        };
        if key_ok {
            ffi::lua_rawset(l, -3);
        } else {
            ffi::lua_settop(l, -3);
        }
    }
}

/// What to run: an EVAL script (KEYS and ARGV are globals) or a library function (they
/// are its arguments).
enum Target<'a> {
    /// The script's slot in `Vm::compiled`.
    Eval(i64),
    Function(&'a Function),
}

/// Runs a script or function named `name` (sha or function name) with its flags, writing
/// its reply (or error) to `out`.
#[allow(clippy::too_many_arguments)]
fn run_script(
    ctx: &mut Ctx<'_>,
    vm: &mut Vm,
    target: Target,
    command: &[&[u8]],
    name: &str,
    flags: u32,
    keys: &[&[u8]],
    argv: &[&[u8]],
    read_only: bool,
    conduct: Option<Arc<Conduct>>,
    out: &mut dyn ReplySink,
) -> CmdResult {
    let oom_at_start = ctx.engine.out_of_memory();
    // Redis's scriptPrepareForRun, in its order, for scripts with flags (a shebang, or a
    // function).
    let obeying = ctx.client.must_obey;
    if flags & flag::EVAL_COMPAT == 0 && flags & flag::NO_CLUSTER != 0 && ctx.engine.cluster.enabled() {
        return Err(CmdError::msg("ERR Can not run script on cluster, 'no-cluster' flag is set."));
    }
    ctx.client.script_cross_slot = flags & (flag::EVAL_COMPAT | flag::ALLOW_CROSS_SLOT) != 0;
    // (Redis refuses a script with flags before it starts: the command's flags come from the
    // script's, and it is not `stale` then; one without a shebang is refused by
    // scriptPrepareForRun, with the same text.)
    if flags & flag::ALLOW_STALE == 0 && ctx.engine.running_stale() {
        return Err(CmdError::msg("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."));
    }
    if flags & flag::EVAL_COMPAT == 0 && flags & flag::NO_WRITES == 0 {
        if !obeying && ctx.engine.read_only_replica() {
            // (As MASTERDOWN above: refused as a write command before the script starts.)
            return Err(CmdError::msg("READONLY You can't write against a read only replica."));
        }
        if read_only {
            return Err(CmdError::msg("ERR Can not execute a script with write flag using *_ro command."));
        }
        if !ctx.engine.enough_good_replicas() {
            return Err(CmdError::msg(NOREPLICAS_ERROR));
        }
        // Only reachable inside MULTI: outside, the command was refused as DENYOOM.
        if flags & flag::ALLOW_OOM == 0 && oom_at_start {
            return Err(CmdError::msg(
                "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'",
            ));
        }
    }
    let read_only = read_only || (flags & flag::EVAL_COMPAT == 0 && flags & flag::NO_WRITES != 0);
    let eval_mode = matches!(target, Target::Eval(_));

    let engine = ctx.engine;
    let run: &RunState = &vm.run;
    // PERF: plain stores, published by `running`'s release (a SeqCst store is a locked
    // instruction, and this runs for every script). Other threads read these only for a
    // busy script, after the hook's SeqCst `busy` swap; the name and command are recorded
    // then too (`RunState::set_current`), not on every run.
    run.killed.store(false, Ordering::Relaxed);
    run.wrote.store(false, Ordering::Relaxed);
    run.eval_mode.store(eval_mode, Ordering::Relaxed);
    // The time the script's commands see: its command's start (no clock read of its own).
    run.start_ms.store(ctx.now_ms, Ordering::Relaxed);
    run.threshold_ms.store(engine.hot.busy_reply_threshold_ms.load(Ordering::Relaxed), Ordering::Relaxed);
    run.running.store(true, Ordering::Release);
    // Under the Lua debugger the script runs alone and counts as busy from the start:
    // other clients get BUSY while the user steps (Redis blocks the whole server).
    let debugging = eval_mode && ctx.client.script_debug && ldb::active();
    if debugging {
        run.set_current(name, command);
        engine.scripting.debug_sessions.fetch_add(1, Ordering::SeqCst);
        run.busy.store(true, Ordering::SeqCst);
        vm.busy_scripts.fetch_add(1, Ordering::SeqCst);
        let timeout_ms = engine.hot.busy_reply_threshold_ms.load(Ordering::Relaxed);
        let context =
            ldb::HookContext { hooks: vm.hooks.clone(), env: vm.env.clone(), run: Arc::clone(&vm.run), timeout_ms };
        ldb::install_hook(&vm.lua, context);
    }

    let saved_db = ctx.client.db;
    let saved_reply_mode = ctx.client.reply_mode;
    let was_in_exec = ctx.client.in_exec;
    ctx.client.reply_mode = crate::exec::ReplyMode::On;
    ctx.client.in_exec = true;
    ctx.client.script_now_ms = ctx.now_ms;
    let alongside = std::mem::take(&mut ctx.client.script_alongside);
    let checks = alongside || conduct.as_ref().is_some_and(|c| !c.seen.load(Ordering::Relaxed));
    let mut declared: SmallVec<[usize; 4]> = SmallVec::new();
    if checks {
        declared.extend(keys.iter().map(|k| engine.keyspace.shard_of(k)));
        declared.sort_unstable();
        declared.dedup();
    }
    let held = alongside.then(|| std::ptr::NonNull::from(&mut ctx.locked).cast());
    // Each run starts replicating its writes everywhere (redis.set_repl changes it).
    ctx.client.script_repl = crate::persistence::targets::ALL;
    let mut invocation = Invocation {
        engine,
        run,
        name,
        command,
        alongside,
        held,
        checks,
        declared,
        reached_beyond: false,
        effects: false,
        escalated: false,
        client: &mut *ctx.client,
        keys,
        argv,
        eval_mode,
        read_only,
        resp: 2,
        allow_oom: flags & flag::ALLOW_OOM != 0,
        oom_at_start,
        wrote: false,
        reply: std::mem::take(&mut vm.call_buffers.0),
        error_text: String::new(),
        numbers: std::mem::take(&mut vm.call_buffers.1),
        debugging,
    };
    let runner = &vm.runner;
    let result: mlua::Result<(bool, Value)> = invocation.installed(|| match target {
        Target::Eval(slot) => runner.call(slot),
        Target::Function(f) => runner.call(f),
    });
    let result = result.map(|(ok, value)| (ok, value, invocation.resp));
    let (escalated, reached_beyond) = (invocation.escalated, invocation.reached_beyond);
    vm.call_buffers = (std::mem::take(&mut invocation.reply), std::mem::take(&mut invocation.numbers));
    drop(invocation);
    ctx.client.in_exec = was_in_exec;
    ctx.client.reply_mode = saved_reply_mode;
    ctx.client.select(saved_db);
    let killed = run.killed.load(Ordering::Acquire);
    run.running.store(false, Ordering::Release);
    // (Only the hook on this thread sets it.)
    if run.busy.load(Ordering::Relaxed) {
        run.busy.store(false, Ordering::SeqCst);
        engine.scripting.busy_scripts.fetch_sub(1, Ordering::SeqCst);
    }
    if debugging {
        engine.scripting.debug_sessions.fetch_sub(1, Ordering::SeqCst);
    }
    if killed || escalated || debugging {
        run.escalated.store(false, Ordering::Relaxed);
        vm.install_script_hook();
    }
    vm.note_memory();
    if let Some(conduct) = &conduct {
        // (Read first: the common case writes nothing to the shared line.)
        if reached_beyond && !conduct.wide.load(Ordering::Relaxed) {
            conduct.wide.store(true, Ordering::Relaxed);
        }
        if !conduct.seen.load(Ordering::Relaxed) {
            conduct.seen.store(true, Ordering::Relaxed);
        }
    }
    if !was_in_exec {
        if alongside {
            // Served once the script's shards are unlocked (its effects are handed over
            // before, under them, by the executor).
            ctx.defer_client_ready();
        } else {
            engine.serve_script_ready(ctx.client);
        }
    }
    if escalated {
        // Nothing to reply: the executor runs it again alone.
        ctx.client.script_escalated = true;
        return Ok(());
    }
    let clean =
        |text: String| -> String { text.chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect() };
    match result {
        Ok((true, value, resp)) => {
            // A returned error table is the script's error reply, counted in the error stats
            // unless the command that produced it counted it already.
            if let Value::Table(t) = &value {
                if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
                    let text = clean(String::from_utf8_lossy(&e.as_bytes()).into_owned());
                    if matches!(t.raw_get::<Value>("ignore_error_stats_update"), Ok(Value::Boolean(true))) {
                        return failed_uncounted(ctx, out, &text);
                    }
                    return Err(CmdError::msg(text));
                }
            }
            lua_to_reply(&vm.lua, &vm.classify, value, out, resp);
            Ok(())
        }
        Ok((false, Value::Table(err), _)) => {
            let msg: Option<mlua::String> = err.raw_get("err").ok();
            let mut text = msg.map(|m| String::from_utf8_lossy(&m.as_bytes()).into_owned()).unwrap_or_default();
            if killed {
                text = "ERR Script killed by user with SCRIPT KILL...".into();
            }
            let source: Option<mlua::String> = err.raw_get("source").ok();
            let line: Option<i64> = err.raw_get("line").ok();
            if let (Some(source), Some(line)) = (source, line) {
                text.push_str(&format!(" script: {name}, on {}:{line}.", String::from_utf8_lossy(&source.as_bytes())));
            }
            if matches!(err.raw_get::<Value>("ignore_error_stats_update"), Ok(Value::Boolean(true))) && !killed {
                return failed_uncounted(ctx, out, &clean(text));
            }
            Err(CmdError::msg(clean(text)))
        }
        Ok((false, other, _)) => {
            let msg = match other {
                Value::String(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
                _ => "execution failure".into(),
            };
            let msg: String = msg.chars().take(100).collect();
            Err(CmdError::msg(clean(format!("ERR Error running script {name}, {msg}"))))
        }
        Err(e) => Err(CmdError::msg(clean(format!("ERR Error running script {name}, {}", lua_error_text(&e))))),
    }
}

/// The script fails with an error some command inside it already counted in the error
/// stats: the script command counts as failed, the error is not counted twice.
fn failed_uncounted(ctx: &mut Ctx<'_>, out: &mut dyn ReplySink, text: &str) -> CmdResult {
    ctx.engine.observe.commands[ctx.spec.id].failed_calls.fetch_add(1, Ordering::Relaxed);
    out.error(text);
    Ok(())
}

/// EVAL / EVALSHA and their _RO variants.
fn eval_generic(
    ctx: &mut Ctx<'_>,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    by_sha: bool,
    read_only: bool,
) -> CmdResult {
    ctx.engine.feed_monitors_before_script(ctx.client, ctx.spec, args);
    if ctx.client.script_debug {
        if by_sha {
            if args[1].len() != 40 {
                return Err(CmdError::msg("NOSCRIPT No matching script. Please use EVAL."));
            }
            return Err(CmdError::msg("ERR Please use EVAL instead of EVALSHA for debugging"));
        }
        return debugged_eval(ctx, args, out, read_only);
    }
    eval_script(ctx, args, out, by_sha, read_only)
}

/// EVAL under the Lua debugger (SCRIPT DEBUG SYNC, ldb.rs): the session wraps the whole
/// command, and the client's connection closes after its reply (Redis's
/// evalGenericCommandWithDebugging).
fn debugged_eval(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, read_only: bool) -> CmdResult {
    if !debug_link() {
        return Err(CmdError::msg("ERR the Lua debugger needs a client connection to talk over"));
    }
    let warn = |line: &str| {
        if let Some(log) = ctx.engine.scripting.warning_log.get() {
            log(line);
        }
    };
    warn("Redis synchronous debugging eval session started");
    ldb::begin(args[1]);
    let result = eval_script(ctx, args, out, false, read_only);
    ldb::end();
    warn("Redis synchronous debugging eval session ended");
    ctx.client.close_after_reply = true;
    result
}

/// EVAL / EVALSHA and their _RO variants, once past the debugger's checks.
fn eval_script(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, by_sha: bool, read_only: bool) -> CmdResult {
    // A SHA of the wrong length can't match: NOSCRIPT before the key count is read, as
    // Redis's evalShaCommand answers.
    if by_sha && args[1].len() != 40 {
        return Err(CmdError::msg("NOSCRIPT No matching script. Please use EVAL."));
    }
    let numkeys = parse_i64(args[2])?;
    if numkeys > args.len() as i64 - 3 {
        return Err(CmdError::msg("ERR Number of keys can't be greater than number of args"));
    }
    if numkeys < 0 {
        return Err(CmdError::msg("ERR Number of keys can't be negative"));
    }
    let noscript = || CmdError::msg("NOSCRIPT No matching script. Please use EVAL.");
    // PERF: EVALSHA's sha is lowercased on the stack, not in a new String.
    let mut lowered = [0u8; 40];
    let sha: &str = if by_sha {
        if args[1].len() != 40 {
            return Err(noscript());
        }
        lowered.copy_from_slice(args[1]);
        lowered.make_ascii_lowercase();
        std::str::from_utf8(&lowered).map_err(|_| noscript())?
    } else {
        // Computed already when the command chose how to lock (`script_runs_alongside`).
        eval_sha(args[1], &mut lowered);
        std::str::from_utf8(&lowered).map_err(|_| noscript())?
    };
    let scripting = &ctx.engine.scripting;
    let mut vm = scripting.take_eval_vm(ctx.engine)?;
    let script = if by_sha {
        scripting.cached(&mut vm, sha).ok_or_else(noscript)
    } else {
        scripting.compile(&mut vm, sha, args[1])
    };
    let result = script.and_then(|Script { flags, slot, conduct }| {
        let numkeys = numkeys as usize;
        let keys = &args[3..3 + numkeys];
        let argv = &args[3 + numkeys..];
        let conduct = Some(conduct);
        run_script(ctx, &mut vm, Target::Eval(slot), args, sha, flags, keys, argv, read_only, conduct, out)
    });
    scripting.give_back_eval_vm(vm);
    result
}

/// EVAL script numkeys [key ...] [arg ...] — depends on the script.
fn eval(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    eval_generic(ctx, args, out, false, false)
}

/// EVALSHA sha1 numkeys [key ...] [arg ...] — depends on the script.
fn evalsha(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    eval_generic(ctx, args, out, true, false)
}

/// EVAL_RO script numkeys [key ...] [arg ...] — depends on the script.
fn eval_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    eval_generic(ctx, args, out, false, true)
}

/// EVALSHA_RO sha1 numkeys [key ...] [arg ...] — depends on the script.
fn evalsha_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    eval_generic(ctx, args, out, true, true)
}

/// SCRIPT LOAD script — O(N) in the script's length.
fn script_load(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let sha = sha1hex(args[2]);
    let scripting = &ctx.engine.scripting;
    let mut vm = scripting.take_eval_vm(ctx.engine)?;
    let compiled = scripting.compile(&mut vm, &sha, args[2]);
    scripting.give_back_eval_vm(vm);
    compiled?;
    out.bulk(sha.as_bytes());
    Ok(())
}

/// SCRIPT EXISTS sha1 [sha1 ...] — O(N).
fn script_exists(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let scripts = ctx.engine.scripting.eval_scripts.read();
    out.array(args.len() - 2);
    for sha in &args[2..] {
        let known = std::str::from_utf8(sha).is_ok_and(|s| scripts.contains_key(s));
        out.integer(known as i64);
    }
    Ok(())
}

/// SCRIPT FLUSH [ASYNC|SYNC] — O(N) in the number of cached scripts.
fn script_flush(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match args {
        [_, _] => {}
        [_, _, mode] if is(mode, "ASYNC") || is(mode, "SYNC") => {}
        _ => return Err(CmdError::msg("ERR SCRIPT FLUSH only support SYNC|ASYNC option")),
    }
    let scripting = &ctx.engine.scripting;
    scripting.eval_generation.fetch_add(1, Ordering::SeqCst);
    scripting.eval_scripts.write().clear();
    // Dropping the idle VMs gives back their memory (running ones go when they finish).
    scripting.eval_vms.clear(&scripting.eval_vm_bytes);
    scripting.cached_scripts.store(0, Ordering::Relaxed);
    scripting.eval_bodies_bytes.store(0, Ordering::Relaxed);
    out.simple("OK");
    Ok(())
}

/// SCRIPT KILL and FUNCTION KILL.
fn kill(ctx: &mut Ctx<'_>, out: &mut dyn ReplySink, is_eval: bool) -> CmdResult {
    let Some(run) = ctx.engine.scripting.busy_run() else {
        return Err(CmdError::msg("NOTBUSY No scripts in execution right now."));
    };
    if run.wrote.load(Ordering::SeqCst) {
        return Err(CmdError::msg(
            "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
        ));
    }
    let running_eval = run.eval_mode.load(Ordering::SeqCst);
    if is_eval && !running_eval {
        return Err(CmdError::msg(BUSY_FUNCTION));
    }
    if !is_eval && running_eval {
        return Err(CmdError::msg(BUSY_EVAL));
    }
    run.killed.store(true, Ordering::SeqCst);
    out.simple("OK");
    Ok(())
}

/// SCRIPT KILL — O(1).
fn script_kill(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    kill(ctx, out, true)
}

/// SCRIPT DEBUG YES|SYNC|NO — O(1). SYNC debugs the client's next EVAL (ldb.rs); YES
/// (Redis's forked session, whose changes are rolled back) is refused: quince can't fork a
/// process that runs on while the child debugs.
fn script_debug(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if is(args[2], "no") {
        ctx.client.script_debug = false;
        out.simple("OK");
        return Ok(());
    }
    if is(args[2], "sync") {
        ctx.client.script_debug = true;
        out.simple("OK");
        return Ok(());
    }
    if is(args[2], "yes") {
        return Err(CmdError::msg(
            "ERR SCRIPT DEBUG YES (a forked session whose changes are rolled back) is not supported by quince; use SCRIPT DEBUG SYNC",
        ));
    }
    Err(CmdError::msg("ERR Use SCRIPT DEBUG YES/SYNC/NO"))
}

/// SCRIPT HELP — O(1).
fn script_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "SCRIPT",
        &[
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
        ],
    )
}

// ---------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------

/// Runs `f` (which may change the libraries) on the registering VM and the libraries.
fn function_vm<R>(engine: &Engine, f: impl FnOnce(&mut Vm, &mut Libraries) -> R) -> Result<R, CmdError> {
    let mut guard = engine.scripting.fvm.lock();
    if guard.is_none() {
        *guard = Some(
            Vm::new(engine, engine.scripting.functions_vm_bytes.clone(), (Arc::default(), 0), 0)
                .map_err(|e| CmdError::msg(format!("ERR {e}")))?,
        );
    }
    let mut libs = engine.scripting.libraries.lock();
    let result = f(guard.as_mut().expect("just created"), &mut libs);
    // The registering VM's functions are never called from here; their handles go while
    // its lock is held.
    for function in libs.functions.values_mut() {
        function.callback = None;
    }
    engine.scripting.libraries_changed();
    Ok(result)
}

/// What FUNCTION RESTORE (or loading a snapshot) does with libraries that already exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionRestorePolicy {
    /// A library that exists already is an error (FUNCTION RESTORE's default).
    Append,
    /// Libraries of the payload replace those of the same name.
    Replace,
    /// Every existing library goes first.
    Flush,
}

impl Engine {
    /// Loads function libraries from their code, all or nothing (FUNCTION RESTORE, loading
    /// a snapshot), as Redis's functionRestoreCommand and libraryJoin do. The error is the
    /// reply line (`ERR Library x already exists`, a compile error ...).
    pub fn restore_function_libraries(&self, codes: &[Vec<u8>], policy: FunctionRestorePolicy) -> Result<(), String> {
        self.restore_functions_then(codes, None, policy)
    }

    /// As `restore_function_libraries`; `trailing` is an error met reading the payload
    /// after `codes`, reported unless compiling one of `codes` failed first (Redis loads a
    /// payload's libraries one by one as it reads them).
    fn restore_functions_then(
        &self,
        codes: &[Vec<u8>],
        trailing: Option<String>,
        policy: FunctionRestorePolicy,
    ) -> Result<(), String> {
        let now_ms = self.clock.now_ms();
        function_vm(self, |vm, libs| {
            let mut fresh = Libraries::default();
            for code in codes {
                load_library(vm, &mut fresh, code, false, now_ms)?;
            }
            if let Some(e) = trailing {
                return Err(format!("ERR {e}"));
            }
            if policy == FunctionRestorePolicy::Flush {
                *libs = fresh;
                return Ok(());
            }
            join_libraries(libs, fresh, policy == FunctionRestorePolicy::Replace)
        })
        .map_err(|e| e.render("function"))?
    }
}

/// Redis's libraryJoin: adds `fresh` to `libs`, all or nothing. A library that exists is
/// an error unless `replace`; a function name another library owns always is.
fn join_libraries(libs: &mut Libraries, fresh: Libraries, replace: bool) -> Result<(), String> {
    let mut replaced = Vec::new();
    for name in fresh.libs.keys() {
        if libs.libs.contains_key(name) {
            if !replace {
                return Err(format!("ERR Library {name} already exists"));
            }
            replaced.push(name.clone());
        }
    }
    for (fname, info) in &fresh.functions {
        if libs.functions.get(fname).is_some_and(|f| !replaced.contains(&f.library)) {
            return Err(format!("ERR Function {} already exists", info.display));
        }
    }
    for name in replaced {
        if let Some(old) = libs.libs.remove(&name) {
            for f in old.functions {
                libs.functions.remove(&f);
            }
        }
    }
    libs.libs.extend(fresh.libs);
    libs.functions.extend(fresh.functions);
    Ok(())
}

/// Parses the `#!lua name=<lib>` first line of a library: (engine, name, code from the
/// line feed on).
/// A library's engine, name and code.
type LibraryMetadata<'a> = (Vec<u8>, Vec<u8>, &'a [u8]);

fn library_metadata(payload: &[u8]) -> Result<LibraryMetadata<'_>, String> {
    if !payload.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let Some(end) = payload.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid library metadata".into());
    };
    let parts = quince_resp::split_args(&payload[..end]).unwrap_or_default();
    if parts.is_empty() {
        return Err("ERR Invalid library metadata".into());
    }
    let engine = parts[0][2..].to_vec();
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err("ERR Invalid metadata value, name argument was given multiple times".into());
            }
            name = Some(part[5..].to_vec());
            continue;
        }
        return Err(format!("ERR Invalid metadata value given: {}", String::from_utf8_lossy(part)));
    }
    let Some(name) = name else { return Err("ERR Library name was not given".into()) };
    Ok((engine, name, &payload[end..]))
}

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// Loads a library: compiles and runs its code so it registers its functions.
fn load_library(
    vm: &mut Vm,
    libs: &mut Libraries,
    payload: &[u8],
    replace: bool,
    now_ms: i64,
) -> Result<String, String> {
    let (engine, name, code) = library_metadata(payload)?;
    if !valid_name(&name) {
        return Err("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into());
    }
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!("ERR Engine '{}' not found", String::from_utf8_lossy(&engine)));
    }
    let name = String::from_utf8_lossy(&name).into_owned();
    if libs.libs.contains_key(&name) && !replace {
        return Err(format!("ERR Library '{name}' already exists"));
    }
    let lua = &vm.lua;
    let chunk = lua
        .load(&*as_text(code))
        .set_name("@user_function")
        .into_function()
        .map_err(|e| format!("ERR Error compiling function: {}", lua_error_text(&e)))?;
    let lerr = |e: mlua::Error| format!("ERR {}", lua_error_text(&e));
    chunk.set_environment(vm.env.clone()).map_err(lerr)?;
    let registered = lua.create_table().map_err(lerr)?;
    vm.hooks.raw_set("registered", registered.clone()).map_err(lerr)?;
    vm.hooks.raw_get::<Function>("set_loading").and_then(|f| f.call::<()>(true)).map_err(lerr)?;
    let deadline = now_ms + 500;
    lua.set_hook(HookTriggers::new().every_nth_instruction(100_000), move |_, _| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64);
        if now.is_ok_and(|n| n > deadline) {
            Err(lua_err("FUNCTION LOAD timeout"))
        } else {
            Ok(mlua::VmState::Continue)
        }
    });
    let result: mlua::Result<(bool, Value)> = vm.runner.call(chunk);
    vm.install_script_hook();
    vm.note_memory();
    let _ = vm.hooks.raw_get::<Function>("set_loading").and_then(|f| f.call::<()>(false));
    let _ = vm.hooks.raw_set("registered", Value::Nil);
    match result {
        Ok((true, _)) => {}
        Ok((false, Value::Table(err))) => {
            let msg: Option<mlua::String> = err.raw_get("err").ok();
            let msg = msg.map(|m| String::from_utf8_lossy(&m.as_bytes()).into_owned()).unwrap_or_default();
            return Err(format!("ERR Error registering functions: {msg}"));
        }
        Ok((false, _)) => return Err("ERR Error registering functions: execution failure".into()),
        Err(e) => return Err(format!("ERR Error registering functions: {}", lua_error_text(&e))),
    }
    let mut new_functions = Vec::new();
    for pair in registered.pairs::<String, Table>() {
        let (fname, info) = pair.map_err(lerr)?;
        let callback: Function = info.raw_get(1).map_err(lerr)?;
        let flags: f64 = info.raw_get(2).map_err(lerr)?;
        let description: Option<String> = info.raw_get(3).map_err(lerr)?;
        let display: String = info.raw_get(4).map_err(lerr)?;
        new_functions.push((
            fname,
            FunctionInfo {
                display,
                library: name.clone(),
                flags: flags as u32,
                description,
                callback: Some(VmFunction(callback)),
                conduct: Arc::default(),
            },
        ));
    }
    if new_functions.is_empty() {
        return Err("ERR No functions registered".into());
    }
    for (fname, _) in &new_functions {
        if let Some(existing) = libs.functions.get(fname).filter(|f| f.library != name) {
            return Err(format!("ERR Function {} already exists", existing.display));
        }
    }
    if let Some(old) = libs.libs.remove(&name) {
        for f in old.functions {
            libs.functions.remove(&f);
        }
    }
    let mut names: Vec<String> = new_functions.iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    for (fname, info) in new_functions {
        libs.functions.insert(fname, info);
    }
    libs.libs.insert(name.clone(), Library { code: payload.to_vec(), functions: names });
    Ok(name)
}

impl Scripting {
    /// The code of every loaded function library (the `#!lua name=...` payload FUNCTION
    /// LOAD was given), in library name order: what FUNCTION DUMP and snapshots save.
    pub fn library_codes(&self) -> Vec<Vec<u8>> {
        self.libraries.lock().libs.values().map(|lib| lib.code.clone()).collect()
    }

    /// Deletes every function library (FUNCTION FLUSH; emptying the dataset to reload it).
    pub fn flush_libraries(&self) {
        *self.libraries.lock() = Libraries::default();
        *self.fvm.lock() = None;
        self.libraries_changed();
        // A fresh start for the VMs too, as Redis makes a new Lua state.
        self.function_vms.clear(&self.functions_vm_bytes);
    }
}

/// Loads a function library from its code, as FUNCTION LOAD [REPLACE] does (for the RDB
/// loader). Returns the library name, or the error FUNCTION LOAD would reply.
pub fn load_library_code(engine: &Engine, code: &[u8], replace: bool) -> Result<String, String> {
    let now = engine.clock.now_ms();
    function_vm(engine, |vm, libs| load_library(vm, libs, code, replace, now)).map_err(|e| e.to_string())?
}

/// FUNCTION LOAD [REPLACE] function-code — O(1) (compilation aside).
fn function_load(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut replace = false;
    let mut pos = 2;
    while pos < args.len() - 1 {
        if is(args[pos], "replace") {
            replace = true;
            pos += 1;
            continue;
        }
        return Err(CmdError::msg(format!("ERR Unknown option given: {}", String::from_utf8_lossy(args[pos]))));
    }
    if pos >= args.len() {
        return Err(CmdError::msg("ERR Function code is missing"));
    }
    let now = ctx.now_ms;
    let name =
        function_vm(ctx.engine, |vm, libs| load_library(vm, libs, args[pos], replace, now))?.map_err(CmdError::msg)?;
    ctx.dirty(1);
    out.bulk(name.as_bytes());
    Ok(())
}

/// FUNCTION DELETE library-name — O(1).
fn function_delete(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let name = String::from_utf8_lossy(args[2]).into_owned();
    let mut libs = ctx.engine.scripting.libraries.lock();
    let Some(lib) = libs.libs.remove(&name) else {
        return Err(CmdError::msg("ERR Library not found"));
    };
    for f in lib.functions {
        libs.functions.remove(&f);
    }
    drop(libs);
    ctx.engine.scripting.libraries_changed();
    ctx.dirty(1);
    out.simple("OK");
    Ok(())
}

/// FUNCTION FLUSH [ASYNC|SYNC] — O(N) in the number of functions.
/// FUNCTION DUMP — O(N) in the number of functions: every library in Redis's payload
/// format (the persistence layer encodes it, as DUMP's).
fn function_dump(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
    let codes = ctx.engine.scripting.library_codes();
    out.bulk(&layer.function_payload(ctx.engine, &codes).map_err(CmdError::msg)?);
    Ok(())
}

/// FUNCTION RESTORE serialized-value [FLUSH|APPEND|REPLACE] — O(N) in the number of
/// functions of the payload; all or nothing.
fn function_restore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    if args.len() > 4 {
        return Err(CmdError::msg(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
            crate::error::truncate_c(args[1], 128)
        )));
    }
    let policy = match args.get(3) {
        None => FunctionRestorePolicy::Append,
        Some(p) if p.eq_ignore_ascii_case(b"append") => FunctionRestorePolicy::Append,
        Some(p) if p.eq_ignore_ascii_case(b"replace") => FunctionRestorePolicy::Replace,
        Some(p) if p.eq_ignore_ascii_case(b"flush") => FunctionRestorePolicy::Flush,
        Some(_) => {
            return Err(CmdError::msg(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ))
        }
    };
    let layer = ctx.engine.persistence().ok_or_else(|| CmdError::msg("ERR persistence is not enabled"))?;
    let codes = layer.function_payload_codes(args[2]).map_err(|e| CmdError::msg(format!("ERR {e}")))?;
    ctx.engine.restore_function_libraries(&codes, policy).map_err(CmdError::msg)?;
    ctx.dirty(1);
    out.simple("OK");
    Ok(())
}

fn function_flush(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    match args {
        [_, _] => {}
        [_, _, mode] if is(mode, "ASYNC") || is(mode, "SYNC") => {}
        [_, _, _] => return Err(CmdError::msg("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")),
        _ => {
            return Err(CmdError::msg(format!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
                crate::error::truncate_c(args[1], 128)
            )))
        }
    }
    ctx.engine.scripting.flush_libraries();
    ctx.dirty(1);
    out.simple("OK");
    Ok(())
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE] — O(N) in the number of functions.
fn function_list(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        if !with_code && is(args[i], "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(args[i], "libraryname") {
            if i >= args.len() - 1 {
                return Err(CmdError::msg("ERR library name argument was not given"));
            }
            i += 1;
            pattern = Some(args[i]);
        } else {
            return Err(CmdError::msg(format!("ERR Unknown argument {}", String::from_utf8_lossy(args[i]))));
        }
        i += 1;
    }
    let libs = ctx.engine.scripting.libraries.lock();
    let selected: Vec<(&String, &Library)> = libs
        .libs
        .iter()
        .filter(|(name, _)| pattern.is_none_or(|p| crate::glob::glob_match(p, name.as_bytes(), false)))
        .collect();
    out.array(selected.len());
    for (name, lib) in selected {
        out.map(if with_code { 4 } else { 3 });
        out.bulk(b"library_name");
        out.bulk(name.as_bytes());
        out.bulk(b"engine");
        out.bulk(b"LUA");
        out.bulk(b"functions");
        out.array(lib.functions.len());
        for fname in &lib.functions {
            let info = &libs.functions[fname];
            out.map(3);
            out.bulk(b"name");
            out.bulk(info.display.as_bytes());
            out.bulk(b"description");
            match &info.description {
                Some(d) => out.bulk(d.as_bytes()),
                None => out.null(),
            }
            out.bulk(b"flags");
            let names: Vec<&str> = FLAG_NAMES.iter().filter(|(_, f)| info.flags & f != 0).map(|(n, _)| *n).collect();
            out.set(names.len());
            for n in names {
                out.simple(n);
            }
        }
        if with_code {
            out.bulk(b"library_code");
            out.bulk(&lib.code);
        }
    }
    Ok(())
}

/// FUNCTION STATS — O(1).
fn function_stats(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let scripting = &ctx.engine.scripting;
    let busy = scripting.busy_run();
    if busy.as_ref().is_some_and(|run| run.eval_mode.load(Ordering::SeqCst)) {
        return Err(CmdError::msg(BUSY_EVAL));
    }
    out.map(2);
    out.bulk(b"running_script");
    let current = busy.as_ref().map(|run| (run.current.lock().clone(), run.start_ms.load(Ordering::SeqCst)));
    match current {
        None => out.null(),
        Some(((name, command), start_ms)) => {
            out.map(3);
            out.bulk(b"name");
            out.bulk(name.as_bytes());
            out.bulk(b"command");
            out.array(command.len());
            for a in &command {
                out.bulk(a);
            }
            out.bulk(b"duration_ms");
            out.integer(ctx.engine.clock.now_ms() - start_ms);
        }
    }
    out.bulk(b"engines");
    out.map(1);
    out.bulk(b"LUA");
    out.map(2);
    let libs = scripting.libraries.lock();
    out.bulk(b"libraries_count");
    out.integer(libs.libs.len() as i64);
    out.bulk(b"functions_count");
    out.integer(libs.functions.len() as i64);
    Ok(())
}

/// FUNCTION KILL — O(1).
fn function_kill(ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    kill(ctx, out, false)
}

/// FUNCTION HELP — O(1).
fn function_help(_ctx: &mut Ctx<'_>, _args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    super::server::reply_subcommand_help(
        out,
        "FUNCTION",
        &[
            "LOAD [REPLACE] <FUNCTION CODE>",
            "    Create a new library with the given library name and code.",
            "DELETE <LIBRARY NAME>",
            "    Delete the given library.",
            "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
            "    Return general information on all the libraries:",
            "    * Library name",
            "    * The engine used to run the Library",
            "    * Library description",
            "    * Functions list",
            "    * Library code (if WITHCODE is given)",
            "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
            "STATS",
            "    Return information about the current function running:",
            "    * Function name",
            "    * Command used to run the function",
            "    * Duration in MS that the function is running",
            "    If no function is running, return nil",
            "    In addition, returns a list of available engines.",
            "KILL",
            "    Kill the current running function.",
            "FLUSH [ASYNC|SYNC]",
            "    Delete all the libraries.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the libraries.",
            "    * SYNC: Synchronously flush the libraries.",
            "DUMP",
            "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
            "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
            "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
            "    control how to handle existing libraries (default APPEND):",
            "    * FLUSH: delete all existing libraries.",
            "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
            "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
            "      libraries with the new libraries (notice that even on this option there is a chance of failure",
            "      in case of functions name collision with another library).",
        ],
    )
}

/// FCALL / FCALL_RO function numkeys [key ...] [arg ...].
fn fcall_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, read_only: bool) -> CmdResult {
    ctx.engine.feed_monitors_before_script(ctx.client, ctx.spec, args);
    // ASCII only, as Redis compares function names. PERF: lowercased on the stack; names
    // are letters, digits and underscores, so one that isn't UTF-8 is simply not found.
    let mut lowered = [0u8; 64];
    let owned;
    let key: &str = if args[1].len() <= lowered.len() {
        let lowered = &mut lowered[..args[1].len()];
        lowered.copy_from_slice(args[1]);
        lowered.make_ascii_lowercase();
        std::str::from_utf8(lowered).unwrap_or("\u{0}")
    } else {
        owned = String::from_utf8_lossy(args[1]).to_ascii_lowercase();
        &owned
    };
    let engine = ctx.engine;
    let scripting = &engine.scripting;
    // The VM's libraries are the registered ones (`take_function_vm` brings them in line),
    // with the registered functions' conduct: no lock of the registry per call.
    let mut vm = scripting.take_function_vm(engine)?;
    let result = fcall_in(ctx, &mut vm, key, args, out, read_only);
    scripting.give_back_function_vm(vm);
    result
}

/// FCALL of function `key` in `vm`: the function is taken out of the VM's table while it
/// runs (it borrows nothing of the VM then) and put back after.
fn fcall_in(
    ctx: &mut Ctx<'_>,
    vm: &mut Vm,
    key: &str,
    args: &[&[u8]],
    out: &mut dyn ReplySink,
    read_only: bool,
) -> CmdResult {
    let Some((key, info)) = vm.libs.functions.remove_entry(key) else {
        return Err(CmdError::msg("ERR Function not found"));
    };
    let result = (|| {
        let callback = info.callback.as_ref().map(|c| &c.0).ok_or_else(|| CmdError::msg("ERR Function not found"))?;
        let numkeys =
            quince_resp::parse_i64_strict(args[2]).ok_or_else(|| CmdError::msg("ERR Bad number of keys provided"))?;
        if numkeys > args.len() as i64 - 3 {
            return Err(CmdError::msg("ERR Number of keys can't be greater than number of args"));
        }
        if numkeys < 0 {
            return Err(CmdError::msg("ERR Number of keys can't be negative"));
        }
        let numkeys = numkeys as usize;
        let (keys, argv) = (&args[3..3 + numkeys], &args[3 + numkeys..]);
        let conduct = Some(Arc::clone(&info.conduct));
        run_script(
            ctx,
            vm,
            Target::Function(callback),
            args,
            &info.display,
            info.flags,
            keys,
            argv,
            read_only,
            conduct,
            out,
        )
    })();
    vm.libs.functions.insert(key, info);
    result
}

/// FCALL function numkeys [key ...] [arg ...] — depends on the function.
fn fcall(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    fcall_generic(ctx, args, out, false)
}

/// FCALL_RO function numkeys [key ...] [arg ...] — depends on the function.
fn fcall_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    fcall_generic(ctx, args, out, true)
}

pub fn register() -> Vec<CommandSpec> {
    let eval_args = |first: &'static str| {
        vec![
            ArgDoc::new(first, ArgType::String),
            ArgDoc::new("numkeys", ArgType::Integer),
            ArgDoc::key("key", 0).optional().multiple(),
            ArgDoc::new("arg", ArgType::String).optional().multiple(),
        ]
    };
    let rw_note = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE";
    vec![
        CommandSpec::new("eval", -3, "noscript skip_monitor no_mandatory_keys stale", "scripting", eval)
            .doc("scripting", "2.6.0", "Execute a Lua script server side", "Depends on the script that is executed.")
            .keys_keynum("RW access update", 2, 0, 1, 1)
            .key_notes(rw_note)
            .args(eval_args("script")),
        CommandSpec::new("evalsha", -3, "noscript skip_monitor no_mandatory_keys stale", "scripting", evalsha)
            .doc("scripting", "2.6.0", "Execute a Lua script server side", "Depends on the script that is executed.")
            .keys_keynum("RW access update", 2, 0, 1, 1)
            .args(eval_args("sha1")),
        CommandSpec::new("eval_ro", -3, "noscript skip_monitor no_mandatory_keys stale readonly", "scripting", eval_ro)
            .doc("scripting", "7.0.0", "Execute a read-only Lua script server side", "Depends on the script that is executed.")
            .keys_keynum("RO access", 2, 0, 1, 1)
            .key_notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")
            .args(eval_args("script")),
        CommandSpec::new("evalsha_ro", -3, "noscript skip_monitor no_mandatory_keys stale readonly", "scripting", evalsha_ro)
            .doc("scripting", "7.0.0", "Execute a read-only Lua script server side", "Depends on the script that is executed.")
            .keys_keynum("RO access", 2, 0, 1, 1)
            .args(eval_args("sha1")),
        CommandSpec::container(
            "script",
            "",
            "",
            vec![
                CommandSpec::new("load", 3, "noscript stale", "scripting", script_load)
                    .doc("scripting", "2.6.0", "Load the specified Lua script into the script cache.", "O(N) with N being the length in bytes of the script body.")
                    .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                    .args(vec![ArgDoc::new("script", ArgType::String)]),
                CommandSpec::new("exists", -3, "noscript", "scripting", script_exists)
                    .doc("scripting", "2.6.0", "Check existence of scripts in the script cache.", "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).")
                    .tips(&["request_policy:all_shards", "response_policy:agg_logical_and"])
                    .args(vec![ArgDoc::new("sha1", ArgType::String).multiple()]),
                CommandSpec::new("flush", -2, "noscript", "scripting", script_flush)
                    .doc("scripting", "2.6.0", "Remove all the scripts from the script cache.", "O(N) with N being the number of scripts in cache")
                    .history(&[("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers.")])
                    .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                    .args(vec![ArgDoc::one_of("async", vec![ArgDoc::token("async", "ASYNC"), ArgDoc::token("sync", "SYNC")])
                        .optional()
                        .since("6.2.0")]),
                CommandSpec::new("kill", 2, "noscript allow_busy", "scripting", script_kill)
                    .doc("scripting", "2.6.0", "Kill the script currently in execution.", "O(1)")
                    .tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
                CommandSpec::new("help", 2, "loading stale", "scripting", script_help)
                    .doc("scripting", "5.0.0", "Show helpful text about the different subcommands", "O(1)"),
                CommandSpec::new("debug", 3, "noscript", "scripting", script_debug)
                    .doc("scripting", "3.2.0", "Set the debug mode for executed scripts.", "O(1)")
                    .args(vec![ArgDoc::one_of(
                        "mode",
                        vec![ArgDoc::token("yes", "YES"), ArgDoc::token("sync", "SYNC"), ArgDoc::token("no", "NO")],
                    )]),
            ],
        )
        .doc("scripting", "2.6.0", "A container for Lua scripts management commands", "Depends on subcommand."),
        CommandSpec::new("fcall", -3, "noscript skip_monitor no_mandatory_keys stale", "scripting", fcall)
            .doc("scripting", "7.0.0", "Invoke a function", "Depends on the function that is executed.")
            .keys_keynum("RW access update", 2, 0, 1, 1)
            .key_notes(rw_note)
            .args(eval_args("function")),
        CommandSpec::new("fcall_ro", -3, "noscript skip_monitor no_mandatory_keys stale readonly", "scripting", fcall_ro)
            .doc("scripting", "7.0.0", "Invoke a read-only function", "Depends on the function that is executed.")
            .keys_keynum("RO access", 2, 0, 1, 1)
            .key_notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")
            .args(eval_args("function")),
        CommandSpec::container(
            "function",
            "",
            "",
            vec![
                CommandSpec::new("load", -3, "noscript write denyoom", "scripting", function_load)
                    .doc("scripting", "7.0.0", "Create a function with the given arguments (name, code, description)", "O(1) (considering compilation time is redundant)")
                    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                    .args(vec![ArgDoc::token("replace", "REPLACE").optional(), ArgDoc::new("function-code", ArgType::String)]),
                CommandSpec::new("delete", 3, "noscript write", "scripting", function_delete)
                    .doc("scripting", "7.0.0", "Delete a function by name", "O(1)")
                    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                    .args(vec![ArgDoc::new("library-name", ArgType::String)]),
                CommandSpec::new("dump", 2, "noscript", "scripting", function_dump).doc(
                    "scripting",
                    "7.0.0",
                    "Dump all functions into a serialized binary payload",
                    "O(N) where N is the number of functions",
                ),
                CommandSpec::new("restore", -3, "noscript write denyoom", "scripting", function_restore)
                    .doc(
                        "scripting",
                        "7.0.0",
                        "Restore all the functions on the given payload",
                        "O(N) where N is the number of functions on the payload",
                    )
                    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                    .args(vec![
                        ArgDoc::new("serialized-value", ArgType::String),
                        ArgDoc::one_of(
                            "policy",
                            vec![
                                ArgDoc::token("flush", "FLUSH"),
                                ArgDoc::token("append", "APPEND"),
                                ArgDoc::token("replace", "REPLACE"),
                            ],
                        )
                        .optional(),
                    ]),
                CommandSpec::new("flush", -2, "noscript write", "scripting", function_flush)
                    .doc("scripting", "7.0.0", "Deleting all functions", "O(N) where N is the number of functions deleted")
                    .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                    .args(vec![ArgDoc::one_of("async", vec![ArgDoc::token("async", "ASYNC"), ArgDoc::token("sync", "SYNC")]).optional()]),
                CommandSpec::new("list", -2, "noscript", "scripting", function_list)
                    .doc("scripting", "7.0.0", "List information about all the functions", "O(N) where N is the number of functions")
                    .tips(&["nondeterministic_output_order"])
                    .args(vec![
                        ArgDoc::new("library-name-pattern", ArgType::String).after("LIBRARYNAME").optional(),
                        ArgDoc::token("withcode", "WITHCODE").optional(),
                    ]),
                CommandSpec::new("stats", 2, "noscript allow_busy", "scripting", function_stats)
                    .doc("scripting", "7.0.0", "Return information about the function currently running (name, description, duration)", "O(1)")
                    .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
                CommandSpec::new("kill", 2, "noscript allow_busy", "scripting", function_kill)
                    .doc("scripting", "7.0.0", "Kill the function currently in execution.", "O(1)")
                    .tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
                CommandSpec::new("help", 2, "loading stale", "scripting", function_help)
                    .doc("scripting", "7.0.0", "Show helpful text about the different subcommands", "O(1)"),
            ],
        )
        .doc("scripting", "7.0.0", "A container for function commands", "Depends on subcommand."),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_body_shas_are_the_bodies_own() {
        let sha = |body: &[u8]| {
            let mut out = [0u8; 40];
            sha1hex_into(body, &mut out);
            out
        };
        // More bodies than entries (so entries are replaced), each seen several times,
        // bodies differing in one byte, and one too long to keep.
        let mut bodies: Vec<Vec<u8>> = (0..200).map(|i| format!("return {i}").into_bytes()).collect();
        bodies.push(b"return 10".to_vec());
        bodies.push(b"return 1O".to_vec());
        bodies.push(vec![b' '; RECENT_BODY_MAX + 1]);
        for round in 0..3 {
            for body in bodies.iter().skip(round) {
                let mut out = [0u8; 40];
                body_sha(body, &mut out);
                assert_eq!(out, sha(body), "{}", String::from_utf8_lossy(&body[..body.len().min(20)]));
            }
        }
        let mut out = [0u8; 40];
        body_sha(b"return 1", &mut out);
        assert_eq!(&out, b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    }

    #[test]
    fn shebang_flags() {
        assert_eq!(parse_shebang(b"return 1"), Ok((flag::EVAL_COMPAT, 0)));
        assert_eq!(parse_shebang(b"#!lua\nreturn 1"), Ok((0, 5)));
        assert_eq!(
            parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1"),
            Ok((flag::NO_WRITES | flag::ALLOW_OOM, 31))
        );
        assert_eq!(parse_shebang(b"#!lua"), Err("ERR Invalid script shebang".into()));
        assert_eq!(parse_shebang(b"#!lua flags=\nreturn 1"), Ok((0, 12)));
        assert_eq!(parse_shebang(b"#!lua flags=x\n"), Err("ERR Unexpected flag in script shebang: x".into()));
        assert_eq!(parse_shebang(b"#!py\n"), Err("ERR Unexpected engine in script shebang: #!py".into()));
        assert_eq!(parse_shebang(b"#!lua a=b\n"), Err("ERR Unknown lua shebang option: a=b".into()));
    }

    #[test]
    fn rand48_matches_redis_sequence() {
        let mut r = Rand48(0x1234_ABCD_330E);
        assert_eq!([r.next(), r.next(), r.next()], [851401618, 1804928587, 758783491]);
        r.seed(0);
        let first = r.next();
        r.seed(0);
        assert_eq!(r.next(), first);
    }

    #[test]
    fn error_tables() {
        let text = |s: &str| {
            let (code, msg) = error_parts(s.as_bytes());
            format!("{} {}", String::from_utf8_lossy(code), String::from_utf8_lossy(msg))
        };
        assert_eq!(text("-WRONGTYPE bad"), "WRONGTYPE bad");
        assert_eq!(text("-NOCODE"), "ERR NOCODE");
        assert_eq!(text("plain\r\n"), "ERR plain");
    }
}
