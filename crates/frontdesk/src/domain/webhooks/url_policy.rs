//! Where the service may send webhooks: `http(s)` URLs whose host resolves only to public addresses, unless the
//! operator of the service allows private ones. Checked when a subscription is created or changed and again at
//! every delivery (DNS can change): the dispatcher connects only to addresses this policy allows
//! ([`PolicyResolver`]), so a name that later resolves inward is refused, not followed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use reqwest::Url;

/// How long a name may take to resolve when a subscription is saved.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Parses a subscription URL; the message says what is wrong. Credentials in the URL (`user:password@`) are
/// refused: the URL is listed to every operator of the organization and kept in the clear, and the signature is how
/// a receiver knows a delivery is genuine.
pub fn parse(url: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|err| format!("must be an absolute http or https URL ({err})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("must be an http or https URL".into());
    }
    if parsed.host().is_none() {
        return Err("must name a host".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not carry credentials (user:password@): receivers check the signature instead".into());
    }
    Ok(parsed)
}

/// What a URL whose host resolves nowhere, or anywhere the policy forbids, is told: one message for both, so that
/// the answer does not tell which internal names exist.
pub const NOT_REACHABLE: &str = "must name a host that resolves to public addresses only (the service's operator can \
                                 allow private, loopback and link-local receivers with \
                                 --webhook-allow-private-addresses true)";

/// Whether an address is off limits: loopback, private, link-local (which holds cloud metadata services),
/// shared, unspecified, multicast, documentation and reserved ranges, and their IPv6 counterparts or IPv4
/// addresses embedded in IPv6.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden_v4(v4);
            }
            let s = v6.segments();
            let v4 = |high: u16, low: u16| Ipv4Addr::new((high >> 8) as u8, high as u8, (low >> 8) as u8, low as u8);
            // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                return is_forbidden_v4(v4(s[6], s[7]));
            }
            // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) reaches IPv4 through a translator of the local network, with
            // the address placed where that network chooses: none of it is a public receiver.
            if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
                return true;
            }
            // 6to4 (2002::/16) tunnels to the IPv4 address in its second and third groups.
            if s[0] == 0x2002 {
                return is_forbidden_v4(v4(s[1], s[2]));
            }
            // Teredo (2001:0::/32) tunnels to an IPv4 address it hides (inverted) in its last groups, through a
            // server named in the middle: no receiver needs it, and either address could be internal.
            if s[0] == 0x2001 && s[1] == 0 {
                return true;
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (s[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0)
                || s[0..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible ::a.b.c.d (deprecated)
        }
    }
}

fn is_forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier-grade NAT)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240 // reserved
}

/// The addresses `url` may be sent to; an error when it resolves nowhere or to any address the policy forbids.
pub async fn resolve_allowed(url: &Url, allow_private: bool) -> Result<Vec<SocketAddr>, String> {
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        Some(url::Host::Domain(name)) => {
            match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, port))).await {
                Ok(Ok(addrs)) => addrs.collect(),
                Ok(Err(_)) | Err(_) => Vec::new(),
            }
        }
        None => return Err("must name a host".into()),
    };
    // Resolving nowhere and resolving inward answer alike (the operator, not the API client, decides about private
    // receivers; the message names the switch because the one reading it is usually a developer pointing a
    // subscription at a receiver on their own machine).
    if addrs.is_empty() || (!allow_private && addrs.iter().any(|a| is_forbidden(a.ip()))) {
        return Err(NOT_REACHABLE.into());
    }
    Ok(addrs)
}

/// The dispatcher's DNS resolver: resolves as usual, then keeps only the addresses the policy allows, so the
/// connection can only go where the policy says (no gap between check and use).
pub struct PolicyResolver {
    pub allow_private: bool,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> =
                resolved.into_iter().filter(|a| allow_private || !is_forbidden(a.ip())).collect();
            if allowed.is_empty() {
                return Err("the host resolves only to addresses webhooks may not reach".into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(s: &str) -> bool {
        is_forbidden(s.parse().unwrap())
    }

    #[test]
    fn private_and_special_addresses_are_forbidden() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
            // 6to4 of 127.0.0.1, 10.0.0.1 and 169.254.169.254.
            "2002:7f00:1::1",
            "2002:a00:1::",
            "2002:a9fe:a9fe::1",
            // Teredo, whatever it hides.
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001::1",
        ] {
            assert!(forbidden(ip), "{ip} must be forbidden");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "2002:5db8:d822::1",
            "2001:4860::8888",
        ] {
            assert!(!forbidden(ip), "{ip} is public");
        }
    }

    #[test]
    fn only_http_urls_with_a_host() {
        assert!(parse("https://example.com/hook").is_ok());
        assert!(parse("http://93.184.216.34:8080/x").is_ok());
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "example.com/hook",
            "https://",
            "javascript:x",
            "https://user:secret@example.com/hook",
            "https://user@example.com/hook",
            "https://:secret@example.com/hook",
        ] {
            assert!(parse(bad).is_err(), "{bad} must be refused");
        }
    }

    #[tokio::test]
    async fn literal_private_addresses_are_refused_unless_allowed() {
        let url = parse("http://127.0.0.1:9/x").unwrap();
        assert!(resolve_allowed(&url, false).await.is_err());
        assert!(resolve_allowed(&url, true).await.is_ok());
        let localhost = parse("http://localhost:9/x").unwrap();
        assert_eq!(resolve_allowed(&localhost, false).await, Err(NOT_REACHABLE.to_string()));
        let nowhere = parse("http://no-such-host.invalid/x").unwrap();
        assert_eq!(resolve_allowed(&nowhere, false).await, Err(NOT_REACHABLE.to_string()), "the same answer");
        assert!(resolve_allowed(&nowhere, true).await.is_err());
    }
}
