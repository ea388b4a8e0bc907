// Package boardtest runs a real board for tests: the board package on a
// real HTTP/2 (h2c) server over loopback, on an embedded SQLite store in a
// temporary folder, called through the generated clients.
package boardtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Options tune the board under test; zero values take board's defaults,
// except where noted.
type Options struct {
	PingInterval   time.Duration
	PingTimeout    time.Duration
	OfflineGrace   time.Duration
	RevocationPoll time.Duration
	SessionTTL     time.Duration
	WatchHeartbeat time.Duration
	// Now: the board's clock; nil is time.Now. A test of a limit counted
	// over a window holds the clock still, so a slow machine cannot let
	// the window slide.
	Now func() time.Time
	// ConcurrentHashes: board.Config's; zero means the board's default.
	ConcurrentHashes int
	// BoardHashRate: use the board's own HashesPerSecond. Otherwise the
	// board starts up to 1,000 hashes a second, so that a test that signs
	// in or verifies many times in a row is not answered busy.
	BoardHashRate bool
	// BodyGrace: board.Config's; zero means 10 s.
	BodyGrace time.Duration
	// Dir: the store's folder; empty means a new t.TempDir().
	Dir string
	// Addr: where to listen; empty means 127.0.0.1:0.
	Addr string
	// DSN: the store; empty means SQLite in Dir.
	DSN string
	// TLS: serve HTTPS with a self-signed certificate (see TLSConfig).
	TLS bool
	// Limits: the board's limits; zero fields take its defaults.
	Limits board.Limits
	// RunRetention: board.Config's; zero means its default.
	RunRetention time.Duration
	// ForgetAfter: board.Config's; zero means its default.
	ForgetAfter time.Duration
	// MetricsListen and DrainDelay: board.Config's. MetricsListen
	// 127.0.0.1:0 takes a free port (Board.MetricsURL).
	MetricsListen string
	DrainDelay    time.Duration
	// LinksPerSecond and LinkMaxAge: board.Config's; zero means its
	// default.
	LinksPerSecond float64
	LinkMaxAge     time.Duration
	// NotifyWebhooks: board.Config's.
	NotifyWebhooks []string
	// NotifySMTP, NotifyFrom and NotifySMTPRoots: board.Config's (see
	// StartSMTP).
	NotifySMTP      string
	NotifyFrom      string
	NotifySMTPRoots *x509.CertPool
	// Logger: board.Config's; nil discards.
	Logger *slog.Logger
	// TracerProvider: board.Config's; nil is off.
	TracerProvider trace.TracerProvider
}

// Board is a running board under test.
type Board struct {
	t     testing.TB
	opts  Options
	Dir   string
	URL   string
	Addr  string
	Store *ent.Client
	Board *board.Board
	// MetricsURL is http:// and the address of Options.MetricsListen;
	// empty without one.
	MetricsURL string

	stop  context.CancelFunc
	done  chan error
	roots *x509.CertPool
	cert  string
	key   string
}

// Start runs a board until the test ends.
func Start(t testing.TB, opts Options) *Board {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	b := &Board{t: t, opts: opts, Dir: opts.Dir}
	b.start()
	t.Cleanup(b.Stop)
	return b
}

func (b *Board) start() {
	b.t.Helper()
	ctx := context.Background()
	dsn := b.opts.DSN
	if dsn == "" {
		dsn = store.SQLiteDSN(b.Dir)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		b.t.Fatalf("open store: %v", err)
	}
	var ln net.Listener
	for i := 0; ; i++ {
		ln, err = net.Listen("tcp", b.opts.Addr)
		if err == nil || i == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond) // the port of a board just stopped
	}
	if err != nil {
		db.Close()
		b.t.Fatalf("listen: %v", err)
	}
	b.Addr = ln.Addr().String()
	b.opts.Addr = b.Addr // a restart comes back on the same port
	b.URL = "http://" + b.Addr
	if b.opts.TLS && b.cert == "" {
		b.cert, b.key, b.roots = selfSigned(b.t, b.t.TempDir())
	}
	if b.opts.TLS {
		b.URL = "https://" + b.Addr
	}
	bd, err := board.New(ctx, board.Config{
		Store:           db,
		PublicURL:       b.URL,
		PingInterval:    b.opts.PingInterval,
		PingTimeout:     b.opts.PingTimeout,
		OfflineGrace:    b.opts.OfflineGrace,
		RevocationPoll:  b.opts.RevocationPoll,
		SessionTTL:      b.opts.SessionTTL,
		WatchHeartbeat:  b.opts.WatchHeartbeat,
		Now:             b.opts.Now,
		Limits:          b.opts.Limits,
		RunRetention:    b.opts.RunRetention,
		ForgetAfter:     b.opts.ForgetAfter,
		LinksPerSecond:  b.opts.LinksPerSecond,
		LinkMaxAge:      b.opts.LinkMaxAge,
		NotifyWebhooks:  b.opts.NotifyWebhooks,
		NotifySMTP:      b.opts.NotifySMTP,
		NotifyFrom:      b.opts.NotifyFrom,
		NotifySMTPRoots: b.opts.NotifySMTPRoots,
		Logger:          b.opts.Logger,
		TracerProvider:  b.opts.TracerProvider,

		ConcurrentHashes: b.opts.ConcurrentHashes,
		HashesPerSecond:  hashRate(b.opts.BoardHashRate),
		BodyGrace:        b.opts.BodyGrace,
		MetricsListen:    b.opts.MetricsListen,
		DrainDelay:       b.opts.DrainDelay,
		SpoolDir:         b.Dir,
	})
	if err != nil {
		ln.Close()
		db.Close()
		b.t.Fatalf("new board: %v", err)
	}
	if a := bd.MetricsAddr(); a != "" {
		b.MetricsURL = "http://" + a
	}
	b.Store, b.Board = db, bd
	ctx, b.stop = context.WithCancel(ctx)
	b.done = make(chan error, 1)
	go func() {
		if b.opts.TLS {
			b.done <- bd.ServeTLS(ctx, ln, b.cert, b.key)
			return
		}
		b.done <- bd.Serve(ctx, ln)
	}()
}

