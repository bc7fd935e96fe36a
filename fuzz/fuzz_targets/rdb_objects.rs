//! Feeds arbitrary bytes to the RDB object decoder (as a RESTORE payload body, under
//! default and tiny encoding thresholds) and to the whole-file loader: any input must give
//! an error or a value, never a panic; a decoded value must encode and decode again to the
//! same content.
#![no_main]
use libfuzzer_sys::fuzz_target;
use quince_engine::types::Limits;
use quince_engine::{Engine, EngineOptions};
use quince_persist::dump::{create_payload, decode_payload};
use quince_persist::rdb::{load_snapshot, LoadOptions, WriteOptions};

fuzz_target!(|data: &[u8]| {
    let tiny = Limits {
        hash_max_listpack_entries: 2,
        set_max_intset_entries: 2,
        zset_max_listpack_entries: 2,
        ..Limits::default()
    };
    for limits in [Limits::default(), tiny] {
        if let Some(value) = decode_payload(data, &limits) {
            let again = create_payload(&value, &WriteOptions::default());
            let back = decode_payload(&again, &limits).expect("a payload quince wrote decodes");
            assert_eq!(back.type_name(), value.type_name());
        }
    }
    if data.starts_with(b"REDIS") {
        let engine = Engine::new(EngineOptions::default());
        let options = LoadOptions { verify_checksum: false, ..LoadOptions::default() };
        let _ = load_snapshot(&engine, data, &options, &mut |_, _| {});
    }
});
