//! TLS on `tls-port`: with a rustls client of our own, `redis-cli --tls` and redis-py
//! (`ssl=True`), client certificates (`tls-auth-clients`), plain and TLS ports at once,
//! CONFIG SET of the `tls-*` parameters (certificates reloaded), and replication over TLS.
//! The certificates (a CA, server and client certificates) are made here with rcgen.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quince_test_util::{free_port, redis_required, start_quince, which, ServerProcess};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// A CA and the certificates it signed, written to a directory.
struct Certs {
    dir: PathBuf,
    ca_der: CertificateDer<'static>,
    server_der: CertificateDer<'static>,
    client_chain: Vec<CertificateDer<'static>>,
    client_key: Vec<u8>,
}

impl Certs {
    fn make(name: &str) -> Certs {
        use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair, SanType};
        let dir = std::env::temp_dir().join(format!("quince-tls-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let leaf = |cn: &str, usages: Vec<ExtendedKeyUsagePurpose>| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
            params.subject_alt_names.push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
            params.distinguished_name.push(rcgen::DnType::CommonName, cn);
            params.extended_key_usages = usages;
            (params.signed_by(&key, &ca, &ca_key).unwrap(), key)
        };
        // The servers' certificates serve as client certificates too (a replica presents
        // its tls-cert-file to its master when no tls-client-cert-file is set).
        let both = || vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        let (server, server_key) = leaf("server", both());
        let (server2, server2_key) = leaf("server-2", both());
        let (client, client_key) = leaf("client", vec![ExtendedKeyUsagePurpose::ClientAuth]);
        let write = |file: &str, text: String| std::fs::write(dir.join(file), text).unwrap();
        write("ca.crt", ca.pem());
        write("server.crt", server.pem());
        write("server.key", server_key.serialize_pem());
        write("server2.crt", server2.pem());
        write("server2.key", server2_key.serialize_pem());
        write("client.crt", client.pem());
        write("client.key", client_key.serialize_pem());
        Certs {
            dir,
            ca_der: ca.der().clone(),
            server_der: server.der().clone(),
            client_chain: vec![client.der().clone()],
            client_key: client_key.serialize_der(),
        }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    /// The server arguments for TLS on `tls_port`, client certificates required.
    fn server_args(&self, tls_port: u16) -> Vec<String> {
        [
            ("--tls-port", tls_port.to_string()),
            ("--tls-cert-file", self.path("server.crt")),
            ("--tls-key-file", self.path("server.key")),
            ("--tls-ca-cert-file", self.path("ca.crt")),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v])
        .collect()
    }

    /// A rustls client configuration trusting our CA, with the client certificate or not,
    /// for the given protocol versions.
    fn client_config(
        &self,
        with_cert: bool,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca_der.clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots);
        let config = if with_cert {
            let key = PrivateKeyDer::try_from(self.client_key.clone()).unwrap();
            builder.with_client_auth_cert(self.client_chain.clone(), key).unwrap()
        } else {
            builder.with_no_client_auth()
        };
        Arc::new(config)
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TLS client speaking RESP.
struct TlsClient {
    stream: rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
}

impl TlsClient {
    fn connect(port: u16, config: Arc<rustls::ClientConfig>) -> std::io::Result<TlsClient> {
        let tcp = TcpStream::connect(("127.0.0.1", port))?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        let name = ServerName::IpAddress("127.0.0.1".parse::<std::net::IpAddr>().unwrap().into());
        let conn = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
        let mut client = TlsClient { stream: rustls::StreamOwned::new(conn, tcp) };
        // The handshake, all of it (a refused client certificate shows up here or at the
        // first read).
        while client.stream.conn.is_handshaking() {
            client.stream.conn.complete_io(&mut client.stream.sock)?;
        }
        Ok(client)
    }

    /// Sends a command and reads one reply (a simple reader: enough for the replies here).
    fn call(&mut self, args: &[&str]) -> std::io::Result<String> {
        self.stream.write_all(&quince_test_util::encode_command(args))?;
        self.stream.flush()?;
        let mut reply = Vec::new();
        let mut byte = [0u8; 1];
        // A bulk reply's header, then its line; other replies are one line.
        loop {
            if self.stream.read(&mut byte)? == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed"));
            }
            reply.push(byte[0]);
            if reply.ends_with(b"\r\n") {
                if reply[0] == b'$' && reply != b"$-1\r\n" && reply.iter().filter(|&&b| b == b'\n').count() < 2 {
                    continue;
                }
                return Ok(String::from_utf8_lossy(&reply).into_owned());
            }
        }
    }

