//! `--metrics-listen ADDR`: where the endpoint listens. A port alone means this machine
//! only (loopback); anything wider must be asked for with an address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Parses `--metrics-listen`: `9464` (loopback), `127.0.0.1:9464`, `[::1]:9464`,
/// `localhost:9464`, or `0.0.0.0:9464` for every interface. Port 0 takes a free one.
pub fn parse(text: &str) -> Result<SocketAddr, String> {
    let loopback = |port: u16| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().map(loopback).map_err(|_| {
            format!("{text:?} is not a port; give one from 0 to 65535, e.g. --metrics-listen 9464")
        });
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse()
    {
        return Ok(loopback(port));
    }
    text.parse().map_err(|_| {
        format!(
            "{text:?} is not an address to listen on; give a port (9464, for this machine only) or an IP address and port (127.0.0.1:9464, or 0.0.0.0:9464 for every interface)"
        )
    })
}

/// Whether only this machine can reach `address`.
pub fn is_loopback(address: &SocketAddr) -> bool {
    address.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_is_loopback_and_wider_addresses_must_be_spelt_out() {
        assert_eq!(parse("9464").unwrap().to_string(), "127.0.0.1:9464");
        assert_eq!(parse("localhost:0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(parse("[::1]:9464").unwrap().to_string(), "[::1]:9464");
        let every = parse("0.0.0.0:9464").unwrap();
        assert!(!is_loopback(&every));
        assert!(is_loopback(&parse("9464").unwrap()));
        for bad in ["", "70000", "example.com:9464", "127.0.0.1", "1.2.3.4:port"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("9464"), "{bad}: {e}");
        }
    }
}
