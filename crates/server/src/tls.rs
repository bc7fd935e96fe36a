//! TLS for clients on `tls-port` (rustls, with ring as its crypto provider).
//!
//! The `tls-*` directives become one `rustls::ServerConfig`; `TlsContext` holds the current
//! one, and CONFIG SET of any of them builds a new one (certificates reloaded from their
//! files, as Redis's applyTlsCfg does): connections accepted from then on use it, those
//! already open keep theirs. A configuration that can't be built leaves the old one and
//! the setting unchanged, with the reason in the log. docs/security.md lists what rustls
//! does not offer (TLS 1.0/1.1, RSA key exchange and CBC suites, finite-field DHE).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rustls::crypto::CryptoProvider;
use rustls::server::{NoServerSessionStorage, StoresServerSessions, WebPkiClientVerifier};
use rustls::{CipherSuite, ClientConfig, RootCertStore, ServerConfig, ServerConnection, SupportedCipherSuite};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use quince_engine::Config;

/// The configuration new TLS connections get.
#[derive(Default)]
pub struct TlsContext {
    current: RwLock<Option<Arc<ServerConfig>>>,
    /// For the connections this server opens (to its master, to MIGRATE targets).
    client: RwLock<Option<Arc<ClientConfig>>>,
}

impl TlsContext {
    /// Builds the configuration from `config` and makes it current; on failure the
    /// current one stays.
    pub fn configure(&self, config: &Config) -> Result<(), String> {
        let built = server_config(config)?;
        let client = client_config(config)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(built);
        *self.client.write().unwrap_or_else(|e| e.into_inner()) = client;
        Ok(())
    }