    fn peer_certificate(&self) -> CertificateDer<'static> {
        self.stream.conn.peer_certificates().unwrap()[0].clone().into_owned()
    }
}

fn start(certs: &Certs, extra: &[&str]) -> (ServerProcess, u16) {
    let tls_port = free_port();
    let mut args: Vec<String> = certs.server_args(tls_port);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (start_quince(QUINCE, &args), tls_port)
}

#[test]
fn tls_and_plain_ports_serve_at_once_with_client_certificates() {
    let certs = Certs::make("ports");
    let (server, tls_port) = start(&certs, &[]);
    let all = &[&rustls::version::TLS12, &rustls::version::TLS13][..];

    let mut tls = TlsClient::connect(tls_port, certs.client_config(true, all)).expect("a TLS connection");
    assert_eq!(tls.call(&["SET", "k", "over tls"]).unwrap(), "+OK\r\n");
    assert_eq!(tls.peer_certificate(), certs.server_der);
    // The plain port serves the same data.
    let mut plain = server.client();
    assert_eq!(plain.call(&["GET", "k"]), b"$8\r\nover tls\r\n");
    // A big reply goes through whole (several TLS records, and more than the socket takes
    // at once).
    let big = "x".repeat(3 << 20);
    assert_eq!(tls.call(&["SET", "big", &big]).unwrap(), "+OK\r\n");
    assert_eq!(tls.call(&["STRLEN", "big"]).unwrap(), format!(":{}\r\n", big.len()));
    let reply = tls.call(&["GET", "big"]).unwrap();
    assert_eq!(reply.len(), big.len() + format!("${}\r\n\r\n", big.len()).len());

    // tls-auth-clients yes (the default): no client certificate, no service.
    let refused = TlsClient::connect(tls_port, certs.client_config(false, all)).and_then(|mut c| c.call(&["PING"]));
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(plain.call(&["CONFIG", "SET", "tls-auth-clients", "optional"]), b"+OK\r\n");
    let mut anonymous = TlsClient::connect(tls_port, certs.client_config(false, all)).unwrap();
    assert_eq!(anonymous.call(&["PING"]).unwrap(), "+PONG\r\n");
    assert_eq!(plain.call(&["CONFIG", "SET", "tls-auth-clients", "no"]), b"+OK\r\n");
    let mut anonymous = TlsClient::connect(tls_port, certs.client_config(false, all)).unwrap();
    assert_eq!(anonymous.call(&["PING"]).unwrap(), "+PONG\r\n");

    // Plain RESP on the TLS port is not served.
    let mut raw = TcpStream::connect(("127.0.0.1", tls_port)).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    raw.write_all(b"PING\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer);
    assert!(!answer.starts_with(b"+PONG"), "{answer:?}");
}

#[test]
fn config_set_rebuilds_tls_and_moves_the_tls_port() {
    let certs = Certs::make("config");
    let (server, tls_port) = start(&certs, &[]);
    let all = &[&rustls::version::TLS12, &rustls::version::TLS13][..];
    let mut plain = server.client();

    // A new certificate: connections from now on get it.
    let set =
        |plain: &mut quince_test_util::RawClient, name: &str, value: &str| plain.call(&["CONFIG", "SET", name, value]);
    assert_eq!(
        plain.call(&[
            "CONFIG",
            "SET",
            "tls-cert-file",
            &certs.path("server2.crt"),
            "tls-key-file",
            &certs.path("server2.key")
        ]),
        b"+OK\r\n"
    );
    let tls = TlsClient::connect(tls_port, certs.client_config(true, all)).unwrap();
    assert_ne!(tls.peer_certificate(), certs.server_der, "the reloaded certificate");

    // What can't be built is refused, and the old configuration stays.
    let missing = set(&mut plain, "tls-cert-file", "/nonexistent/cert.pem");
    assert_eq!(
        String::from_utf8_lossy(&missing),
        "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. \
         Check server logs.\r\n"
    );
    assert_eq!(
        plain.call(&["CONFIG", "GET", "tls-cert-file"]),
        format!(
            "*2\r\n$13\r\ntls-cert-file\r\n${}\r\n{}\r\n",
            certs.path("server2.crt").len(),
            certs.path("server2.crt")
        )
        .into_bytes()
    );
    for (name, value) in [("tls-protocols", "TLSv1.1"), ("tls-ciphers", "AES128-SHA256"), ("tls-ciphersuites", "NOPE")]
    {
        let reply = String::from_utf8_lossy(&set(&mut plain, name, value)).into_owned();
        assert!(reply.contains(&format!("argument '{name}'")) && reply.contains("Unable to update TLS"), "{reply}");
    }
    // An encrypted key (PKCS#8, PBES2 as OpenSSL 3 writes it): refused without its
    // password, used with it (tls-key-file-pass).
    let plain_key = std::fs::read_to_string(certs.dir.join("server.key")).unwrap();
    let (_, der) = pkcs8::der::Document::from_pem(&plain_key).unwrap();
    let info = pkcs8::PrivateKeyInfo::try_from(der.as_bytes()).unwrap();
    let params = pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, &[7u8; 16], &[9u8; 16]).unwrap();
    let encrypted = info.encrypt_with_params(params, "1234").unwrap();
    let pem = encrypted.to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF).unwrap();
    std::fs::write(certs.dir.join("encrypted.key"), pem.as_bytes()).unwrap();
    let (cert, key) = (certs.path("server.crt"), certs.path("encrypted.key"));
    let reply = plain.call(&["CONFIG", "SET", "tls-cert-file", &cert, "tls-key-file", &key]);
    assert!(String::from_utf8_lossy(&reply).contains("Unable to update TLS"), "{}", String::from_utf8_lossy(&reply));
    assert_eq!(set(&mut plain, "tls-key-file-pass", "wrong"), b"+OK\r\n", "the current key is in the clear");
    let reply = plain.call(&["CONFIG", "SET", "tls-cert-file", &cert, "tls-key-file", &key]);
    assert!(String::from_utf8_lossy(&reply).contains("Unable to update TLS"), "a wrong password");
    assert_eq!(set(&mut plain, "tls-key-file-pass", "1234"), b"+OK\r\n");
    assert_eq!(plain.call(&["CONFIG", "SET", "tls-cert-file", &cert, "tls-key-file", &key]), b"+OK\r\n");
    let tls = TlsClient::connect(tls_port, certs.client_config(true, all)).unwrap();
    assert_eq!(tls.peer_certificate(), certs.server_der, "served with the decrypted key");
    TlsClient::connect(tls_port, certs.client_config(true, all)).unwrap().call(&["PING"]).unwrap();

    // tls-protocols: a TLS 1.2 client is turned away when only TLSv1.3 is on.
    assert_eq!(set(&mut plain, "tls-protocols", "TLSv1.3"), b"+OK\r\n");
    let old = TlsClient::connect(tls_port, certs.client_config(true, &[&rustls::version::TLS12]))
        .and_then(|mut c| c.call(&["PING"]));
    assert!(old.is_err(), "{old:?}");
    TlsClient::connect(tls_port, certs.client_config(true, &[&rustls::version::TLS13]))
        .unwrap()
        .call(&["PING"])
        .unwrap();
    assert_eq!(set(&mut plain, "tls-protocols", ""), b"+OK\r\n");

    // The TLS port moves; the old one stops listening.
    let new_port = free_port();
    assert_eq!(set(&mut plain, "tls-port", &new_port.to_string()), b"+OK\r\n");
    TlsClient::connect(new_port, certs.client_config(true, all)).unwrap().call(&["PING"]).unwrap();
    assert!(TcpStream::connect(("127.0.0.1", tls_port)).is_err(), "the old TLS port still listens");
    // INFO's tcp_port is the TCP one while there is one.
    let info = String::from_utf8_lossy(&plain.call(&["INFO", "server"])).into_owned();
    assert!(info.contains(&format!("tcp_port:{}\r\n", server.port)), "{info}");
}

