//! The job queue's conformance suite (quince-queue) over a network connection: on
//! quince-server, and on a real redis-server 7 as the reference (skipped with a message
//! when redis-server is missing; required in CI).

use quince_queue::RedisStore;
use quince_test_util::{start_quince, start_redis, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

async fn connect(server: ServerProcess) -> Option<(ServerProcess, RedisStore)> {
    let store = RedisStore::connect(&format!("redis://127.0.0.1:{}/", server.port)).await.expect("connect");
    Some((server, store))
}

mod on_quince {
    use super::*;

    async fn setup() -> Option<(ServerProcess, RedisStore)> {
        connect(start_quince(QUINCE, &[])).await
    }

    quince_queue::conformance_tests!(setup);
}

mod on_redis {
    use super::*;

    async fn setup() -> Option<(ServerProcess, RedisStore)> {
        connect(start_redis(&[])?).await
    }

    quince_queue::conformance_tests!(setup);
}