// Stop shuts the board down gracefully. Stopping twice is harmless.
func (b *Board) Stop() {
	if b.stop == nil {
		return
	}
	b.stop()
	if err := <-b.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		b.t.Errorf("board stopped with: %v", err)
	}
	b.Store.Close()
	b.stop = nil
}

// Restart stops the board and starts it again on the same store and port.
func (b *Board) Restart() {
	b.t.Helper()
	b.Stop()
	b.start()
}

// OperatorToken mints an operator token.
func (b *Board) OperatorToken(name string, role identity.Role) string {
	b.t.Helper()
	return b.mint(identity.MintOptions{Kind: identity.KindOperator, Name: name, Role: role}).Token
}

// AgentToken mints an agent token for an agent name.
func (b *Board) AgentToken(name string) string {
	b.t.Helper()
	return b.mint(identity.MintOptions{Kind: identity.KindAgent, Name: name}).Token
}

// Mint mints any token and returns it with its id.
func (b *Board) Mint(o identity.MintOptions) identity.Minted {
	b.t.Helper()
	return b.mint(o)
}

func (b *Board) mint(o identity.MintOptions) identity.Minted {
	m, err := b.Board.Tokens().Mint(context.Background(), o)
	if err != nil {
		b.t.Fatalf("mint: %v", err)
	}
	return m
}

// Protocols are the wire protocols RPC tests run over.
var Protocols = map[string][]connecthttp.Option{
	"connect": nil,
	"grpc":    {connecthttp.WithGRPC()},
}

// Client is a connect client for the board over HTTP/2, sending token.
func (b *Board) Client(token string, opts ...connecthttp.Option) *connect.Client {
	return newClient(b.URL, b.TLSConfig(), token, opts...)
}

// NewClient is a connect client for a board at url over h2c, sending token.
func NewClient(url, token string, opts ...connecthttp.Option) *connect.Client {
	return newClient(url, nil, token, opts...)
}

func newClient(url string, tlsConfig *tls.Config, token string, opts ...connecthttp.Option) *connect.Client {
	hc := httpClient(tlsConfig)
	var ics []connect.ClientInterceptor
	if token != "" {
		ics = append(ics, bearer(token))
	}
	return connect.NewClient(connecthttp.NewTransport(hc, url, opts...), ics...)
}

func bearer(token string) connect.ClientInterceptor {
	return func(next connect.ClientFunc) connect.ClientFunc {
		return func(ctx context.Context, spec connect.Spec) (connect.ClientStream, error) {
			info, ok := connect.CallInfoForClientContext(ctx)
			if !ok {
				ctx, info = connect.NewClientContext(ctx)
			}
			info.RequestHeader().Set("Authorization", "Bearer "+token)
			return next(ctx, spec)
		}
	}
}

// Agents is an AgentService client.
func (b *Board) Agents(token string, opts ...connecthttp.Option) boardv1connect.AgentServiceClient {
	return boardv1connect.NewAgentServiceClient(b.Client(token, opts...))
}

// Eventually polls cond every 10 ms until it is true or within passes.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hashRate is board.Config.HashesPerSecond for a test board: the board's
// own (zero) when board is true, and 1,000 a second otherwise.
func hashRate(board bool) float64 {
	if board {
		return 0
	}
	return 1000
}