/// redis-cli's own TLS (OpenSSL), with and without the client certificate.
#[test]
fn redis_cli_speaks_tls_to_quince() {
    let Some(cli) = which("redis-cli") else {
        assert!(!redis_required(), "QUINCE_REQUIRE_REDIS=1 but redis-cli is not on PATH");
        eprintln!("skipped: redis-cli is not installed");
        return;
    };
    let certs = Certs::make("cli");
    let (_server, tls_port) = start(&certs, &[]);
    let run = |with_cert: bool, args: &[&str]| {
        let mut cmd = std::process::Command::new(&cli);
        cmd.args(["-h", "127.0.0.1", "-p", &tls_port.to_string(), "--tls", "--cacert", &certs.path("ca.crt")]);
        if with_cert {
            cmd.args(["--cert", &certs.path("client.crt"), "--key", &certs.path("client.key")]);
        }
        let out = cmd.args(args).output().unwrap();
        (String::from_utf8_lossy(&out.stdout).trim().to_string(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert_eq!(run(true, &["SET", "cli", "tls"]).0, "OK");
    assert_eq!(run(true, &["GET", "cli"]).0, "tls");
    let (out, err) = run(false, &["PING"]);
    assert!(out != "PONG", "served without a client certificate: {out} {err}");
}

/// redis-py (the wheel sdk/python keeps, imported from the zip) with `ssl=True`.
#[test]
fn redis_py_speaks_tls_to_quince() {
    let wheel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk/python/redis-8.1.0-py3-none-any.whl");
    let Some(python) = which("python3") else {
        eprintln!("skipped: python3 is not installed");
        return;
    };
    let certs = Certs::make("py");
    let (_server, tls_port) = start(&certs, &[]);
    let script = format!(
        "import redis\n\
         r = redis.Redis(host='127.0.0.1', port={tls_port}, ssl=True, ssl_ca_certs='{ca}', ssl_certfile='{crt}', \
         ssl_keyfile='{key}')\n\
         r.set('py', 'over tls')\n\
         assert r.get('py') == b'over tls', r.get('py')\n\
         p = r.pipeline()\n\
         for i in range(1000): p.incr('n')\n\
         assert p.execute()[-1] == 1000\n\
         print('ok')\n",
        ca = certs.path("ca.crt"),
        crt = certs.path("client.crt"),
        key = certs.path("client.key"),
    );
    let out = std::process::Command::new(python).env("PYTHONPATH", &wheel).args(["-c", &script]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok", "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

/// Waits for `check` to hold, for up to 10 seconds.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `tls-replication yes`: the replica reaches its master's TLS port, presenting
/// `tls-cert-file` as its client certificate (no `tls-client-cert-file` set), and checks
/// the master's chain. `tls-cluster yes`: MIGRATE goes to a TLS port too.
#[test]
fn replication_and_migrate_over_tls() {
    let certs = Certs::make("repl");
    let (master, master_tls) = start(&certs, &["--tls-replication", "yes", "--tls-cluster", "yes"]);
    let (replica, _) = start(&certs, &["--tls-replication", "yes"]);
    let mut m = master.client();
    let mut r = replica.client();
    assert_eq!(m.call(&["SET", "before", "sync"]), b"+OK\r\n");
    assert_eq!(r.call(&["REPLICAOF", "127.0.0.1", &master_tls.to_string()]), b"+OK\r\n");
    eventually("the replica's link", || {
        String::from_utf8_lossy(&r.call(&["INFO", "replication"])).contains("master_link_status:up")
    });
    assert_eq!(m.call(&["SET", "after", "sync"]), b"+OK\r\n");
    eventually("the streamed write", || r.call(&["GET", "after"]) == b"$4\r\nsync\r\n");
    assert_eq!(r.call(&["GET", "before"]), b"$4\r\nsync\r\n");

    // MIGRATE from the master to a third server's TLS port.
    let (target, target_tls) = start(&certs, &[]);
    assert_eq!(m.call(&["SET", "moving", "v"]), b"+OK\r\n");
    let reply = m.call(&["MIGRATE", "127.0.0.1", &target_tls.to_string(), "moving", "0", "5000"]);
    assert_eq!(reply, b"+OK\r\n", "{}", String::from_utf8_lossy(&reply));
    assert_eq!(target.client().call(&["GET", "moving"]), b"$1\r\nv\r\n");
}

/// A refused TLS client (maxclients here; protected mode alike) reads Redis's refusal over
/// TLS once the handshake is done, as with Redis, rather than an I/O error.
#[test]
fn a_refused_tls_client_reads_the_refusal() {
    let certs = Certs::make("refused");
    let (server, tls_port) = start(&certs, &[]);
    let mut plain = server.client();
    assert_eq!(plain.call(&["CONFIG", "SET", "maxclients", "1"]), b"+OK\r\n");
    let all = &[&rustls::version::TLS12, &rustls::version::TLS13][..];
    let mut refused = TlsClient::connect(tls_port, certs.client_config(true, all)).unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        match refused.stream.read(&mut byte) {
            Ok(1) => line.push(byte[0]),
            other => panic!("no refusal line: {other:?} after {line:?}"),
        }
    }
    assert_eq!(line, b"-ERR max number of clients reached\r\n");
}
