//! Feeds arbitrary bytes to the cluster bus decoder, and what decodes to a node's state as
//! if a peer had sent it: any input must be dropped or processed, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use quince_cluster::message::{frame_length, Message};
use quince_cluster::state::{Recorder, Settings, State};

fuzz_target!(|data: &[u8]| {
    if data.len() >= 8 {
        let _ = frame_length(&data[..8]);
    }
    let Ok(msg) = Message::decode(data) else { return };
    let mut state = State::new([b'a'; 40], Settings::default(), 1_000_000);
    state.link_accepted(1, 1_000_000);
    // Twice: the second time the sender may be known (a MEET adds it).
    let again = msg.clone();
    state.process(1, msg, 1_000_100, &mut Recorder::default());
    state.link_accepted(2, 1_000_200);
    state.process(2, again, 1_000_300, &mut Recorder::default());
    state.cron(1_100_000, &mut Recorder::default());
});
