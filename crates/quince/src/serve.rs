//! `Db::serve`: the embedded Db over RESP on a TCP address, so redis-cli and every Redis
//! tool can look inside a running application. A thread per client; requests run through
//! the same engine as the application's own calls (pipelining, blocking commands, pub/sub,
//! MULTI/EXEC, RESP2/RESP3 per connection). For inspection and light use: quince-server is
//! the server built for load.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use quince_engine::{ConnInfo, Engine};
use quince_resp::{Decoded, Encoder, RequestDecoder, DEFAULT_PROTO_MAX_BULK_LEN};
use smallvec::SmallVec;

use crate::Db;

/// A running `Db::serve`; dropping it stops accepting and closes its connections.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    /// The address it listens on (the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept call.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

impl Db {
    /// Serves this Db over RESP on `addr` (e.g. `"127.0.0.1:6390"`, or port 0 for any)
    /// until the returned `Server` is dropped. Connections see database 0 first, as with
    /// Redis, whatever `select` this handle was made with.
    pub fn serve(&self, addr: impl ToSocketAddrs) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let (db, stop) = (self.clone(), stop.clone());
            std::thread::Builder::new().name("quince-serve".into()).spawn(move || {
                let mut connections = Vec::new();
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (db, stop) = (db.clone(), stop.clone());
                    if let Ok(handle) = std::thread::Builder::new()
                        .name("quince-conn".into())
                        .spawn(move || serve_connection(&db, stream, &stop))
                    {
                        connections.push(handle);
                    }
                    connections.retain(|c: &JoinHandle<()>| !c.is_finished());
                }
                for c in connections {
                    let _ = c.join();
                }
            })?
        };
        Ok(Server { addr, stop, acceptor: Some(acceptor) })
    }
}

fn serve_connection(db: &Db, mut stream: TcpStream, stop: &AtomicBool) {
    let engine: &Engine = db.engine();
    let conn = ConnInfo {
        addr: stream.peer_addr().map(|a| a.to_string()).unwrap_or_default(),
        laddr: stream.local_addr().map(|a| a.to_string()).unwrap_or_default(),
        fd: -1,
    };
    let mut client = engine.register_client(conn);
    // Reads time out so messages pushed to a subscriber and a stop are seen promptly.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let _ = stream.set_nodelay(true);
    let mut decoder = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
    let mut input: Vec<u8> = Vec::new();
    let mut start = 0;
    let mut output: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    'connection: while !stop.load(Ordering::SeqCst) && !client.handle.is_killed() {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => input.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => break,
        }
        loop {
            decoder.set_unauthenticated(engine.acl.auth_required(client.authenticated));
            match decoder.decode(&input[start..]) {
                Ok(Decoded::Request { len }) => {
                    let args: SmallVec<[&[u8]; 8]> = decoder.args(&input[start..]).collect();
                    let protocol = client.protocol;
                    if args.first().is_some_and(|name| name.eq_ignore_ascii_case(b"SHUTDOWN")) {
                        // The application owns the Db's life: stop the Server or drop the Db.
                        Encoder::new(&mut output, protocol)
                            .error(b"ERR SHUTDOWN is not available on an embedded Db (the application stops it)");
                        start += len;
                        continue;
                    }
                    engine.execute(&mut client, &args, &mut Encoder::new(&mut output, protocol));
                    start += len;
                    if client.blocked.is_some() {
                        // BLPOP & co: the connection waits for its reply (its later
                        // requests wait in the buffer, as in Redis).
                        if let Ok(reply) = db.wait_blocked_bytes(&mut client) {
                            output.extend_from_slice(&reply);
                        }
                    }
                    if client.close_after_reply {
                        let _ = stream.write_all(&output);
                        break 'connection;
                    }
                }
                Ok(Decoded::Empty { len }) => start += len,
                Ok(Decoded::Incomplete) => break,
                Err(e) => {
                    let mut text = b"ERR ".to_vec();
                    text.extend_from_slice(&e.message());
                    Encoder::new(&mut output, client.protocol).error(&text);
                    let _ = stream.write_all(&output);
                    break 'connection;
                }
            }
        }
        if start > 0 {
            input.drain(..start);
            start = 0;
        }
        // Messages PUBLISH pushed to this client (subscriptions, MONITOR).
        output.extend_from_slice(&client.handle.take_pushed());
        if !output.is_empty() {
            // Replies wait while the log can't be written (a full disk): they may depend
            // on writes that are not on disk yet.
            while db.make_durable().is_err() {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            if stream.write_all(&output).is_err() {
                break;
            }
            output.clear();
        }
    }
    engine.unregister_client(&client);
}
