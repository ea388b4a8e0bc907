package board

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// h2cListener sorts the connections a listener accepts: those that open
// with the HTTP/2 client preface (agents, gRPC and Connect clients speaking
// h2c) are served by an HTTP/2 server directly; the rest (browsers, curl,
// HTTP/1) are handed to the http.Server through Accept.
//
// net/http can serve h2c itself, but it sets up an HTTP/1 connection first
// and keeps its 8 KiB of read and write buffers for the life of the HTTP/2
// connection. A board holds one connection per running agent, so that is
// 80 MB for ten thousand agents; serving the preface connections with
// x/net/http2 directly does not keep them (docs/benchmarks.md).
type h2cListener struct {
	net.Listener
	srv *http.Server
	//lint:ignore SA1019 deliberate: net/http's own h2c keeps 8 KiB of HTTP/1 buffers per connection for its life (see above).
	h2   *http2.Server
	ctx  context.Context
	http chan net.Conn

	mu     sync.Mutex
	h2c    map[net.Conn]struct{}
	closed bool
	done   chan struct{}
	err    error
}

func newH2CListener(ctx context.Context, ln net.Listener, srv *http.Server) *h2cListener {
	l := &h2cListener{
		Listener: ln,
		srv:      srv,
		//lint:ignore SA1019 deliberate, as on the h2 field: the memory a connection keeps.
		h2:   &http2.Server{},
		ctx:  ctx,
		http: make(chan net.Conn),
		h2c:  make(map[net.Conn]struct{}),
		done: make(chan struct{}),
	}
	go l.acceptLoop()
	return l
}

// Accept returns the next connection that is not h2c.
func (l *h2cListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.http:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close stops accepting and closes every h2c connection.
func (l *h2cListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.Listener.Close()
	for c := range l.h2c {
		c.Close()
	}
	return err
}

func (l *h2cListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			l.err = err
			close(l.done)
			return
		}
		go l.sort(c)
	}
}

// sort reads just enough of a new connection to tell h2c from the rest.
func (l *h2cListener) sort(c net.Conn) {
	timeout := l.srv.ReadHeaderTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	var buf [len(http2.ClientPreface)]byte
	n := 0
	for n < len(buf) && string(buf[:n]) == http2.ClientPreface[:n] {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			if n == 0 {
				c.Close()
				return
			}
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	if n == len(buf) && string(buf[:]) == http2.ClientPreface {
		l.serveH2C(c)
		return
	}
	pc := &prefixConn{Conn: c, prefix: append([]byte(nil), buf[:n]...)}
	select {
	case l.http <- pc:
	case <-l.done:
		c.Close()
	}
}

func (l *h2cListener) serveH2C(c net.Conn) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		c.Close()
		return
	}
	l.h2c[c] = struct{}{}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.h2c, c)
		l.mu.Unlock()
		c.Close()
	}()
	//lint:ignore SA1019 ServeConn is the one way to serve HTTP/2 on a connection without net/http's HTTP/1 setup; see the type's comment.
	l.h2.ServeConn(c, &http2.ServeConnOpts{ //nolint:staticcheck
		Context:          l.ctx,
		BaseConfig:       l.srv,
		Handler:          l.srv.Handler,
		SawClientPreface: true,
	})
}

// prefixConn replays bytes already read from a connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		if len(c.prefix) == 0 {
			c.prefix = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}
