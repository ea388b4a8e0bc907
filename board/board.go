// Package board is the Symphonix board: the server agents dial out to and
// operators work. It serves the agent link, the operator API, gRPC
// reflection and health, and the web board, on one HTTP handler, and keeps
// everything it knows in the ent store.
package board

import (
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connectgzip"
	"connectrpc.com/connect/v2/connecthttp"
	"connectrpc.com/grpcreflect/v2"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
	"github.com/symphonix/symphonix/telemetry"
	"github.com/symphonix/symphonix/ui"
)

// Config configures a Board. Zero values take the documented defaults.
type Config struct {
	// Store: required. The board does not close it.
	Store *ent.Client
	// Logger: nil discards logs.
	Logger *slog.Logger
	// PingInterval: how often agents ping, told to them in the welcome, and
	// how long an HTTP/2 connection may be silent before the board sends a
	// PING. Zero means 15 s.
	PingInterval time.Duration
	// PingTimeout: how long the board waits for a ping's answer (and the
	// agent for a pong) before giving the link up. Zero means 10 s.
	PingTimeout time.Duration
	// OfflineGrace: how long an agent whose link dropped stays online,
	// waiting for it to redial. Zero means 1 s; negative means none.
	OfflineGrace time.Duration
	// RevocationPoll: how often the board looks for tokens revoked by
	// another process (board token revoke) to close their links, and checks
	// again the credential of every other open stream (streams.go). Zero
	// means 1 s.
	RevocationPoll time.Duration
	// SessionTTL: how long a web sign-in lasts. Zero means
	// identity.DefaultSessionTTL (12 h).
	SessionTTL time.Duration
	// WatchHeartbeat: how often WatchApprovals sends a heartbeat, so that
	// a watcher behind a proxy that dropped the stream notices. Zero means
	// 15 s.
	WatchHeartbeat time.Duration
	// ConcurrentHashes: how many argon2id hashes (passwords at sign-in and
	// setup, verify secrets) the board runs at once; a request finding
	// them all running is answered busy at once. Zero means one a core
	// but one (runtime.GOMAXPROCS(0) - 1), and at least one: a core is
	// kept for everything else, so that a flood of sign-ins cannot take
	// the whole machine from the operators and the agents.
	ConcurrentHashes int
	// HashesPerSecond: how many of those hashes the board starts a second
	// at most, with bursts of twice that; a request beyond it is answered
	// busy at once. Zero means 5 for each of ConcurrentHashes: a flood of
	// sign-ins then keeps a core hashing a third of the time or less.
	HashesPerSecond float64
	// TrustedProxies: the reverse proxies whose X-Forwarded-For or
	// Forwarded header says which address a request came from
	// (clientaddr.go). Nil means none: the address is always the TCP peer.
	TrustedProxies []netip.Prefix
	// BodyGrace: how long a request that is not a stream may take over its
	// body before it must keep up 8 KiB a second on average; a body that
	// falls behind is cut off (bodyrate.go). Zero means 10 s.
	BodyGrace time.Duration
	// RunRetention: how long runs are kept after they end (or start, for
	// one that never ended), swept when the board starts and every hour.
	// Zero means 30 days; negative means for ever.
	RunRetention time.Duration
	// ForgetAfter: how long an agent must have been offline before an
	// admin may forget it (ForgetAgent). Zero means DefaultForgetAfter.
	ForgetAfter time.Duration
	// LinksPerSecond: how many new links the board takes a second, in
	// bursts of as many; a link past it is refused unavailable with a
	// retry hint (linkadmit.go), so the fleet of a board that died spreads
	// over the boards left. Zero means DefaultLinksPerSecond.
	LinksPerSecond float64
	// NotifyWebhooks: incoming webhooks (Slack, Teams, Discord) told of
	// each approval raised under a rule and each step of its escalation;
	// at most MaxNotifyWebhooks (webhooks.go).
	NotifyWebhooks []string
	// NotifySMTP: the mail server, smtp://[user:password@]host[:port]
	// (STARTTLS when the server offers it; port 587 by default) or
	// smtps://… (TLS from the start; port 465), through which each person
	// who may decide an approval raised under a rule, or whom a step of
	// its escalation adds, is emailed their own action link (email.go).
	// Credentials go only over TLS, or to a server on loopback. Empty
	// means no email.
	NotifySMTP string
	// NotifyFrom: the address emails come from (a display name may come
	// with it: "Board <board@example.com>"); required with NotifySMTP.
	NotifyFrom string
	// NotifySMTPRoots: the certificate authorities trusted for the mail
	// server's TLS; nil means the system's.
	NotifySMTPRoots *x509.CertPool
	// PublicURL: the board's URL as people's browsers reach it, for the
	// links notifications carry (action links, actionlinks.go). Without
	// one, notifications carry none.
	PublicURL string
	// LinkMaxAge: how long a link may last before the board ends it and
	// the agent links again, to another board when it knows several, so
	// links rebalance after a board joins. Each link's is chosen between
	// 90% and 100% of it. Zero means DefaultLinkMaxAge; negative means
	// none.
	LinkMaxAge time.Duration
	// Now: nil means time.Now.
	Now func() time.Time
	// Limits: what one agent or caller can make the board hold; zero
	// fields take the defaults (limits.go, docs/limits.md).
	Limits Limits
	// MetricsListen: an address (host:port) where Serve also serves the
	// metrics without a token, and the probes /healthz and /readyz
	// (MetricsHandler); New listens on it. Empty means none: the metrics
	// are then only at /metrics on the board's own address, for an
	// operator's token. Keep it on loopback or a network only the
	// monitoring system reaches (docs/metrics.md).
	MetricsListen string
	// MetricsListener: a listener to serve the metrics on, in place of
	// MetricsListen (which must then be empty); Serve or Close closes it
	// (the caller, when New fails).
	MetricsListener net.Listener
	// DrainDelay: how long Serve, once its ctx ends, keeps serving while
	// it answers not ready (/readyz 503, grpc.health.v1 NOT_SERVING), so
	// that a load balancer stops sending it new work before its links and
	// streams end. Zero means none: it then turns not ready and drains at
	// once (docs/probes.md).
	DrainDelay time.Duration
	// TracerProvider: where the board's spans go (trace.go,
	// docs/tracing.md); nil is off.
	TracerProvider trace.TracerProvider
	// SpoolDir: the folder where a package being published is kept until
	// it has passed every gate, and removed whatever happens (at most
	// Limits.PublishesAtOnce of Limits.PackageBytes each). Empty means the
	// system's temporary folder (os.TempDir).
	SpoolDir string
}

