//! The Go module embeds its own copy of the queue's Lua library (go:embed cannot reach
//! outside the module); it must be this crate's, byte for byte. (The Python package
//! includes this crate's file at build time.) And the library's version must change with
//! its text: clients load theirs only over an older version.

#[test]
fn the_go_modules_library_is_this_crates() {
    let go = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk/go/quince_queue.lua");
    let copy = std::fs::read_to_string(&go).expect("sdk/go/quince_queue.lua");
    assert!(
        copy == quince_queue::LIBRARY,
        "sdk/go/quince_queue.lua differs from crates/queue/lua/quince_queue.lua: copy it over"
    );
}

/// The library's SHA-1 for each VERSION. A change to the Lua file fails this test until
/// VERSION (in the file, and LIBRARY_VERSION in Rust, Python and Go) is bumped and the new
/// hash recorded here, so servers running the old text get the new one.
const RELEASED: &[(i64, &str)] =
    &[(1, "f2707a9442fb746b4d3a92b9f28e597ed2cb3a0f"), (2, "1c1db1775f6d10430a64cf1452dd5a9e8f2d5091")];

#[test]
fn the_library_version_changes_with_its_text() {
    let hash = sha1_smol::Sha1::from(quince_queue::LIBRARY).digest().to_string();
    let (version, pinned) = RELEASED.last().unwrap();
    assert_eq!(*version, quince_queue::LIBRARY_VERSION);
    assert!(
        quince_queue::LIBRARY.contains(&format!("local VERSION = '{version}'")),
        "the Lua file's VERSION is not {version}"
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (file, line) in [
        ("sdk/python/python/quince/queue.py", format!("LIBRARY_VERSION = {version}\n")),
        ("sdk/go/queue.go", format!("const LibraryVersion = {version}\n")),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(text.contains(&line), "{file} does not say {line:?}");
    }
    assert_eq!(
        &hash,
        pinned,
        "the Lua library changed: bump VERSION (Lua, Rust, Python, Go) and add ({}, \"{hash}\") to RELEASED",
        version + 1
    );
}