    /// Opens TLS as a client over `tcp` (a replica to its master, MIGRATE to its target),
    /// the handshake done (within 10 seconds, whatever the socket's read timeout).
    pub fn connect(&self, tcp: TcpStream) -> io::Result<Box<dyn quince_persist::outgoing::Outgoing>> {
        let config = self.client.read().unwrap_or_else(|e| e.into_inner()).clone();
        let config = config.ok_or_else(|| {
            io::Error::other("no tls-ca-cert-file or tls-ca-cert-dir to check the peer's certificate against")
        })?;
        // Redis checks the peer's chain, not its name: the address serves as the name.
        let name = rustls_pki_types::ServerName::IpAddress(tcp.peer_addr()?.ip().into());
        let conn = rustls::ClientConnection::new(config, name).map_err(io::Error::other)?;
        let mut stream = rustls::StreamOwned::new(conn, tcp);
        let deadline = Instant::now() + Duration::from_secs(10);
        while stream.conn.is_handshaking() {
            match stream.conn.complete_io(&mut stream.sock) {
                Ok(_) => {}
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                    if Instant::now() >= deadline {
                        return Err(io::Error::new(io::ErrorKind::TimedOut, "TLS handshake timed out"));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Box::new(ClientStream(stream)))
    }

    /// A server side for a new connection (None: TLS was never configured).
    pub fn accept(&self, tcp: TcpStream) -> io::Result<TlsSocket> {
        let config = self.current.read().unwrap_or_else(|e| e.into_inner()).clone();
        let config = config.ok_or_else(|| io::Error::other("TLS is not configured"))?;
        let conn = ServerConnection::new(config).map_err(io::Error::other)?;
        Ok(TlsSocket { tcp, conn: std::cell::RefCell::new(conn) })
    }
}

/// A client's TLS connection: the TCP socket and rustls's state for it. Used by the one
/// worker thread that owns the connection (hence the `RefCell`).
pub struct TlsSocket {
    pub tcp: TcpStream,
    conn: std::cell::RefCell<ServerConnection>,
}

impl TlsSocket {
    /// Reads plaintext, taking in and decrypting what the socket holds as needed. Ok(0):
    /// the peer ended the connection; WouldBlock: nothing more for now.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut conn = self.conn.borrow_mut();
        loop {
            match conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed the TCP connection without TLS's close_notify.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match conn.read_tls(&mut &self.tcp) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    if let Err(e) = conn.process_new_packets() {
                        // The alert saying why goes out before the connection closes, unless
                        // what came was never TLS (plain RESP on the TLS port): then the
                        // connection just closes, as with OpenSSL, and the client sees an
                        // I/O error rather than an alert's bytes as a reply.
                        let not_tls = conn.is_handshaking() && matches!(e, rustls::Error::InvalidMessage(_));
                        if !not_tls {
                            let _ = Self::write_out(&mut conn, &self.tcp);
                        }
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                    }
                    // Handshake messages to send back (or a key update).
                    match Self::write_out(&mut conn, &self.tcp) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Encrypts `buf` and sends what the socket takes; the rest stays queued in rustls
    /// (`flush_pending` sends it when the socket is writable again). WouldBlock only when
    /// earlier output is still queued and the socket takes nothing.
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut conn = self.conn.borrow_mut();
        Self::write_out(&mut conn, &self.tcp)?;
        let n = conn.writer().write(buf)?;
        match Self::write_out(&mut conn, &self.tcp) {
            Ok(()) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(n),
            Err(e) => Err(e),
        }
    }

    /// Sends queued ciphertext: Ok(true) when none is left, Ok(false) when the socket
    /// would block first.
    pub fn flush_pending(&self) -> io::Result<bool> {
        let mut conn = self.conn.borrow_mut();
        match Self::write_out(&mut conn, &self.tcp) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Refuses the connection with `line` (protected mode, maxclients): as Redis, only
    /// once the handshake is done, so the client reads the refusal rather than an I/O
    /// error. On a thread of its own (the handshake waits for the client), at most
    /// `MAX_REFUSING` at once: beyond them the connection just closes.
    pub fn refuse(self, line: &'static str) {
        static REFUSING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        const MAX_REFUSING: usize = 16;
        use std::sync::atomic::Ordering;
        if REFUSING.fetch_add(1, Ordering::SeqCst) >= MAX_REFUSING {
            REFUSING.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let spawned = std::thread::Builder::new().name("quince-tls-refuse".into()).spawn(move || {
            let _ = self.refuse_now(line);
            REFUSING.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            REFUSING.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn refuse_now(self, line: &str) -> io::Result<()> {
        let TlsSocket { mut tcp, conn } = self;
        let mut conn = conn.into_inner();
        tcp.set_nonblocking(false)?;
        tcp.set_read_timeout(Some(Duration::from_secs(2)))?;
        tcp.set_write_timeout(Some(Duration::from_secs(2)))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp)?;
        }
        conn.writer().write_all(line.as_bytes())?;
        conn.send_close_notify();
        while conn.wants_write() {
            conn.write_tls(&mut tcp)?;
        }
        Ok(())
    }

    fn write_out(conn: &mut ServerConnection, tcp: &TcpStream) -> io::Result<()> {
        while conn.wants_write() {
            if conn.write_tls(&mut &*tcp)? == 0 {
                return Err(io::Error::new(io::ErrorKind::WriteZero, "TLS peer closed"));
            }
        }
        Ok(())
    }
}

/// A TLS connection this server opened.
struct ClientStream(rustls::StreamOwned<rustls::ClientConnection, TcpStream>);

impl Read for ClientStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for ClientStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl quince_persist::outgoing::Outgoing for ClientStream {
    fn tcp(&self) -> &TcpStream {
        &self.0.sock
    }
}

/// Accepts a server whose certificate chains to a trusted CA, whatever name it was issued
/// for: as Redis's TLS client, which sets no host name to check (a replica reaches its
/// master by address).
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls_pki_types::ServerName<'_>,
        ocsp: &[u8],
        now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            // (The chain was checked before the name.)
            Err(Error::InvalidCertificate(CertificateError::NotValidForName))
            | Err(Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })) => {
                Ok(rustls::client::danger::ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The client side, for connections this server opens: the CAs of `tls-ca-cert-file` /
/// `tls-ca-cert-dir` to check the peer, and `tls-client-cert-file` / `tls-client-key-file`
/// (or, when those are not set, `tls-cert-file` / `tls-key-file`) as its certificate.
fn client_config(config: &Config) -> Result<Option<Arc<ClientConfig>>, String> {
    let text = |name: &str| config.get(name).unwrap_or("").to_string();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = read_roots(config)?;
    if roots.is_empty() {
        // Nothing to check a peer against: serving clients only (tls-auth-clients no).
        if config.get_bool("tls-replication") || config.get_bool("tls-cluster") {
            return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, \
                        tls-replication or tls-auth-clients are enabled!"
                .into());
        }
        return Ok(None);
    }
    let verifier = Arc::new(ChainOnly(
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| format!("tls-ca-cert-file: {e}"))?,
    ));
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let (cert_file, key_file, pass) = match (text("tls-client-cert-file"), text("tls-client-key-file")) {
        (cert, key) if !cert.is_empty() && !key.is_empty() => (cert, key, text("tls-client-key-file-pass")),
        _ => (text("tls-cert-file"), text("tls-key-file"), text("tls-key-file-pass")),
    };
    let client = if cert_file.is_empty() || key_file.is_empty() {
        builder.with_no_client_auth()
    } else {
        let certs = read_certs(&cert_file, "tls-client-cert-file")?;
        let key = read_key(&key_file, &pass, "tls-client-key-file")?;
        let certified = certified_key(&provider, certs, key, "tls-client-cert-file/tls-client-key-file")?;
        builder.with_client_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)))
    };
    Ok(Some(Arc::new(client)))
}