// Board is one running board.
type Board struct {
	cfg      Config
	db       *ent.Client
	tracer   trace.Tracer // the board's spans (trace.go); a no-op one when off
	tokens   *identity.Tokens
	audit    *audit.Log // the one log every change is appended to; shared with tokens
	users    *identity.Users
	sessions *identity.Sessions // web sign-ins, signed by tokens
	// signinAccount and signinSource count failed sign-ins (signin.go).
	signinAccount *limiter
	signinSource  *limiter
	log           *slog.Logger
	hub           *hub[*boardv1.WatchAgentsResponse]
	// approvals fans approval changes out to WatchApprovals (approvals_watch.go);
	// approvalPublish serialises, per approval, reading and publishing them.
	approvals       *hub[*boardv1.WatchApprovalsResponse]
	approvalPublish keyedLocks
	presence        *presence
	handler         http.Handler
	// deliveries serialises sending decisions to each agent (decide.go).
	deliveries deliveries
	// switchLocks serialises, per agent, keeping and sending its tool
	// switches (tools.go).
	switchLocks keyedLocks
	// tokenChecks reads the rows of the tokens being checked many at a
	// time (auth.go).
	tokenChecks batcher[tokenCheck]
	// healthWrites keeps health rounds many at a time (agenthealth.go).
	healthWrites batcher[healthWrite]
	// runWrites keeps runs many at a time (runstore.go); live is what
	// the board knows of runs as they go (runlive.go); runCounts counts the
	// run events it dropped or cut; runs fans run changes out to WatchRuns
	// (runs_watch.go).
	runWrites batcher[runWrite]
	live      liveRuns
	runCounts runCounts
	runs      *hub[*boardv1.WatchRunsResponse]
	// fireRate holds each caller to its StartRun rate (fire.go).
	fireRate *limiter
	// verifyRate holds each caller to its VerifyAudit rate, and verifying
	// holds the one VerifyAudit the board runs at a time (auditservice.go).
	verifyRate *limiter
	verifying  chan struct{}
	// shared: the limiters counting in the store (sharedlimit.go).
	shared sharedLimiters
	// notifierDone is closed when runNotifier returns (webhooks.go).
	notifierDone chan struct{}
	// mail and mailFrom: Config.NotifySMTP and NotifyFrom, read; mail is
	// nil without email (email.go).
	mail     *smtpServer
	mailFrom *mail.Address
	// relays: requests for agents on other boards (relay.go).
	relays relays
	// receipts: the keys decisions are signed with (receipts.go).
	receipts receiptKeys
	// pauseLocks serialises, per agent, keeping and sending whether it
	// takes work (pause.go).
	pauseLocks keyedLocks
	// triggerLocks serialises, per agent, keeping and sending which of its
	// triggers are paused; triggerDrops counts the trigger reports dropped
	// for coming too soon after the last (triggers.go).
	triggerLocks keyedLocks
	triggerDrops triggerDrops
	// evals: the per-agent lock of eval scores, the publish rate and the
	// counts of reports and suites dropped (evals.go).
	evals evalState
	// identify: pairing's and verify's limits and delivery (identify.go).
	identify identifyState
	// streams: the watch streams each caller has open (streams.go).
	streams streams
	// lists: each caller's lists, taking turns (listturns.go).
	lists listTurns
	// pages: the List RPCs' page tokens, signed with a key derived from
	// the store's signing key (pagetoken.go).
	pages pageTokens
	// actions makes and opens action links (actionlinks.go).
	actions actionLinks
	// audits: how many audit entries each agent and caller may still make
	// the board write (auditlimit.go); made on first use.
	auditOnce sync.Once
	audits    *auditLimit

	// hashSlots bounds the argon2id hashes running at once (hashing.go).
	hashSlots hashSlots
	// openStreams are the streams held to their credential (streams.go).
	openStreams openStreams
	// publishing bounds the publishes taken at once (library_publish.go).
	publishing chan struct{}
	// linkAdmit bounds the new links taken a second (linkadmit.go).
	linkAdmit *rate.Limiter
	// id is the board's name among the boards of its store; notifies says
	// the store can wake the others (PostgreSQL), and dropWake, a test's,
	// drops the wakes it says yes to (crossboard.go).
	id       string
	notifies bool
	dropWake atomic.Pointer[func(kind, id string) bool]
	// stopListening ends listenToBoards and waits for it.
	stopListening func()

	// metrics are the board's instruments (metrics.go); metricsLn is the
	// metrics address's listener (Config.MetricsListen or
	// MetricsListener), served by Serve.
	metrics     *metrics
	metricsMu   sync.Mutex
	metricsLn   net.Listener // until Serve takes it
	metricsAddr string
	// ready: the cached answer to whether the store answers (probes.go);
	// draining is closed when the board begins to shut down, before done.
	ready     readiness
	draining  chan struct{}
	drainOnce sync.Once

	// fleet is what the loop remembers of sampling the fleet (fleet.go).
	fleet fleetSampler

	stopSweep    func()        // ends the health history's sweep (healthsweep.go)
	sweptAtStart chan struct{} // closed when the sweep at start is done

	done     chan struct{} // closed by Close
	closeMu  sync.Once
	loopDone chan struct{}
	// stopSequencer ends the audit sequencer (audit.Log.Run) and waits
	// for it.
	stopSequencer func()
}

