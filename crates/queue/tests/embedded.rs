//! The queue's conformance suite on the embedded Db (no server).

use quince_queue::Embedded;

async fn embedded() -> Option<((), Embedded)> {
    Some(((), Embedded::new(quince::Db::memory())))
}

quince_queue::conformance_tests!(embedded);
