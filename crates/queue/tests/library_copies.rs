//! The Go module embeds its own copy of the queue's Lua library (go:embed cannot reach
//! outside the module); it must be this crate's, byte for byte. (The Python package
//! includes this crate's file at build time.)

#[test]
fn the_go_modules_library_is_this_crates() {
    let go = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk/go/quince_queue.lua");
    let copy = std::fs::read_to_string(&go).expect("sdk/go/quince_queue.lua");
    assert!(
        copy == quince_queue::LIBRARY,
        "sdk/go/quince_queue.lua differs from crates/queue/lua/quince_queue.lua: copy it over"
    );
}
