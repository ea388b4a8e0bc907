package boardtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy for half-open drills: it forwards connections to a
// target until Freeze, after which the connections it holds stop forwarding
// without closing — no FIN, no RST, no error, exactly what a dead NAT or a
// pulled cable gives. New connections are forwarded as usual. Cut, instead,
// closes every connection and refuses new ones until Mend: a server that
// went away and came back.
type Proxy struct {
	t      testing.TB
	ln     net.Listener
	target string

	mu     sync.Mutex
	pairs  []*Pair // forwarding
	frozen []*Pair // frozen, closed when the test ends
	cut    bool
}

// Pair is one proxied connection.
type Pair struct {
	frozen bool
	mu     sync.Mutex
	// ClientGone and ServerGone are closed when that side closes its end.
	ClientGone chan struct{}
	ServerGone chan struct{}
	// ClientGoneAt and ServerGoneAt are when; read them after the channel closes.
	ClientGoneAt time.Time
	ServerGoneAt time.Time
	client       net.Conn
	server       net.Conn
}

// NewProxy listens on loopback and forwards to target until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, pr := range append(p.pairs, p.frozen...) {
			pr.client.Close()
			pr.server.Close()
		}
	})
	return p
}

// PostgresProxy is NewProxy to the server of dsn, a PostgreSQL URL, and
// dsn reaching it through the proxy.
func PostgresProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	return p, u.String()
}

// Cut closes every connection the proxy forwards, and refuses new ones
// until Mend.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, pr := range p.pairs {
		pr.client.Close()
		pr.server.Close()
	}
	p.pairs = nil
}

// Mend forwards new connections again.
func (p *Proxy) Mend() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// URL is the proxy's http:// URL.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		pr := &Pair{ClientGone: make(chan struct{}), ServerGone: make(chan struct{}), client: c, server: s}
		p.mu.Lock()
		p.pairs = append(p.pairs, pr)
		p.mu.Unlock()
		go pr.pipe(c, s, pr.ClientGone, &pr.ClientGoneAt)
		go pr.pipe(s, c, pr.ServerGone, &pr.ServerGoneAt)
	}
}

// pipe copies src to dst until src ends; once frozen it reads and drops.
// A side that ends is passed on only while not frozen.
func (pr *Pair) pipe(src, dst net.Conn, gone chan struct{}, at *time.Time) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		pr.mu.Lock()
		frozen := pr.frozen
		pr.mu.Unlock()
		if n > 0 && !frozen {
			_, _ = dst.Write(buf[:n]) // a failed write shows up as the other side's read error
		}
		if err != nil {
			*at = time.Now()
			close(gone)
			if !frozen {
				dst.Close()
			}
			return
		}
	}
}

// Freeze stops forwarding on every connection open now and returns them.
func (p *Proxy) Freeze() []*Pair {
	p.mu.Lock()
	defer p.mu.Unlock()
	frozen := p.pairs
	p.pairs = nil
	p.frozen = append(p.frozen, frozen...)
	for _, pr := range frozen {
		pr.mu.Lock()
		pr.frozen = true
		pr.mu.Unlock()
	}
	return frozen
}
