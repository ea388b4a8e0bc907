package board

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// sourceOf is the address a request came from, for the per-address limits
// and the audit log: the TCP peer; or, when the peer is a trusted proxy
// (Config.TrustedProxies), the address the proxies say the request came
// from.
//
// The proxies' word is X-Forwarded-For, or Forwarded (RFC 7239) when the
// request has no X-Forwarded-For. Each proxy appends the address it took
// the request from, so the list is read from the right: trusted proxies
// are skipped, and the first address that is not one is the client. What a
// client wrote itself is to the left of that, and never read. A hop that
// is not an address ("unknown", an obfuscated name, garbage) stops the
// walk at the last trusted hop before it; a list of trusted proxies only
// gives its leftmost.
func (b *Board) sourceOf(r *http.Request) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		return host
	}
	if !b.trustedProxy(peer) {
		return peer.String()
	}
	hops := forwardedHops(r.Header)
	addr := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			break
		}
		addr = hop
		if !b.trustedProxy(hop) {
			break
		}
	}
	return addr.String()
}

// trustedProxy says whether addr is in Config.TrustedProxies.
func (b *Board) trustedProxy(addr netip.Addr) bool {
	for _, p := range b.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// forwardedHops is the list of addresses a request passed through, oldest
// first, as written: from X-Forwarded-For, or else from the for= of each
// Forwarded element (an element without one is an empty hop).
func forwardedHops(h http.Header) []string {
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		var hops []string
		for _, v := range xff {
			for hop := range strings.SplitSeq(v, ",") {
				hops = append(hops, strings.TrimSpace(hop))
			}
		}
		return hops
	}
	var hops []string
	for _, v := range h.Values("Forwarded") {
		for _, elem := range splitQuoted(v, ',') {
			hop := ""
			for _, pair := range splitQuoted(elem, ';') {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(name), "for") {
					hop = strings.Trim(strings.TrimSpace(value), `"`)
				}
			}
			hops = append(hops, hop)
		}
	}
	return hops
}

// splitQuoted splits s at sep, except inside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == '\\' && quoted:
			i++
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseHop reads one hop: an IPv4 or IPv6 address, with or without a
// port, IPv6 in brackets when it has one. IPv4-mapped IPv6 addresses are
// read as IPv4, so that one client has one address.
func parseHop(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