/// The OpenSSL names of the TLS 1.2 suites rustls implements (tls-ciphers).
const TLS12_NAMES: &[(&str, CipherSuite)] = &[
    ("ECDHE-ECDSA-AES256-GCM-SHA384", CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384),
    ("ECDHE-ECDSA-AES128-GCM-SHA256", CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
    ("ECDHE-RSA-AES256-GCM-SHA384", CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384),
    ("ECDHE-RSA-AES128-GCM-SHA256", CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
    ("ECDHE-RSA-CHACHA20-POLY1305", CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
];

/// The TLS 1.3 suites (tls-ciphersuites), by their standard names.
const TLS13_NAMES: &[(&str, CipherSuite)] = &[
    ("TLS_AES_256_GCM_SHA384", CipherSuite::TLS13_AES_256_GCM_SHA384),
    ("TLS_AES_128_GCM_SHA256", CipherSuite::TLS13_AES_128_GCM_SHA256),
    ("TLS_CHACHA20_POLY1305_SHA256", CipherSuite::TLS13_CHACHA20_POLY1305_SHA256),
];

/// The suites an OpenSSL-style list keeps of `all` (of one TLS version): `DEFAULT`, `ALL`
/// and `HIGH` stand for all of them, `-NAME` and `!NAME` drop one; a name rustls does not
/// implement is an error unless it is being dropped.
fn select_suites(
    list: &str,
    all: &[SupportedCipherSuite],
    names: &[(&str, CipherSuite)],
    directive: &str,
) -> Result<Vec<SupportedCipherSuite>, String> {
    if list.trim().is_empty() {
        return Ok(all.to_vec());
    }
    let by_name = |name: &str| {
        names
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, suite)| all.iter().find(|s| s.suite() == *suite))
            .copied()
    };
    let mut chosen: Vec<SupportedCipherSuite> = Vec::new();
    for item in list.split([':', ',', ' ']).filter(|s| !s.is_empty()) {
        let (drop, name) = match item.strip_prefix(['-', '!']) {
            Some(name) => (true, name),
            None => (false, item.strip_prefix('+').unwrap_or(item)),
        };
        let group = matches!(name.to_ascii_uppercase().as_str(), "DEFAULT" | "ALL" | "HIGH");
        let matched: Vec<SupportedCipherSuite> = if group { all.to_vec() } else { by_name(name).into_iter().collect() };
        if drop {
            chosen.retain(|s| !matched.iter().any(|m| m.suite() == s.suite()));
        } else if matched.is_empty() {
            return Err(format!(
                "{directive}: '{name}' is not a cipher suite quince's TLS (rustls) implements; it has {}",
                names.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ));
        } else {
            for suite in matched {
                if !chosen.iter().any(|c| c.suite() == suite.suite()) {
                    chosen.push(suite);
                }
            }
        }
    }
    Ok(chosen)
}

fn read_certs(path: &str, directive: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{directive} {path}: {e}"))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{directive} {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{directive} {path}: no certificate in the file"));
    }
    Ok(certs)
}

