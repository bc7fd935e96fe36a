//! Feeds arbitrary bytes to the request decoder, whole and split at every chunk boundary
//! the input chooses, and checks both ways give the same requests (or the same error).
#![no_main]
use libfuzzer_sys::fuzz_target;
use quince_resp::{Decoded, RequestDecoder};

type Outcome = (Vec<Vec<Vec<u8>>>, Option<quince_resp::ProtocolError>);

fn run(data: &[u8], chunk: usize) -> Outcome {
    // Small bulk limit so the fuzzer reaches the length checks cheaply.
    let mut d = RequestDecoder::new(1 << 20);
    let mut reqs = Vec::new();
    let mut start = 0;
    let mut avail = chunk.min(data.len());
    loop {
        match d.decode(&data[start..avail]) {
            Ok(Decoded::Request { len }) => {
                assert!(len > 0 && start + len <= avail);
                reqs.push(d.args(&data[start..avail]).map(|a| a.to_vec()).collect());
                start += len;
            }
            Ok(Decoded::Empty { len }) => {
                assert!(len > 0 && start + len <= avail);
                start += len;
            }
            Ok(Decoded::Incomplete) => {
                if avail == data.len() {
                    return (reqs, None);
                }
                avail = (avail + chunk).min(data.len());
            }
            Err(e) => return (reqs, Some(e)),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let chunk = usize::from(data[0] % 16) + 1;
    let whole = run(&data[1..], usize::MAX);
    let chunked = run(&data[1..], chunk);
    assert_eq!(whole, chunked);
});