// New checks cfg, loads the signing key, records every agent left online
// by a previous run as offline (they come back when they redial), and
// starts the board's background loop. Close stops it.
func New(ctx context.Context, cfg Config) (*Board, error) {
	if cfg.Store == nil {
		return nil, errors.New("board: Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = 15 * time.Second
	}
	if cfg.PingTimeout == 0 {
		cfg.PingTimeout = 10 * time.Second
	}
	if cfg.OfflineGrace == 0 {
		cfg.OfflineGrace = time.Second
	}
	if cfg.RevocationPoll == 0 {
		cfg.RevocationPoll = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = identity.DefaultSessionTTL
	}
	if cfg.WatchHeartbeat == 0 {
		cfg.WatchHeartbeat = 15 * time.Second
	}
	if cfg.RunRetention == 0 {
		cfg.RunRetention = DefaultRunRetention
	}
	if cfg.ForgetAfter == 0 {
		cfg.ForgetAfter = DefaultForgetAfter
	}
	if err := CheckWebhooks(cfg.NotifyWebhooks); err != nil {
		return nil, err
	}
	mailServer, mailFrom, err := checkMail(cfg)
	if err != nil {
		return nil, err
	}
	if u, err := url.Parse(cfg.PublicURL); cfg.PublicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(cfg.PublicURL) > maxWebhookURL) {
		return nil, fmt.Errorf("board: PublicURL: want an http or https URL of at most %d bytes", maxWebhookURL)
	}
	if cfg.LinksPerSecond < 0 {
		return nil, errors.New("board: LinksPerSecond must not be negative")
	}
	if cfg.LinksPerSecond == 0 {
		cfg.LinksPerSecond = DefaultLinksPerSecond
	}
	if cfg.LinkMaxAge == 0 {
		cfg.LinkMaxAge = DefaultLinkMaxAge
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.PingInterval < 0 || cfg.PingTimeout < 0 || cfg.RevocationPoll < 0 || cfg.SessionTTL < 0 || cfg.WatchHeartbeat < 0 || cfg.ForgetAfter < 0 {
		return nil, errors.New("board: PingInterval, PingTimeout, RevocationPoll, SessionTTL, WatchHeartbeat and ForgetAfter must not be negative")
	}
	if cfg.BodyGrace < 0 {
		return nil, errors.New("board: BodyGrace must not be negative")
	}
	if cfg.DrainDelay < 0 {
		return nil, errors.New("board: DrainDelay must not be negative")
	}
	if cfg.MetricsListen != "" && cfg.MetricsListener != nil {
		return nil, errors.New("board: MetricsListen and MetricsListener: give one of them")
	}
	if cfg.BodyGrace == 0 {
		cfg.BodyGrace = 10 * time.Second
	}
	if cfg.ConcurrentHashes < 0 {
		return nil, errors.New("board: ConcurrentHashes must not be negative")
	}
	if cfg.ConcurrentHashes == 0 {
		cfg.ConcurrentHashes = max(1, runtime.GOMAXPROCS(0)-1)
	}
	if cfg.HashesPerSecond < 0 {
		return nil, errors.New("board: HashesPerSecond must not be negative")
	}
	if cfg.HashesPerSecond == 0 {
		cfg.HashesPerSecond = 5 * float64(cfg.ConcurrentHashes)
	}
	for _, p := range cfg.TrustedProxies {
		if !p.IsValid() {
			return nil, fmt.Errorf("board: TrustedProxies: %v is not a network", p)
		}
	}
	tokens, err := identity.OpenTokens(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	sessions, err := identity.NewSessions(identity.SessionsConfig{Store: cfg.Store, Tokens: tokens, TTL: cfg.SessionTTL, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	b := &Board{
		cfg:       cfg,
		db:        cfg.Store,
		tokens:    tokens,
		audit:     audit.New(cfg.Store),
		log:       cfg.Logger,
		tracer:    telemetry.Tracer(cfg.TracerProvider),
		hub:       newHub[*boardv1.WatchAgentsResponse](cfg.Limits.WatcherBytes),
		approvals: newHub[*boardv1.WatchApprovalsResponse](cfg.Limits.WatcherBytes),
		runs:      newHub[*boardv1.WatchRunsResponse](cfg.Limits.WatcherBytes),
		done:      make(chan struct{}),
		loopDone:  make(chan struct{}),

		notifierDone: make(chan struct{}),
		mail:         mailServer,
		mailFrom:     mailFrom,
		draining:     make(chan struct{}),

		sweptAtStart: make(chan struct{}),

		users:      identity.NewUsers(cfg.Store, cfg.Now),
		sessions:   sessions,
		hashSlots:  newHashSlots(cfg.ConcurrentHashes, cfg.HashesPerSecond),
		pages:      pageTokens{key: tokens.DerivedKey("page tokens")},
		actions:    actionLinks{key: tokens.DerivedKey("action links")},
		publishing: make(chan struct{}, cfg.Limits.PublishesAtOnce),
		linkAdmit:  rate.NewLimiter(rate.Limit(cfg.LinksPerSecond), int(max(1, cfg.LinksPerSecond))),
		id:         newBoardID(),
		notifies:   store.Notifies(cfg.Store),
	}
	b.presence = newPresence(b)
	b.relays.handling = make(chan struct{}, 32)
	b.metrics = newMetrics(b)
	b.tokenChecks = batcher[tokenCheck]{max: identity.MaxCheckRows, write: func(batch []*tokenCheck) { checkTokens(b, batch) }}
	b.healthWrites = batcher[healthWrite]{max: maxHealthBatch, write: func(batch []*healthWrite) { writeHealth(b, batch) }}
	b.runWrites = batcher[runWrite]{max: maxRunBatch, linger: runBatchLinger, write: func(batch []*runWrite) { writeRuns(b, batch) }}
	b.signinAccount = b.limiter("signin.account", signinPerAccount, signinWindow)
	b.signinSource = b.limiter("signin.source", signinPerSource, signinWindow)
	b.fireRate = b.limiter("start_run", startRunsPerCaller, startRunWindow)
	b.verifyRate = b.limiter("verify_audit", verifyAuditsPerCaller, verifyAuditWindow)
	b.verifying = make(chan struct{}, 1)
	b.evals.publishRate = b.limiter("eval.publish", evalPublishesPerAgent, evalPublishWindow)
	// A board that stopped without saying goodbye (kill -9) left its agents
	// online in the store. On a store of its own, none has a link yet; on a
	// store other boards share, only the agents of boards whose lease ran
	// out are offline (leases.go).
	if err := b.startLease(ctx); err != nil {
		return nil, err
	}
	if err := b.loadReceiptKeys(ctx); err != nil {
		return nil, fmt.Errorf("board: receipt keys: %w", err)
	}
	if ln := cfg.MetricsListener; ln != nil {
		b.metricsLn, b.metricsAddr = ln, ln.Addr().String()
	}
	if cfg.MetricsListen != "" {
		ln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			return nil, fmt.Errorf("board: MetricsListen: %w", err)
		}
		b.metricsLn, b.metricsAddr = ln, ln.Addr().String()
	}
	b.handler = b.routes()
	store.Observe(cfg.Store, b.metrics)
	b.stopSweep = b.startHealthSweep()
	// The loop samples the fleet from the minute under way on: the first
	// sample is of the minute it starts in, when it ends.
	b.fleet.minute = b.now().UTC().Truncate(time.Minute).Add(-time.Minute)
	go b.loop()
	go b.runNotifier()
	b.stopSequencer = b.startSequencer()
	b.stopListening = b.startListening()
	return b, nil
}

// auditGap is the least time between two passes of the board's audit
// sequencer, and auditTick how often it looks for entries that no commit on
// this board woke it for: those other boards or the command line wrote
// (docs/audit.md).
const (
	auditGap  = 25 * time.Millisecond
	auditTick = 250 * time.Millisecond
)

// startSequencer keeps the audit log chained (audit.Log.Run): after every
// entry this board commits (at most one pass per auditGap), and every
// auditTick. The func it returns stops
// it, chains what is left, and returns when it has.
func (b *Board) startSequencer() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.audit.Run(ctx, auditGap, auditTick, func(err error) {
			b.log.WarnContext(ctx, "audit sequencer", "err", err)
		})
	}()
	return func() {
		cancel()
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.audit.Sequence(ctx); err != nil {
			b.log.WarnContext(ctx, "audit sequencer", "err", err)
		}
	}
}

// Tokens is the board's token minter and verifier.
func (b *Board) Tokens() *identity.Tokens { return b.tokens }

// Users is the people the board knows.
func (b *Board) Users() *identity.Users { return b.users }

// Handler serves everything: the RPCs, /.well-known/jwks.json and the web board.
func (b *Board) Handler() http.Handler { return b.handler }

// MetricsAddr is the address the metrics are served on without a token
// (Config.MetricsListen or MetricsListener; "" for none): with port 0,
// the port the system chose.
func (b *Board) MetricsAddr() string { return b.metricsAddr }

// takeMetricsListener hands the metrics address's listener to its one
// server, or nil when there is none or it was taken.
func (b *Board) takeMetricsListener() net.Listener {
	b.metricsMu.Lock()
	defer b.metricsMu.Unlock()
	ln := b.metricsLn
	b.metricsLn = nil
	return ln
}

// ID is the board's name among the boards of its store, new each time it
// starts (logged as board_id; an agent's row names the board holding its
// link).
func (b *Board) ID() string { return b.id }

// Close turns the board not ready, ends every link, records their agents
// offline and stops the background loop. It does not close the store.
func (b *Board) Close() {
	b.closeMu.Do(func() {
		b.drain()
		close(b.done)
		<-b.loopDone
		<-b.notifierDone
		b.stopListening()
		b.stopSweep()
		b.presence.closeAll()
		b.relays.running.Wait()   // relays being asked: their links have ended
		b.deliveries.marks.wait() // decisions that went out are marked delivered
		b.auditLimits().flush()   // what was left out of the audit log is summarised
		b.stopSequencer()         // and chained
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		b.endLease(ctx)
		cancel()
		store.Observe(b.db, nil)
		if ln := b.takeMetricsListener(); ln != nil {
			ln.Close() // never served
		}
	})
}

func (b *Board) now() time.Time { return b.cfg.Now() }

// MaxMessageBytes is the largest message the board reads on any RPC.
const MaxMessageBytes = 1 << 20

func (b *Board) routes() http.Handler {
	srv := connect.NewServer(telemetry.ServerInterceptor(b.cfg.TracerProvider), b.rpcMetrics(), b.interceptor())
	boardv1connect.RegisterAgentLinkServiceHandler(srv, linkService{b})
	boardv1connect.RegisterAgentServiceHandler(srv, agentService{b})
	boardv1connect.RegisterAlertServiceHandler(srv, alertService{b: b})
	boardv1connect.RegisterApprovalServiceHandler(srv, approvalService{b})
	boardv1connect.RegisterAuditServiceHandler(srv, auditService{b})
	boardv1connect.RegisterChatServiceHandler(srv, chatService{b})
	boardv1connect.RegisterConversationServiceHandler(srv, conversationService{b})
	boardv1connect.RegisterEvalServiceHandler(srv, evalService{b: b})
	boardv1connect.RegisterRunServiceHandler(srv, runService{b: b})
	boardv1connect.RegisterToolServiceHandler(srv, toolService{b})
	boardv1connect.RegisterPackageServiceHandler(srv, packageService{b: b})
	boardv1connect.RegisterTriggerServiceHandler(srv, triggerService{b: b})
	boardv1connect.RegisterUserServiceHandler(srv, userService{b})
	b.registerHealth(srv)
	grpcreflect.Register(srv)
	b.metrics.procedures = make(map[string]bool)
	for spec := range srv.Specs() {
		b.metrics.procedures[spec.Procedure] = true
	}

	mux := http.NewServeMux()
	// Small messages (pings, pongs) are not worth compressing: gzip for a
	// 20-byte pong costs the board more CPU than the link itself. Large
	// ones are compressed at gzip's fastest level: a list of 4 MiB that
	// compresses badly takes the default level ten times as long (200 ms
	// of a core against 20, docs/benchmarks.md), for the same size, and a
	// client may ask for one after another.
	connecthttp.Mount(mux, srv, connecthttp.WithReadMaxBytes(MaxMessageBytes), connecthttp.WithCompressMinBytes(1<<10),
		connecthttp.WithCompressors(connectgzip.New(connectgzip.WithLevel(gzip.BestSpeed))), strictCodecs(),
		connecthttp.WithConditionalOptions(func(spec connect.Spec) []connecthttp.Option {
			switch spec.Procedure {
			case boardv1connect.PackageServicePublishProcedure:
				// A chunk of MaxChunkBytes and its framing.
				return []connecthttp.Option{connecthttp.WithReadMaxBytes(MaxChunkBytes + chunkFraming)}
			case boardv1connect.PackageServiceDownloadProcedure:
				// A package is gzip'd already: compressing it again costs a
				// core and saves nothing.
				return []connecthttp.Option{connecthttp.WithCompressMinBytes(2 * MaxChunkBytes)}
			}
			return nil
		}))
	mux.HandleFunc("GET /.well-known/receipt-keys.json", b.serveReceiptKeys)
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		_ = json.NewEncoder(w).Encode(b.tokens.JWKS())
	})
	b.authRoutes(mux)
	b.probeRoutes(mux)
	mux.Handle("GET "+MetricsPath, b.metricsWithToken())
	mux.Handle("/", ui.Handler())
	return telemetry.RequestIDs(b.bodyDeadlines(b.holdToCredentials(mux)))
}