/// A private key in the clear, or encrypted (PKCS#8 with PBES2, as `openssl pkey -aes256`
/// or OpenSSL 3's `openssl rsa -aes256` write it) with `pass` (`tls-key-file-pass`).
fn read_key(path: &str, pass: &str, directive: &str) -> Result<PrivateKeyDer<'static>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{directive} {path}: {e}"))?;
    if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        if pass.is_empty() {
            return Err(format!("{directive} {path}: the key is encrypted and no password is set ({directive}-pass)"));
        }
        let (_, document) = pkcs8::der::Document::from_pem(&text).map_err(|e| format!("{directive} {path}: {e}"))?;
        let encrypted = pkcs8::EncryptedPrivateKeyInfo::try_from(document.as_bytes())
            .map_err(|e| format!("{directive} {path}: {e}"))?;
        let plain = encrypted.decrypt(pass).map_err(|e| format!("{directive} {path}: can't decrypt the key: {e}"))?;
        return Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()));
    }
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(format!(
            "{directive} {path}: the key is encrypted in OpenSSL's legacy format; quince reads encrypted keys \
             in PKCS#8 (`openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out NEW`)"
        ));
    }
    PrivateKeyDer::from_pem_slice(text.as_bytes()).map_err(|e| format!("{directive} {path}: {e}"))
}

/// A certificate chain with its private key. A key that does not match the certificate is
/// an error; a certificate webpki can't parse to compare (an X.509 v1 certificate, as
/// `openssl x509 -req` makes without extensions) is used as it is, as OpenSSL would.
fn certified_key(
    provider: &CryptoProvider,
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    directive: &str,
) -> Result<Arc<rustls::sign::CertifiedKey>, String> {
    let signing = provider.key_provider.load_private_key(key).map_err(|e| format!("{directive}: {e}"))?;
    let certified = rustls::sign::CertifiedKey::new(certs, signing);
    match certified.keys_match() {
        Err(rustls::Error::InconsistentKeys(e)) => {
            Err(format!("{directive}: the key does not match the certificate ({e:?})"))
        }
        _ => Ok(Arc::new(certified)),
    }
}

/// The trusted CAs for client certificates: `tls-ca-cert-file` and every certificate
/// file in `tls-ca-cert-dir`.
fn read_roots(config: &Config) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let file = config.get("tls-ca-cert-file").unwrap_or("");
    if !file.is_empty() {
        for cert in read_certs(file, "tls-ca-cert-file")? {
            roots.add(cert).map_err(|e| format!("tls-ca-cert-file {file}: {e}"))?;
        }
    }
    let dir = config.get("tls-ca-cert-dir").unwrap_or("");
    if !dir.is_empty() {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("tls-ca-cert-dir {dir}: {e}"))?;
        for entry in entries.flatten() {
            // (A directory prepared for OpenSSL also holds hash links and other files: only
            // what parses as certificates counts.)
            if let Ok(iter) = CertificateDer::pem_file_iter(entry.path()) {
                for cert in iter.flatten() {
                    let _ = roots.add(cert);
                }
            }
        }
    }
    Ok(roots)
}

