package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// run is the whole command, so tests can run it in-process.

// maxRunDays is the longest --run-days: about ten years.
const maxRunDays = 3650

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "token" {
		return runToken(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "audit" {
		return runAudit(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "user" {
		return runUser(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet("board", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:7777", "address to listen on (127.0.0.1:0 picks a free port)")
	where := storeFlags(fs, getenv)
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	tlsCert := fs.String("tls-cert", "", "PEM certificate: serve HTTPS (HTTP/2 and HTTP/1.1) instead of plain HTTP")
	tlsKey := fs.String("tls-key", "", "PEM private key for --tls-cert")
	publicURL := fs.String("public-url", getenv("SYMPHONIX_PUBLIC_URL"), "the board's URL as people's browsers reach it, for the links it prints (default: the listen address, 0.0.0.0 and [::] as 127.0.0.1 and localhost) (env SYMPHONIX_PUBLIC_URL)")
	hashRate := fs.Float64("hash-rate", 0, "argon2id hashes (sign-in, setup, verify secrets) the board starts a second at most; 0: 5 for each core but one")
	runDays := fs.Int("run-days", 30, "days runs are kept after they end (or start, for one that never ended); 0 keeps them for ever")
	var proxies []netip.Prefix
	fs.Func("trusted-proxy", "`CIDR` (or address) of a reverse proxy whose X-Forwarded-For or Forwarded header gives the client's address; repeatable", func(s string) error {
		p, err := parseTrustedProxy(s)
		if err != nil {
			return err
		}
		proxies = append(proxies, p)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *hashRate < 0 {
		return fmt.Errorf("--hash-rate: %v, must not be negative", *hashRate)
	}
	if *runDays < 0 || *runDays > maxRunDays {
		return fmt.Errorf("--run-days: %d, want 0 (keep for ever) to %d", *runDays, maxRunDays)
	}
	runRetention := time.Duration(*runDays) * 24 * time.Hour
	if *runDays == 0 {
		runRetention = -1 // for ever
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if *publicURL != "" {
		u, err := checkPublicURL(*publicURL)
		if err != nil {
			return fmt.Errorf("--public-url: %w", err)
		}
		*publicURL = u
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// One board per SQLite store; the lock outlives the store's client.
	lock, err := store.TakeLock(where.dsn())
	if err != nil {
		return where.flagErr(err)
	}
	defer lock.Release()
	db, err := where.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	b, err := board.New(ctx, board.Config{Store: db, Logger: log, TrustedProxies: proxies, HashesPerSecond: *hashRate,
		RunRetention: runRetention})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		b.Close()
		return err
	}
	scheme := "http"
	if *tlsCert != "" {
		scheme = "https"
	}
	base := *publicURL
	if base == "" {
		base = listenURL(scheme, *listen, ln.Addr())
	}
	if err := recordPublicURL(ctx, db, base); err != nil {
		b.Close()
		ln.Close()
		return err
	}
	// A board with nobody prints a one-time link that creates the first
	// admin; every start prints a new one and the old one stops working.
	link, first, err := identity.NewUsers(db, nil).FirstRun(ctx)
	if err != nil {
		b.Close()
		ln.Close()
		return err
	}
	msg := fmt.Sprintf("board: store %s; listening on %s://%s; public URL %s\n", where.describe(), scheme, ln.Addr(), base)
	if first {
		msg += fmt.Sprintf("board: first run: create the first admin at %s (works once, until %s)\n", link.URL(base), link.ExpiresAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprint(stdout, msg)
	if *tlsCert != "" {
		err = b.ServeTLS(ctx, ln, *tlsCert, *tlsKey)
	} else {
		err = b.Serve(ctx, ln)
	}
	log.Info("board stopped")
	return err
}

// parseTrustedProxy reads a --trusted-proxy: a network in CIDR notation,
// or one address.
func parseTrustedProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q: want a CIDR such as 10.0.0.0/8, or an address", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// storeOptions are the flags that say where the store is.
type storeOptions struct {
	data     *string
	database *string
}

func storeFlags(fs *flag.FlagSet, getenv func(string) string) storeOptions {
	dataDefault := getenv("SYMPHONIX_DATA")
	if dataDefault == "" {
		dataDefault = ".symphonix"
	}
	return storeOptions{
		data:     fs.String("data", dataDefault, "folder of the embedded store (board.db) (env SYMPHONIX_DATA)"),
		database: fs.String("database", getenv("SYMPHONIX_DATABASE"), "store DSN: postgres://…, or an SQLite file: URL or path; overrides --data (env SYMPHONIX_DATABASE)"),
	}
}

func (o storeOptions) dsn() string {
	if *o.database != "" {
		return *o.database
	}
	return store.SQLiteDSN(*o.data)
}

// describe names the store without any credentials in it.
func (o storeOptions) describe() string {
	if *o.database != "" {
		if i := strings.IndexAny(*o.database, ":"); i > 0 && strings.HasPrefix(*o.database, "postgres") {
			return "postgres"
		}
		return "sqlite (--database)"
	}
	return "sqlite " + filepath.Join(*o.data, "board.db")
}

func (o storeOptions) open(ctx context.Context) (*ent.Client, error) {
	db, err := store.Open(ctx, o.dsn())
	if err != nil {
		return nil, o.flagErr(err)
	}
	return db, nil
}

// flagErr names --database in an error about the DSN it gave.
func (o storeOptions) flagErr(err error) error {
	if *o.database != "" && errors.Is(err, store.ErrDSN) {
		return fmt.Errorf("--database: %w", err)
	}
	return err
}

var errUsage = errors.New("usage: board token operator|agent|revoke|list [flags]")
