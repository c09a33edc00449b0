//! Which request `serve` answers, decided before anything is read: the
//! method, the request target and the `Host` header. No path is ever mapped
//! to a file: a target is one of a fixed set of strings or it is not found,
//! so `/../`, `%2e%2e`, `//`, backslashes and absolute URIs all miss.

use std::net::{IpAddr, SocketAddr};

/// What a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `/`: the page.
    Page,
    /// `/app.js`: the page's script.
    Script,
    /// `/app.css`: the page's style sheet.
    Style,
    /// `/api/overview.json`: directives, escalations, violations, patterns, handoffs.
    Overview,
    /// `/api/series.json`: violations and escalations per day per directive.
    Series,
    /// `/events`: the live event stream (server-sent events).
    Events,
}

/// Why a request is not answered with its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 404: not one of the routes.
    NotFound,
    /// 405: a route, with a method other than GET or HEAD.
    MethodNotAllowed,
}

/// The routes by exact path. Matched byte for byte, never decoded.
const ROUTES: [(&str, Route); 6] = [
    ("/", Route::Page),
    ("/app.js", Route::Script),
    ("/app.css", Route::Style),
    ("/api/overview.json", Route::Overview),
    ("/api/series.json", Route::Series),
    ("/events", Route::Events),
];

impl Route {
    /// Its path.
    pub fn path(self) -> &'static str {
        ROUTES
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("/", |(p, _)| p)
    }
}

/// The route for `method` and the request `target` (the origin-form
/// `/path?query`; a query is allowed and ignored, a fragment never reaches
/// a server). The path is compared as it came, undecoded: a route has no
/// percent-encoded spelling.
pub fn route(method: &str, target: &str) -> Result<Route, Refusal> {
    let path = target.split_once('?').map_or(target, |(p, _)| p);
    let route = ROUTES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, r)| *r)
        .ok_or(Refusal::NotFound)?;
    match method {
        "GET" | "HEAD" => Ok(route),
        _ => Err(Refusal::MethodNotAllowed),
    }
}

/// Is `host` (the request's `Host` header) a name of the server bound at
/// `bound`? Only `localhost` and IP literals are, with the bound port: a
/// page served from another origin that re-points its DNS name at this
/// machine (DNS rebinding) sends its own name, and is refused. A server
/// bound to one address answers only that address (or `localhost` when it
/// is a loopback one); one bound to every address answers any IP literal it
/// can be reached by (`0.0.0.0`: IPv4 ones; `::`, dual-stack: any).
pub fn host_allowed(host: Option<&str>, bound: SocketAddr) -> bool {
    let Some((name, port)) = host.and_then(split_host) else {
        return false;
    };
    if port != bound.port() {
        return false;
    }
    let ip = bound.ip();
    if name.eq_ignore_ascii_case("localhost") {
        return ip.is_loopback() || ip.is_unspecified();
    }
    match name.parse::<IpAddr>() {
        // `::` is dual-stack (IPv4 reaches it too); `0.0.0.0` is IPv4 only.
        Ok(asked) if ip.is_unspecified() => ip.is_ipv6() || asked.is_ipv4(),
        Ok(asked) => asked == ip,
        Err(_) => false,
    }
}

/// `name[:port]` or `[v6][:port]`; no port means 80.
fn split_host(host: &str) -> Option<(&str, u16)> {
    let host = host.trim();
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        (name, after.strip_prefix(':'))
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    let port = match port {
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        Some(_) => return None,
        None => 80,
    };
    (!name.is_empty()).then_some((name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_exact_paths() {
        assert_eq!(route("GET", "/"), Ok(Route::Page));
        assert_eq!(route("HEAD", "/api/overview.json"), Ok(Route::Overview));
        assert_eq!(route("GET", "/events?x=1"), Ok(Route::Events));
        for target in [
            "",
            "//",
            "/../",
            "/../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/app.js/",
            "/APP.JS",
            "/api/",
            "/api/overview.json/..",
            "/api/%6fverview.json",
            "http://127.0.0.1:7777/",
            "//evil.example/",
            "\\..\\",
            "*",
            "/index.html",
            "/.swarm/config.toml",
        ] {
            assert_eq!(route("GET", target), Err(Refusal::NotFound), "{target:?}");
        }
        for route_path in ROUTES.iter().map(|(p, _)| *p) {
            assert_eq!(
                route("POST", route_path),
                Err(Refusal::MethodNotAllowed),
                "{route_path}"
            );
        }
        assert_eq!(route("DELETE", "/nope"), Err(Refusal::NotFound));
        assert_eq!(Route::Series.path(), "/api/series.json");
    }

    #[test]
    fn only_the_bound_names_are_hosts() {
        let lo: SocketAddr = "127.0.0.1:7777".parse().expect("addr");
        assert!(host_allowed(Some("127.0.0.1:7777"), lo));
        assert!(host_allowed(Some("localhost:7777"), lo));
        assert!(host_allowed(Some("LocalHost:7777"), lo));
        for bad in [
            None,
            Some(""),
            Some("127.0.0.1"),
            Some("127.0.0.1:80"),
            Some("127.0.0.1:7778"),
            Some("evil.example:7777"),
            Some("127.0.0.1.nip.io:7777"),
            Some("10.0.0.1:7777"),
            Some("127.0.0.1:7777:1"),
            Some("127.0.0.1:+7777"),
            Some("[::1]:7777"),
        ] {
            assert!(!host_allowed(bad, lo), "{bad:?}");
        }
        let v6: SocketAddr = "[::1]:8000".parse().expect("addr");
        assert!(host_allowed(Some("[::1]:8000"), v6));
        assert!(host_allowed(Some("localhost:8000"), v6));
        assert!(!host_allowed(Some("[::1]"), v6));
        let all: SocketAddr = "0.0.0.0:8000".parse().expect("addr");
        assert!(host_allowed(Some("192.0.2.7:8000"), all));
        assert!(!host_allowed(Some("box.example:8000"), all));
        assert!(!host_allowed(Some("[::1]:8000"), all));
        let dual: SocketAddr = "[::]:8000".parse().expect("addr");
        assert!(host_allowed(Some("127.0.0.1:8000"), dual));
        assert!(host_allowed(Some("[2001:db8::1]:8000"), dual));
        assert!(host_allowed(Some("localhost:8000"), dual));
        assert!(!host_allowed(Some("box.example:8000"), dual));
        let on80: SocketAddr = "127.0.0.1:80".parse().expect("addr");
        assert!(host_allowed(Some("127.0.0.1"), on80));
    }
}