// loop closes links whose tokens were revoked (possibly by another process),
// ends the other streams whose credentials lapsed (endLapsedStreams), keeps
// last_seen fresh for agents linked here, and expires pending approvals
// past their time limit (expireDue), and samples the fleet once a minute
// (sampleFleetDue).
func (b *Board) loop() {
	defer close(b.loopDone)
	tick := time.NewTicker(b.cfg.RevocationPoll)
	defer tick.Stop()
	since := b.now().Add(-time.Minute)
	lastTouch, lastLease := b.now(), b.now()
	for {
		select {
		case <-b.done:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		now := b.now()
		ids, err := b.tokens.RevokedSince(ctx, since.Add(-5*time.Second))
		if err != nil {
			b.log.ErrorContext(ctx, "look for revoked tokens", "err", err)
		} else {
			b.presence.revoke(ids)
			since = now
		}
		if now.Sub(lastTouch) >= 30*time.Second {
			if names := b.presence.names(); len(names) > 0 {
				if err := b.db.Agent.Update().Where(agent.NameIn(names...), agent.Online(true)).SetLastSeen(now).Exec(ctx); err != nil {
					b.log.ErrorContext(ctx, "touch last seen", "err", err)
				}
			}
			lastTouch = now
		}
		if now.Sub(lastLease) >= leaseRenew {
			b.renewLease(ctx)
			lastLease = now
		}
		b.sweepShared(ctx, now)
		b.refreshReceiptKeys(ctx, now)
		b.endLapsedStreams(ctx)
		b.expireDue(ctx)
		b.escalateDue(ctx)
		b.logRunProblems(now)
		b.logTriggerDrops(now)
		b.logEvalDrops(now)
		b.sampleFleetDue(ctx, now)
		cancel()
	}
}
