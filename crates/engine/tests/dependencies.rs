//! The engine must stay free of networking and async runtimes (ARCHITECTURE.md): it is
//! embedded in processes that bring their own. This checks the resolved dependency tree.

#[test]
fn engine_depends_on_no_runtime_or_socket_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "-p", "quince-engine", "-e", "normal", "--prefix", "none", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    for forbidden in ["tokio", "mio", "socket2", "async-std", "quince-server", "signal-hook"] {
        assert!(
            !tree.lines().any(|l| l.split_whitespace().next() == Some(forbidden)),
            "quince-engine depends on {forbidden}:\n{tree}"
        );
    }
    assert!(tree.contains("quince-engine"), "unexpected cargo tree output:\n{tree}");
}
