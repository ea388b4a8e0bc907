package board

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// NewHTTPServer is the http.Server for a board: HTTP/1 and HTTP/2 (h2c
// without TLS), HTTP/2 PINGs after PingInterval of silence and a
// PingTimeout to answer them, and no server-wide read or write deadline,
// because links and watches are long-lived streams; each request that is
// not a stream gets a read deadline of its own (bodyrate.go). What net/http
// and the HTTP/2 server have to say (a failed TLS handshake, a client
// breaking the protocol) goes to the board's logger at level warn, as
// lines with msg set to what they said (docs/logs.md).
func (b *Board) NewHTTPServer() *http.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           b.handler,
		Protocols:         p,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelWarn),
		HTTP2: &http.HTTP2Config{
			SendPingTimeout: b.cfg.PingInterval,
			PingTimeout:     b.cfg.PingTimeout,
			// A small HPACK table for what the board sends: a link gets few
			// headers, once. The decoder's table stays at the default: a
			// client may use the default size until it has our SETTINGS, so
			// a smaller one fails the first requests of a busy new
			// connection with COMPRESSION_ERROR (TestConcurrentCallsOnANewConnection).
			MaxEncoderHeaderTableSize: 256,
		},
	}
}

// Serve serves the board on ln, and Config.MetricsListen if set, until
// ctx ends; then it turns not ready, waits Config.DrainDelay, ends every
// link, shuts the server down and closes the board.
func (b *Board) Serve(ctx context.Context, ln net.Listener) error {
	return b.serve(ctx, ln, "", "")
}

// ServeTLS is Serve over TLS (HTTP/2 and HTTP/1.1), with a certificate
// and key in PEM files.
func (b *Board) ServeTLS(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	if certFile == "" || keyFile == "" {
		return errors.New("board: ServeTLS needs a certificate and a key")
	}
	return b.serve(ctx, ln, certFile, keyFile)
}

// newMetricsServer is the http.Server for Config.MetricsListen: short
// requests only, so it has the deadlines the board's own server cannot.
func (b *Board) newMetricsServer(base context.Context) *http.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Protocols:         p,
		Handler:           b.MetricsHandler(),
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      scrapeWithin + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
}

func (b *Board) serve(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	srv := b.NewHTTPServer()
	base := context.WithoutCancel(ctx)
	srv.BaseContext = func(net.Listener) context.Context { return base }
	var hl net.Listener = ln
	if certFile == "" {
		hl = newH2CListener(base, ln, srv)
	}
	if mln := b.takeMetricsListener(); mln != nil {
		msrv := b.newMetricsServer(base)
		mdone := make(chan struct{})
		go func() {
			defer close(mdone)
			if err := msrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				b.log.ErrorContext(base, "serve metrics", "err", err.Error())
			}
		}()
		// The probes there answer until the board's own server is down.
		defer func() {
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if msrv.Shutdown(shutdownCtx) != nil {
				msrv.Close()
			}
			<-mdone
		}()
	}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
			return
		}
		errc <- srv.Serve(hl)
	}()
	select {
	case err := <-errc:
		hl.Close()
		b.Close()
		return err
	case <-ctx.Done():
	}
	// Not ready first, for DrainDelay, so that load balancers stop sending
	// work; then end the streams, which never go idle; then let unary
	// calls finish. The line says the board heard it: an operator
	// watching the log sees the drain begin, not only its end.
	b.drain()
	b.log.LogAttrs(context.Background(), slog.LevelInfo, "shutting down: not ready", slog.Duration("drain_delay", b.cfg.DrainDelay))
	if d := b.cfg.DrainDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case err := <-errc:
			t.Stop()
			hl.Close()
			b.Close()
			return err
		}
	}
	b.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	hl.Close()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return err
}
