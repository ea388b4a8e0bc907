package board

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestSourceOf: the client address is the peer unless the peer is a
// trusted proxy; then it is the first address, from the right of the
// proxies' list, that is not a trusted proxy. What a client writes in the
// header itself is never read.
func TestSourceOf(t *testing.T) {
	t.Parallel()
	b := &Board{cfg: Config{TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("fd00::/8"),
	}}}
	none := &Board{}
	for _, tc := range []struct {
		name   string
		board  *Board
		peer   string
		header map[string][]string
		want   string
	}{
		{"untrusted peer, no header", b, "203.0.113.9:5555", nil, "203.0.113.9"},
		{"untrusted peer's header ignored", b, "203.0.113.9:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "203.0.113.9"},
		{"no trusted proxies: header ignored", none, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "10.0.0.1"},
		{"trusted peer, no header", b, "10.0.0.1:5555", nil, "10.0.0.1"},
		{"trusted peer, one hop", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}}, "198.51.100.1"},
		{"a client's own entry to the left is not read", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"1.2.3.4, 198.51.100.1"}}, "198.51.100.1"},
		{"trusted hops skipped", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"1.2.3.4, 198.51.100.1, 10.1.1.1,10.2.2.2"}}, "198.51.100.1"},
		{"several header lines in order", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"1.2.3.4, 198.51.100.1", "10.1.1.1"}}, "198.51.100.1"},
		{"every hop trusted: the leftmost", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"10.3.3.3, 10.2.2.2"}}, "10.3.3.3"},
		{"garbage hop: the last trusted before it", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1, unknown, 10.2.2.2"}}, "10.2.2.2"},
		{"garbage at once: the peer", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1, not-an-ip"}}, "10.0.0.1"},
		{"hop with a port", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1:4711"}}, "198.51.100.1"},
		{"IPv6 hop", b, "[fd00::1]:5555", map[string][]string{"X-Forwarded-For": {"2001:db8::7"}}, "2001:db8::7"},
		{"IPv4-mapped peer and hop", b, "[::ffff:10.0.0.1]:5555", map[string][]string{"X-Forwarded-For": {"::ffff:198.51.100.1"}}, "198.51.100.1"},
		{"Forwarded", b, "10.0.0.1:5555", map[string][]string{"Forwarded": {`for=1.2.3.4, for=198.51.100.1;proto=https;by=10.0.0.1`}}, "198.51.100.1"},
		{"Forwarded, quoted IPv6 with a port", b, "10.0.0.1:5555", map[string][]string{"Forwarded": {`For="[2001:db8:cafe::17]:4711"`}}, "2001:db8:cafe::17"},
		{"Forwarded, a quoted comma", b, "10.0.0.1:5555", map[string][]string{"Forwarded": {`for=198.51.100.1;host="a,b", for=10.2.2.2`}}, "198.51.100.1"},
		{"Forwarded, unknown hop", b, "10.0.0.1:5555", map[string][]string{"Forwarded": {`for=198.51.100.1, for=unknown`}}, "10.0.0.1"},
		{"Forwarded, an element without for", b, "10.0.0.1:5555", map[string][]string{"Forwarded": {`for=198.51.100.1, proto=https`}}, "10.0.0.1"},
		{"X-Forwarded-For is read before Forwarded", b, "10.0.0.1:5555", map[string][]string{"X-Forwarded-For": {"198.51.100.1"}, "Forwarded": {"for=1.2.3.4"}}, "198.51.100.1"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/auth/signin", nil)
		r.RemoteAddr = tc.peer
		for k, vs := range tc.header {
			for _, v := range vs {
				r.Header.Add(k, v)
			}
		}
		if got := tc.board.sourceOf(r); got != tc.want {
			t.Errorf("%s: sourceOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}
