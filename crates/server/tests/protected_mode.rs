//! Protected mode as Redis 7.0 has it: with `protected-mode yes` (the default) and no
//! password, a client connecting from anywhere but 127.0.0.1 or ::1 gets Redis's DENIED
//! line and is disconnected; a password or `protected-mode no` lets it in. Compared with
//! redis-server byte for byte, both listening on every interface (`bind * -::*`, Redis's
//! compiled-in default and quince's) and reached through this machine's own non-loopback
//! address.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use quince_test_util::{start_quince, start_redis, ServerProcess};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

/// An IPv4 address of this machine that is not a loopback one, if it has any.
fn non_loopback_ipv4() -> Option<IpAddr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, freed below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut at = list;
    while !at.is_null() {
        // SAFETY: a node of the list getifaddrs returned; its address, when set, is a
        // sockaddr of the family it names.
        unsafe {
            let addr = (*at).ifa_addr;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET {
                let sin = &*(addr as *const libc::sockaddr_in);
                let ip = std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !ip.is_loopback() && !ip.is_unspecified() {
                    found = Some(IpAddr::V4(ip));
                    break;
                }
            }
            at = (*at).ifa_next;
        }
    }
    // SAFETY: the list getifaddrs allocated.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// What a client connecting to `ip:port` reads after sending PING: a DENIED line (then the
/// connection closes) or PING's reply.
fn first_words(ip: IpAddr, port: u16) -> Vec<u8> {
    let mut s = TcpStream::connect(SocketAddr::new(ip, port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(b"*1\r\n$4\r\nPING\r\n");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                if got.ends_with(b"\r\n") && (got.starts_with(b"+") || got.starts_with(b"-NOAUTH")) {
                    break;
                }
            }
        }
    }
    got
}

fn scenario(quince_args: &[&str]) -> Option<(ServerProcess, ServerProcess)> {
    let redis = start_redis(quince_args)?;
    Some((start_quince(QUINCE, quince_args), redis))
}

#[test]
fn non_local_clients_are_refused_as_redis_refuses_them() {
    let Some(ip) = non_loopback_ipv4() else {
        eprintln!("SKIPPED: this machine has no non-loopback IPv4 address to connect from");
        return;
    };
    let cases: [(&[&str], &str); 3] = [
        (&["--bind", "* -::*"], "protected, no password"),
        (&["--bind", "* -::*", "--requirepass", "secret"], "a password"),
        (&["--bind", "* -::*", "--protected-mode", "no"], "protected mode off"),
    ];
    for (args, what) in cases {
        let Some((quince, redis)) = scenario(args) else { return };
        let q = first_words(ip, quince.port);
        let r = first_words(ip, redis.port);
        assert_eq!(String::from_utf8_lossy(&q), String::from_utf8_lossy(&r), "{what}");
        match what {
            "protected, no password" => assert!(q.starts_with(b"-DENIED Redis is running in protected mode")),
            "a password" => assert!(q.starts_with(b"-NOAUTH"), "{}", String::from_utf8_lossy(&q)),
            _ => assert_eq!(q, b"+PONG\r\n"),
        }
        // Loopback is local whatever the mode.
        assert_eq!(
            first_words(IpAddr::from([127, 0, 0, 1]), quince.port),
            first_words(IpAddr::from([127, 0, 0, 1]), redis.port)
        );
    }
    // CONFIG SET protected-mode no takes effect for the next client.
    let Some((quince, _redis)) = scenario(&["--bind", "* -::*"]) else { return };
    let mut c = quince.client();
    assert_eq!(c.call(&["CONFIG", "GET", "bind"]), b"*2\r\n$4\r\nbind\r\n$6\r\n* -::*\r\n");
    assert_eq!(c.call(&["CONFIG", "SET", "protected-mode", "no"]), b"+OK\r\n");
    assert_eq!(first_words(ip, quince.port), b"+PONG\r\n");
}
