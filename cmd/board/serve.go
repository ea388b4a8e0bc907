package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/store"
)

// maxRunDays is the longest --run-days: about ten years.
const maxRunDays = 3650

// defaultMetricsListen is --metrics-listen's default: loopback, the port
// commonly left to an exporter of one's own. When it is taken the board
// says so and serves without it; an address given otherwise must be had.
const defaultMetricsListen = "127.0.0.1:9464"

// maxDrainDelay is the longest --drain-delay.
const maxDrainDelay = 5 * time.Minute

// serveOptions are board serve's flags.
type serveOptions struct {
	listen    string
	tlsCert   string
	tlsKey    string
	publicURL string
	hashRate  float64
	runDays   int
	proxies   *[]string
	store     *storeOptions
	metrics   string
	drain     time.Duration
	forget    time.Duration
	linkRate  float64
	linkAge   time.Duration
	webhooks  *[]string
	smtp      string
	mailFrom  string
}

// serveFlags registers board serve's flags on fs: plain board, board serve
// and board config have them. A new flag of the board's is one line here.
func serveFlags(fs *pflag.FlagSet) *serveOptions {
	o := &serveOptions{store: storeFlags(fs, false)}
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7777", "address to listen on (127.0.0.1:0 picks a free port)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate: serve HTTPS (HTTP/2 and HTTP/1.1) instead of plain HTTP")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM private key for --tls-cert")
	fs.StringVar(&o.publicURL, "public-url", "", "the board's URL as people's browsers reach it, for the links it prints (default: the listen address, 0.0.0.0 and [::] as 127.0.0.1 and localhost)")
	fs.Float64Var(&o.hashRate, "hash-rate", 0, "argon2id hashes (sign-in, setup, verify secrets) the board starts a second at most; 0: 5 for each core but one")
	fs.IntVar(&o.runDays, "run-days", 30, "days runs are kept after they end (or start, for one that never ended); 0 keeps them for ever")
	fs.StringVar(&o.metrics, "metrics-listen", defaultMetricsListen, "an address to serve Prometheus metrics and the probes on without a token (keep it private); empty: none (the metrics are then at /metrics on --listen, for an operator token)")
	fs.DurationVar(&o.forget, "forget-after", board.DefaultForgetAfter, "how long an agent must have been offline before an admin may forget it (board agents forget); at least 1m")
	fs.Float64Var(&o.linkRate, "links-per-second", board.DefaultLinksPerSecond, "new agent links the board takes a second; past it a link is refused with a retry hint (the agent tries another board when it knows several)")
	fs.DurationVar(&o.linkAge, "link-max-age", board.DefaultLinkMaxAge, "how long an agent's link may last before the board ends it and the agent links again (links rebalance over boards); each link's is 90% to 100% of it; 0: none")
	fs.DurationVar(&o.drain, "drain-delay", 0, "on SIGTERM, how long to keep serving while not ready (/readyz 503) before ending links and streams; at most 5m")
	o.webhooks = cli.List(fs, "notify-webhook", "`URL` of an incoming webhook (Slack, Teams, Discord) told of each approval raised under a rule and each escalation; repeatable, at most 8; keep it secret", func(s string) error {
		return board.CheckWebhooks([]string{s})
	})
	cli.Secret(fs, "notify-webhook") // a webhook's URL is its credential
	fs.StringVar(&o.smtp, "notify-smtp", "", "`URL` of the mail server, smtp://user:password@host:587 (STARTTLS when offered) or smtps://host:465, through which each person who may decide an approval raised under a rule, or added by an escalation step, is emailed their own action link; keep it secret")
	cli.Secret(fs, "notify-smtp") // it carries the server's password
	fs.StringVar(&o.mailFrom, "notify-from", "", "`ADDRESS` emails come from (\"Board <board@example.com>\" gives a name); required with --notify-smtp")
	o.proxies = cli.List(fs, "trusted-proxy", "`CIDR` (or address) of a reverse proxy whose X-Forwarded-For or Forwarded header gives the client's address; repeatable", func(s string) error {
		_, err := parseTrustedProxy(s)
		return err
	})
	return o
}

func newServeCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the board (what plain board does)",
		Args:  cli.NoArgs,
	}
	s := serveFlags(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error { return s.serve(cmd.Context(), a) }
	return c
}