/// Builds the server side of TLS from the `tls-*` directives.
pub fn server_config(config: &Config) -> Result<Arc<ServerConfig>, String> {
    let text = |name: &str| config.get(name).unwrap_or("").to_string();
    let (cert_file, key_file) = (text("tls-cert-file"), text("tls-key-file"));
    if cert_file.is_empty() || key_file.is_empty() {
        return Err("tls-cert-file and tls-key-file are needed to serve TLS".into());
    }
    let certs = read_certs(&cert_file, "tls-cert-file")?;
    let key = read_key(&key_file, &text("tls-key-file-pass"), "tls-key-file")?;
    let base = rustls::crypto::ring::default_provider();
    let tls12: Vec<SupportedCipherSuite> =
        base.cipher_suites.iter().filter(|s| s.version() == &rustls::version::TLS12).copied().collect();
    let tls13: Vec<SupportedCipherSuite> =
        base.cipher_suites.iter().filter(|s| s.version() == &rustls::version::TLS13).copied().collect();
    let mut suites = select_suites(&text("tls-ciphersuites"), &tls13, TLS13_NAMES, "tls-ciphersuites")?;
    suites.extend(select_suites(&text("tls-ciphers"), &tls12, TLS12_NAMES, "tls-ciphers")?);

    // tls-protocols: "" is TLSv1.2 and TLSv1.3, as Redis's default.
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    let protocols = text("tls-protocols");
    for word in protocols.split_whitespace() {
        match word.to_ascii_lowercase().as_str() {
            "tlsv1.2" => versions.push(&rustls::version::TLS12),
            "tlsv1.3" => versions.push(&rustls::version::TLS13),
            "tlsv1" | "tlsv1.1" => {
                return Err(format!(
                    "tls-protocols: {word} is not offered by quince's TLS (rustls): TLSv1.2 and TLSv1.3 are"
                ))
            }
            _ => return Err(format!("tls-protocols: invalid protocol '{word}'")),
        }
    }
    if versions.is_empty() {
        versions = vec![&rustls::version::TLS12, &rustls::version::TLS13];
    }
    // Each version needs a suite of its own.
    for version in &versions {
        if !suites.iter().any(|s| s.version() == *version) {
            let (name, directive) = if **version == rustls::version::TLS13 {
                ("TLSv1.3", "tls-ciphersuites")
            } else {
                ("TLSv1.2", "tls-ciphers")
            };
            return Err(format!("{directive} leaves no cipher suite for {name}, which tls-protocols enables"));
        }
    }
    let provider = Arc::new(CryptoProvider { cipher_suites: suites, ..base });

    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("tls-protocols: {e}"))?;
    let auth = text("tls-auth-clients");
    let builder = if auth.eq_ignore_ascii_case("no") {
        builder.with_no_client_auth()
    } else {
        let roots = read_roots(config)?;
        if roots.is_empty() {
            return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, \
                        tls-replication or tls-auth-clients are enabled!"
                .into());
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
        let verifier = if auth.eq_ignore_ascii_case("optional") { verifier.allow_unauthenticated() } else { verifier };
        builder.with_client_cert_verifier(verifier.build().map_err(|e| format!("tls-ca-cert-file: {e}"))?)
    };
    let certified = certified_key(&provider, certs, key, "tls-cert-file/tls-key-file")?;
    let mut server = builder.with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));

    let dh = text("tls-dh-params-file");
    if !dh.is_empty() {
        // Checked, but never used: rustls has no finite-field Diffie-Hellman (its key
        // exchange is ECDHE), so there are no DHE suites to give these parameters to.
        let contents = std::fs::read_to_string(&dh).map_err(|e| format!("tls-dh-params-file {dh}: {e}"))?;
        if !contents.contains("-----BEGIN DH PARAMETERS-----") {
            return Err(format!("tls-dh-params-file {dh}: no DH PARAMETERS block"));
        }
        crate::log::log(
            crate::log::Level::Notice,
            "tls-dh-params-file: rustls offers ECDHE key exchange only (no DHE cipher suites), so these DH \
             parameters are checked but not used",
        );
    }
    server.ignore_client_order = config.get_bool("tls-prefer-server-ciphers");
    if config.get_bool("tls-session-caching") {
        let size = config.get_int("tls-session-cache-size").max(0) as usize;
        let timeout = Duration::from_secs(config.get_int("tls-session-cache-timeout").max(0) as u64);
        server.session_storage = Arc::new(SessionCache::new(size, timeout));
    } else {
        server.session_storage = Arc::new(NoServerSessionStorage {});
        server.send_tls13_tickets = 0;
    }
    Ok(Arc::new(server))
}

/// Sessions kept for resumption (`tls-session-cache-size` of them at most, each for
/// `tls-session-cache-timeout` seconds), as OpenSSL's session cache in Redis.
/// A session's secrets and when they were stored.
type StoredSession = (Vec<u8>, Instant);

#[derive(Debug)]
struct SessionCache {
    size: usize,
    timeout: Duration,
    sessions: Mutex<HashMap<Vec<u8>, StoredSession>>,
}

impl SessionCache {
    fn new(size: usize, timeout: Duration) -> Self {
        Self { size, timeout, sessions: Mutex::new(HashMap::new()) }
    }

    fn live(&self, stored: Instant) -> bool {
        stored.elapsed() < self.timeout
    }
}

impl StoresServerSessions for SessionCache {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if sessions.len() >= self.size {
            sessions.retain(|_, (_, at)| at.elapsed() < self.timeout);
        }
        if sessions.len() >= self.size {
            // Full of live sessions: the oldest makes room.
            let oldest = sessions.iter().min_by_key(|(_, (_, at))| *at).map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    sessions.remove(&k);
                }
                None => return false,
            }
        }
        sessions.insert(key, (value, Instant::now()));
        true
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.get(key).filter(|(_, at)| self.live(*at)).map(|(v, _)| v.clone())
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.remove(key).filter(|(_, at)| self.live(*at)).map(|(v, _)| v)
    }

    fn can_cache(&self) -> bool {
        self.size > 0 && !self.timeout.is_zero()
    }
}