// check reads the flags that need more than their type; a bad one is a
// usage error naming it.
func (o *serveOptions) check() (runRetention time.Duration, proxies []netip.Prefix, err error) {
	if o.hashRate < 0 {
		return 0, nil, cli.Usagef("--hash-rate: %v, must not be negative", o.hashRate)
	}
	if o.runDays < 0 || o.runDays > maxRunDays {
		return 0, nil, cli.Usagef("--run-days: %d, want 0 (keep for ever) to %d", o.runDays, maxRunDays)
	}
	runRetention = time.Duration(o.runDays) * 24 * time.Hour
	if o.runDays == 0 {
		runRetention = -1 // for ever
	}
	if o.forget < time.Minute {
		return 0, nil, cli.Usagef("--forget-after: %s, want at least 1m", o.forget)
	}
	if o.linkRate <= 0 {
		return 0, nil, cli.Usagef("--links-per-second: %v, want more than 0", o.linkRate)
	}
	if o.linkAge != 0 && o.linkAge < time.Minute {
		return 0, nil, cli.Usagef("--link-max-age: %s, want 0 (none) or at least 1m", o.linkAge)
	}
	if o.drain < 0 || o.drain > maxDrainDelay {
		return 0, nil, cli.Usagef("--drain-delay: %s, want 0 to %s", o.drain, maxDrainDelay)
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return 0, nil, cli.Usagef("--tls-cert and --tls-key go together")
	}
	if o.publicURL != "" {
		u, err := checkPublicURL(o.publicURL)
		if err != nil {
			return 0, nil, cli.Usagef("--public-url: %w", err)
		}
		o.publicURL = u
	}
	if o.smtp != "" {
		if err := board.CheckSMTP(o.smtp); err != nil {
			return 0, nil, cli.Usagef("--notify-smtp: %w", err)
		}
		if err := board.CheckMailFrom(o.mailFrom); err != nil {
			return 0, nil, cli.Usagef("--notify-from: %w", err)
		}
	} else if o.mailFrom != "" {
		return 0, nil, cli.Usagef("--notify-from: given without --notify-smtp")
	}
	for _, s := range *o.proxies {
		p, err := parseTrustedProxy(s)
		if err != nil {
			return 0, nil, cli.Usagef("--trusted-proxy: %w", err)
		}
		proxies = append(proxies, p)
	}
	return runRetention, proxies, nil
}

func (o *serveOptions) serve(ctx context.Context, a *app) error {
	runRetention, proxies, err := o.check()
	if err != nil {
		return err
	}
	log := a.logger()
	where := o.store

	// One board per SQLite store; the lock outlives the store's client.
	lock, err := store.TakeLock(where.dsn())
	if err != nil {
		return where.flagErr(err)
	}
	defer lock.Release()
	db, err := where.open(ctx, true)
	if err != nil {
		return err
	}
	defer db.Close()
	tp, stopTraces, err := cli.Traces(ctx, a.getenv, "symphonix-board", log)
	if err != nil {
		return err
	}
	defer stopTraces()
	mln, err := o.listenMetrics(a)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		if mln != nil {
			mln.Close()
		}
		return fmt.Errorf("--listen: %w", err)
	}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	base := o.publicURL
	if base == "" {
		base = listenURL(scheme, o.listen, ln.Addr())
	}
	b, err := board.New(ctx, board.Config{Store: db, Logger: log, TrustedProxies: proxies, HashesPerSecond: o.hashRate,
		RunRetention: runRetention, TracerProvider: tp, MetricsListener: mln, DrainDelay: o.drain, ForgetAfter: o.forget,
		LinksPerSecond: o.linkRate, LinkMaxAge: linkMaxAge(o.linkAge), NotifyWebhooks: *o.webhooks, PublicURL: base,
		NotifySMTP: o.smtp, NotifyFrom: o.mailFrom})
	if err != nil {
		if mln != nil {
			mln.Close()
		}
		ln.Close()
		return err
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
	if mln != nil {
		msg += fmt.Sprintf("board: metrics and probes on http://%s (no token: keep it private)\n", mln.Addr())
	}
	fmt.Fprint(a.stdout, msg)
	if o.tlsCert != "" {
		err = b.ServeTLS(ctx, ln, o.tlsCert, o.tlsKey)
	} else {
		err = b.Serve(ctx, ln)
	}
	log.Info("board stopped")
	return err
}

// listenMetrics listens on --metrics-listen; nil when it is empty, or when
// the default address is taken (said on a line: the board serves without
// it, as a second board on one machine does).
func (o *serveOptions) listenMetrics(a *app) (net.Listener, error) {
	if o.metrics == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", o.metrics)
	if err == nil {
		return ln, nil
	}
	if o.metrics == defaultMetricsListen {
		fmt.Fprintf(a.stdout, "board: metrics: %s is taken; not served there (--metrics-listen); at /metrics for an operator token\n", o.metrics)
		return nil, nil
	}
	return nil, fmt.Errorf("--metrics-listen: %w", err)
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

// linkMaxAge is --link-max-age as board.Config takes it: 0 (none) is
// negative there.
func linkMaxAge(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
