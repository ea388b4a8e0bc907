// Package agentlink is the agent's half of the link to the board: it dials
// out, says hello, pings, and redials with exponential backoff and jitter
// whenever the board goes away, and gives up on what no redial can heal (a
// refused token, a URL that is not a board's, an untrusted certificate).
// The board never dials an agent.
package agentlink

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connecthttp"
	"connectrpc.com/connect/v2/connectproto"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/internal/pump"
	"github.com/symphonix/symphonix/internal/wholemsg"
	"github.com/symphonix/symphonix/telemetry"
)

// The default bounds of the wait between dials.
const (
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// Identity is who the agent says it is in its hello.
type Identity struct {
	Name        string
	Description string
	// Build: "sha256:" and the hex SHA-256 of the flow's canonical JSON.
	Build string
	// Tools: the declared MCP tools, as "<server>.<tool>".
	Tools []string
	// Inputs: the values a run may be started with, the flow's declared
	// inputs; at most MaxInputs.
	Inputs []FlowInput
	// Package: the solution package the agent's folder was installed
	// from, as its install record says; nil for a folder that was not.
	Package *InstalledPackage
}

// InstalledPackage is the package an agent's folder was installed from:
// the hello tells the board, which shows which agents run which version.
type InstalledPackage struct {
	// Name: "scope/name".
	Name string
	// Version: a semantic version.
	Version string
	// Digest: "sha256:" and the hex SHA-256 of the package's canonical
	// manifest.
	Digest string
}

// Bounds of InstalledPackage's fields, as the board takes them.
const (
	MaxPackageName    = 127 // two DNS labels and a slash
	MaxPackageVersion = 128
	digestLen         = len("sha256:") + 64
)

// FlowInput is one value a run of the flow may be started with.
type FlowInput struct {
	// Name: the state channel.
	Name string
	// Type: "string", "number", "boolean", "object", "list", or "" for
	// any JSON value (a channel whose type is not said, or a file).
	Type string
	// Description: what it is, from the flow.
	Description string
}

// MaxInputs is the most declared inputs a hello carries.
const MaxInputs = 64

// Config configures a Link.
type Config struct {
	// BoardURL: required; http:// (HTTP/2 without TLS) or https://. Several
	// boards of one store may be given, separated by commas (at most
	// MaxBoardURLs): the link starts at one chosen at random, stays with
	// the board that welcomed it, and moves to the next one when a dial
	// fails or a board asks it to (Run).
	BoardURL string
	// Token: required; an agent token minted for Identity.Name.
	Token string
	// Identity: required; Name must be set.
	Identity Identity
	// Capabilities: what the hello announces, each one of Capabilities and
	// only when the code behind it runs in this process; nil announces
	// none. ReportHealth and ReportPause need theirs announced.
	Capabilities []string
	// PingInterval and PingTimeout: zero means what the board says in its
	// welcome. The HTTP/2 connection uses them too (15 s and 10 s before a
	// welcome has said otherwise).
	PingInterval time.Duration
	PingTimeout  time.Duration
	// MinBackoff and MaxBackoff bound the wait between dials: zero means
	// 250 ms and 30 s.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// TLS: nil means the system roots, for https:// URLs.
	TLS *tls.Config
	// Logger: nil discards logs.
	Logger *slog.Logger
	// TracerProvider: where the link's client span goes (one per link,
	// docs/tracing.md); nil is off.
	TracerProvider trace.TracerProvider
	// OnState: nil means none. Called with up=true and the session when the
	// board welcomes the agent, and up=false (and why) when the link ends.
	// It must not block.
	OnState func(State)
	// OnPong: nil means none. Called with the round trip of each of the
	// link's pings the board answered in time, from the send to the pong.
	// It must not block.
	OnPong func(rtt time.Duration)
	// AnswerWithin: how long WhoDecides and Raise wait for the board's
	// answer; zero means DefaultAnswerWithin.
	AnswerWithin time.Duration
	// OnDecision: nil means none. Called for every decision the board sends
	// about an approval this agent raised — pushed the moment it is made, or
	// found when the link re-asks about what it holds — at most once per
	// approval and say for the life of this Link. Calls are serialised but
	// may come from different goroutines; it must not block (hand the
	// decision to the runtime and return).
	OnDecision func(Decision)
	// Holding: nil means nothing is held. Whenever the link comes up (the
	// first welcome and every one after a redial) the link raises again
	// everything Holding lists, and delivers any decision already made
	// through OnDecision.
	Holding Holding
	// OnReAsk: nil means none. Called with the counts after each re-ask the
	// link makes when it comes up. It must not block.
	OnReAsk func(ReAskResult)
	// OnSwitches: nil means none. Called with the tools ("<server>.<tool>")
	// the board switches this agent on for: after every welcome, and the
	// moment an operator changes them. spoken false means the board has
	// never said, so nothing is on and any remembered word is to be
	// forgotten. It must not block.
	OnSwitches func(on []string, spoken bool)
	// OnPaired: nil means none. Called when a person entered, on the board,
	// the code a conversation showed (Pair): pushed the moment they did, or
	// on the next link if the agent was away, at most once per pairing for
	// the life of this Link. Calls are serialised; it must not block.
	OnPaired func(Paired)
	// OnPause: nil means none. Called for every Pause the board sends (an
	// operator paused or resumed the agent, now or while it was away). The
	// agent keeps it and answers with ReportPause. Calls are serialised;
	// it must not block.
	OnPause func(Pause)
	// Summaries: where the run summaries to deliver are kept (agents
	// announcing CapabilityRuns); nil delivers none. After every welcome,
	// and whenever SummaryAdded says one was added, the link sends them
	// oldest first, one at a time, each once the board stored the one
	// before.
	Summaries Summaries
	// OnFire and OnStop: the board asking to start a run, or to end one
	// at its next step boundary (agents announcing CapabilityFire). Each
	// is called on its own goroutine, at most MaxFiring at once, and
	// answered with what it returns: a *Refusal is told to the board as it
	// is, any other error as internal. OnFire must answer at once and run
	// the run in the background. nil refuses them (failed_precondition).
	OnFire func(ctx context.Context, f Fire) (Fired, error)
	OnStop func(ctx context.Context, s Stop) error
	// OnChat: the board's chat window asking one of its five things
	// (agents announcing CapabilityChat; docs/chat.md). It is called on its
	// own goroutine, at most MaxChatAtOnce at once, with a context that
	// ends after ChatTalkWithin for a talk and ChatWithin for the others,
	// or with the link; its answer is sent with the request's id. A
	// *Refusal is told to the board as it is (its message cut to
	// MaxChatRefusal), any other error as internal. nil refuses them
	// (failed_precondition).
	OnChat func(ctx context.Context, q Chat) (ChatReply, error)
	// OnTriggerPauses: nil means none. Called with the ids of the triggers
	// operators have paused on the board (agents announcing
	// CapabilityTriggers): after every welcome, and whenever a pause
	// changes. Each call replaces the last. Calls are serialised; it must
	// not block.
	OnTriggerPauses func(paused []string)
}

// State is the link coming up or going down.
type State struct {
	Up      bool
	Session string
	// Err: why the link went down.
	Err error
}

// Link is one agent's link to the board.
type Link struct {
	cfg   Config
	bases []*url.URL
	// at is the index in bases of the board the link dials now.
	at  atomic.Int32
	log *slog.Logger

	mu      sync.Mutex
	session string
	cur     *conn // the link that is up now, or nil
	// minProtocol, maxProtocol: the range the last welcome said the
	// board accepts.
	minProtocol, maxProtocol string

	// redialWithin is the board's last word (welcome or pong) on the
	// window to spread a first redial over, in nanoseconds; 0 if none.
	redialWithin atomic.Int64

	reqSeq atomic.Uint64
	// receiptKeys: the board's, to verify decisions' receipts with.
	receiptKeys receiptKeys
	// deliverMu serialises OnDecision and guards delivered and where.
	deliverMu sync.Mutex
	delivered *recent[struct{}]
	where     *recent[runNode]
	// pairedMu serialises OnPaired and guards pairings.
	pairedMu sync.Mutex
	pairings *recent[struct{}]

	// wake tells the reporter of the link that is up that a pause or a
	// health round is waiting to be sent.
	wake     chan struct{}
	pause    pauseSlot
	health   healthSlot
	triggers triggerSlot
	evals    evalSlot
	// summaryWake tells the deliverer of the link that is up that a run
	// summary was added; firing bounds the Fires and Stops handled at once.
	summaryWake chan struct{}
	firing      chan struct{}
	// chatting bounds the chat requests answered at once.
	chatting chan struct{}
}

// New checks cfg.
func New(cfg Config) (*Link, error) {
	bases, err := boardURLs(cfg.BoardURL)
	if err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, errors.New("agentlink: Token is required")
	}
	if cfg.Identity.Name == "" {
		return nil, errors.New("agentlink: Identity.Name is required")
	}
	if err := checkCapabilities(cfg.Capabilities); err != nil {
		return nil, err
	}
	if n := len(cfg.Identity.Inputs); n > MaxInputs {
		return nil, fmt.Errorf("agentlink: Identity.Inputs: %d inputs, at most %d", n, MaxInputs)
	}
	if err := checkPackage(cfg.Identity.Package); err != nil {
		return nil, err
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.AnswerWithin <= 0 {
		cfg.AnswerWithin = DefaultAnswerWithin
	}
	l := &Link{
		cfg: cfg, bases: bases, log: cfg.Logger,
		delivered: newRecent[struct{}](rememberDecisions),
		where:     newRecent[runNode](rememberDecisions),
		pairings:  newRecent[struct{}](rememberDecisions),
		wake:      make(chan struct{}, 1),

		summaryWake: make(chan struct{}, 1),
		firing:      make(chan struct{}, MaxFiring),
		chatting:    make(chan struct{}, MaxChatAtOnce),
	}
	l.at.Store(int32(rand.IntN(len(bases))))
	return l, nil
}

// Protocols is the range of link protocols the board said in its last
// welcome that it accepts, oldest and newest; "" and "" before the first
// welcome, or from a board that does not say.
func (l *Link) Protocols() (lowest, highest string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.minProtocol, l.maxProtocol
}

// Session is the session of the link that is up now, or "".
func (l *Link) Session() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.session
}

// Run keeps the link up until ctx ends: it dials, and whenever the link
// ends it waits and dials again. The first redial after a link that was up
// waits a uniformly random time within the window the board last gave
// (Welcome and Pong's redial_within), so that a fleet whose board died comes
// back spread over the time the board needs to admit it; with no window, and
// after every failed dial, it waits an exponential backoff with jitter. A
// board that refuses the hello (a protocol it does not speak, a field out of
// its bounds) is retried too, at the longest backoff with its upper half
// jittered, because upgrading the board can lift it. A board that cannot
// serve now (unavailable), a refused connection, a timeout or a 5xx is not a
// refusal: waiting heals it.
//
// Run gives up, and returns a *GaveUpError saying what is wrong and what to
// do, on what no wait can heal: the board refusing the token
// (ErrTokenRefused: unauthenticated or permission_denied), a URL that
// answers the link with 404 or 405 (ErrNotABoard), and a TLS certificate
// that no authority the agent trusts vouches for, or that is for another
// host (ErrUntrustedCertificate). Otherwise Run returns nil when ctx ends.
func (l *Link) Run(ctx context.Context) error {
	attempt := 0
	for {
		wasUp, err := l.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if gave := l.giveUp(err); gave != nil {
			l.log.ErrorContext(ctx, "link given up", "err", gave)
			return gave
		}
		if wasUp {
			attempt = 0
		}
		wait := Backoff(attempt, l.cfg.MinBackoff, l.cfg.MaxBackoff, rand.Float64())
		if window := time.Duration(l.redialWithin.Load()); wasUp && window > 0 {
			wait = FirstRedial(window, rand.Float64())
		}
		if !wasUp {
			l.next() // this board did not welcome the link: try the next
		}
		if hint, ok := RetryHint(err); ok {
			// The board asked to be left for a while (too many new links
			// at once) or to be left now (the link's age): another board,
			// after a jittered wait.
			wait = HintedRedial(hint, l.cfg.MaxBackoff, rand.Float64())
			if wasUp {
				l.next()
			}
		}
		if refused(err) {
			wait = Backoff(math.MaxInt32, l.cfg.MinBackoff, l.cfg.MaxBackoff, rand.Float64())
			l.log.ErrorContext(ctx, "board refused the link", "err", err, "retry_in", wait)
		} else {
			l.log.WarnContext(ctx, "link down", "err", err, "retry_in", wait)
		}
		attempt++
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// refused reports whether the board said no to the hello, as opposed to
// going away. (A refused token is not retried at all: giveUp.)
func refused(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeFailedPrecondition, connect.CodeInvalidArgument:
		var ce *connect.Error
		return errors.As(err, &ce) && ce.IsRemote()
	}
	return false
}

// Backoff is how long to wait before dial number attempt+1: exponential from
// min, capped at max, with the upper half jittered by r in [0, 1) so a fleet
// that lost its board does not come back in one wave.
func Backoff(attempt int, min, max time.Duration, r float64) time.Duration {
	d := min
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	return half + time.Duration(r*float64(d-half))
}

// MaxBoardURLs is the most boards Config.BoardURL may list.
const MaxBoardURLs = 16

// boardURLs reads Config.BoardURL: one URL or several separated by commas.
func boardURLs(list string) ([]*url.URL, error) {
	if strings.TrimSpace(list) == "" {
		return nil, errors.New("agentlink: BoardURL is required")
	}
	parts := strings.Split(list, ",")
	if len(parts) > MaxBoardURLs {
		return nil, fmt.Errorf("agentlink: BoardURL: %d boards, at most %d", len(parts), MaxBoardURLs)
	}
	bases := make([]*url.URL, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("agentlink: BoardURL %q: want http://HOST:PORT or https://HOST:PORT, several separated by commas", p)
		}
		bases = append(bases, u)
	}
	return bases, nil
}

// board is the board the link dials now.
func (l *Link) board() *url.URL {
	return l.bases[int(l.at.Load())%len(l.bases)]
}

// next moves the link to the next board of the list, if it has several.
func (l *Link) next() {
	if len(l.bases) > 1 {
		l.at.Store((l.at.Load() + 1) % int32(len(l.bases)))
	}
}

// Board is the board the link dials now, without its credentials.
func (l *Link) Board() string {
	return l.board().Redacted()
}

// RetryHint reads the wait a board asked for when it ended or refused a
// link: a google.rpc.RetryInfo detail of its error (too many new links at
// once, or a link that reached the board's age limit).
func RetryHint(err error) (time.Duration, bool) {
	var ce *connect.Error
	if !errors.As(err, &ce) || !ce.IsRemote() {
		return 0, false
	}
	for _, d := range ce.Details() {
		m, derr := connectproto.UnmarshalErrorDetail(d)
		if derr != nil {
			continue
		}
		if ri, ok := m.(*errdetails.RetryInfo); ok {
			wait := ri.GetRetryDelay().AsDuration()
			return min(max(wait, 0), maxRedialWithin), true
		}
	}
	return 0, false
}

// HintedRedial is how long to wait after a board's hint: the hint and up to
// half as much again, chosen by r in [0, 1), so the agents told the same
// thing at once do not come back at once; capped at max. A hint of zero
// waits up to 250 ms.
func HintedRedial(hint, max time.Duration, r float64) time.Duration {
	spread := hint / 2
	if hint == 0 {
		spread = 250 * time.Millisecond
	}
	return min(hint+time.Duration(r*float64(spread)), max)
}

// FirstRedial is how long to wait before redialling a link that was up and
// dropped, given the board's redial window: r in [0, 1) of it, uniformly,
// so a fleet that lost its board at one moment comes back spread over the
// window rather than in one wave.
func FirstRedial(window time.Duration, r float64) time.Duration {
	return time.Duration(r * float64(window))
}

// maxRedialWithin bounds a window the board gives, whatever it says.
const maxRedialWithin = 5 * time.Minute

// setRedialWithin keeps the board's word d on the redial window, when it
// said one.
func (l *Link) setRedialWithin(d time.Duration) {
	if d > 0 {
		l.redialWithin.Store(int64(min(d, maxRedialWithin)))
	}
}

// errSilent: a ping went unanswered for the ping timeout.
var errSilent = errors.New("no pong within the ping timeout")

// once dials one link and serves it until it ends. wasUp reports whether
// the board welcomed it.
func (l *Link) once(parent context.Context) (wasUp bool, err error) {
	// The stream outlives parent by a moment, so that an agent leaving on
	// purpose can say goodbye (close its side) rather than vanish.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	defer cancel()
	stop := context.AfterFunc(parent, func() {
		time.AfterFunc(goodbyeWithin, cancel)
	})
	defer stop()

	interval, timeout := l.cfg.PingInterval, l.cfg.PingTimeout
	if interval == 0 {
		interval = 15 * time.Second
	}
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	conns := &connTracker{}
	defer conns.closeAll()
	hc := l.httpClient(conns, interval, timeout)
	rec := &statusRecorder{next: hc.Transport}
	hc.Transport = rec
	defer func() {
		if !wasUp {
			err = rec.notABoard(err)
		}
	}()
	client := boardv1connect.NewAgentLinkServiceClient(connect.NewClient(
		connecthttp.NewTransport(hc, l.board().String(), connecthttp.WithReadMaxBytes(1<<20)),
		telemetry.ClientInterceptor(l.cfg.TracerProvider),
	))
	ctx, info := connect.NewClientContext(ctx)
	info.RequestHeader().Set("Authorization", "Bearer "+l.cfg.Token)
	stream, err := client.Link(ctx)
	if err != nil {
		return false, err
	}
	defer stream.Close()

	err = stream.Send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Hello{Hello: &boardv1.Hello{
		Name:         l.cfg.Identity.Name,
		Protocol:     Protocol,
		Capabilities: l.cfg.Capabilities,
		Build:        l.cfg.Identity.Build,
		Tools:        l.cfg.Identity.Tools,
		Description:  l.cfg.Identity.Description,
		Inputs:       inputsOf(l.cfg.Identity.Inputs),
		Package:      packageOf(l.cfg.Identity.Package),
	}}})
	if err != nil {
		return false, receiveErr(stream, err)
	}

	in := pump.Receive(ctx, stream.Receive)

	welcomeWait := time.NewTimer(max(timeout, welcomeWithin))
	var welcome *boardv1.Welcome
	select {
	case <-parent.Done():
		welcomeWait.Stop()
		return false, parent.Err()
	case <-welcomeWait.C:
		return false, errors.New("no welcome in time")
	case r, ok := <-in:
		welcomeWait.Stop()
		if !ok {
			return false, ctx.Err()
		}
		if r.Err != nil {
			return false, r.Err
		}
		if welcome = r.Msg.GetWelcome(); welcome == nil {
			return false, errors.New("board sent something other than a welcome first")
		}
	}
	if l.cfg.PingInterval == 0 && welcome.GetPingInterval().AsDuration() > 0 {
		interval = welcome.GetPingInterval().AsDuration()
	}
	if l.cfg.PingTimeout == 0 && welcome.GetPingTimeout().AsDuration() > 0 {
		timeout = welcome.GetPingTimeout().AsDuration()
	}
	l.setRedialWithin(welcome.GetRedialWithin().AsDuration())
	c := newConn(stream, welcome)
	l.attach(c, welcome)
	l.log.InfoContext(ctx, "linked to board", "board", l.board().Redacted(), "session", welcome.GetSession(),
		"protocol", Protocol, "board_min_protocol", welcome.GetMinProtocol(), "board_max_protocol", welcome.GetMaxProtocol(),
		"capabilities", l.cfg.Capabilities)
	l.state(State{Up: true, Session: welcome.GetSession()})
	reAskCtx, stopReAsk := context.WithCancel(ctx)
	reAsked, reported, delivered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(reAsked)
		l.reAskOnUp(reAskCtx, c)
	}()
	go func() {
		defer close(reported)
		l.report(reAskCtx, c)
	}()
	go func() {
		defer close(delivered)
		go l.sendEvents(reAskCtx, c)
		l.deliverSummaries(reAskCtx, c)
	}()
	err = l.serve(parent, c, in, interval, timeout, reAskCtx)
	l.detach(c, err)
	stopReAsk()
	<-reAsked
	<-reported
	<-delivered
	if parent.Err() != nil {
		// Leaving on purpose: say goodbye, so the board records us offline
		// at once rather than after its grace, and wait for it to hang up.
		_ = stream.CloseSend()
		for r := range in {
			if r.Err != nil {
				break
			}
		}
	}
	l.state(State{Up: false, Session: welcome.GetSession(), Err: err})
	return true, err
}

// welcomeWithin is the least time an agent waits for its welcome: a board
// that has just restarted may have a fleet to admit before it.
const welcomeWithin = 30 * time.Second

// goodbyeWithin is how long an agent leaving on purpose waits for the board
// to hang up after it closed its side.
const goodbyeWithin = 2 * time.Second

// serve pings every interval and gives the link up when a ping is not
// answered within timeout or the stream ends.
// Fires and Stops are handled on linkCtx, which ends with the link.
func (l *Link) serve(ctx context.Context, c *conn, in <-chan pump.Received[*boardv1.LinkResponse], interval, timeout time.Duration, linkCtx context.Context) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var (
		seq      uint64
		awaiting uint64        // the seq of the unanswered ping, or 0
		sent     time.Time     // when it was sent
		lastRTT  time.Duration // the round trip of the last answered, told the board in the next ping
		deadline = time.NewTimer(timeout)
	)
	deadline.Stop()
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return errSilent
		case <-tick.C:
			if awaiting != 0 {
				continue // the deadline of the one in flight decides
			}
			seq++
			awaiting, sent = seq, time.Now()
			deadline.Reset(timeout)
			ping := &boardv1.Ping{Seq: seq, SendTime: timestamppb.Now()}
			if lastRTT > 0 {
				ping.LastRoundTrip = durationpb.New(lastRTT)
			}
			err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: ping}})
			if err != nil {
				return receiveErr(c.stream, err)
			}
		case r, ok := <-in:
			if !ok {
				return errors.New("link closed")
			}
			if r.Err != nil {
				return r.Err
			}
			switch k := r.Msg.GetKind().(type) {
			case *boardv1.LinkResponse_Pong:
				l.setRedialWithin(k.Pong.GetRedialWithin().AsDuration())
				if k.Pong.GetSeq() == awaiting {
					awaiting = 0
					deadline.Stop()
					lastRTT = time.Since(sent)
					if l.cfg.OnPong != nil {
						l.cfg.OnPong(lastRTT)
					}
				}
			case *boardv1.LinkResponse_Ping:
				err := c.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Pong{Pong: &boardv1.Pong{
					Seq: k.Ping.GetSeq(), SendTime: k.Ping.GetSendTime(),
				}}})
				if err != nil {
					return receiveErr(c.stream, err)
				}
			case *boardv1.LinkResponse_WhoDecidesAnswer:
				c.answer(k.WhoDecidesAnswer.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_Raised:
				c.answer(k.Raised.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_Error:
				if k.Error.GetRequestId() == "" {
					// A refused report (conversations, health): nobody
					// waits for it, and the link stays up.
					l.log.WarnContext(ctx, "the board refused a report", "code", codeOf(k.Error.GetCode()), "message", k.Error.GetMessage())
					continue
				}
				c.answer(k.Error.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_HowToIdentifyAnswer:
				c.answer(k.HowToIdentifyAnswer.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_PairCode:
				c.answer(k.PairCode.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_Verified:
				c.answer(k.Verified.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_Withdrawn:
				c.answer(k.Withdrawn.GetRequestId(), r.Msg)
			case *boardv1.LinkResponse_Paired:
				l.paired(pairedOf(k.Paired))
			case *boardv1.LinkResponse_Switches:
				if l.cfg.OnSwitches != nil {
					l.cfg.OnSwitches(k.Switches.GetOn(), k.Switches.GetSpoken())
				}
			case *boardv1.LinkResponse_Decision:
				l.deliver(decisionOf(k.Decision))
			case *boardv1.LinkResponse_TriggerPauses:
				if l.cfg.OnTriggerPauses != nil && l.announces(CapabilityTriggers) {
					l.cfg.OnTriggerPauses(k.TriggerPauses.GetPaused())
				}
			case *boardv1.LinkResponse_Pause:
				if l.cfg.OnPause != nil {
					l.cfg.OnPause(pauseOf(k.Pause))
				}
			case *boardv1.LinkResponse_RunStored:
				l.runStored(c, k.RunStored)
			case *boardv1.LinkResponse_Fire:
				l.command(linkCtx, c, "fire", k.Fire.GetRequestId(), l.cfg.OnFire != nil, func() { l.fire(linkCtx, c, k.Fire) })
			case *boardv1.LinkResponse_Chat:
				l.chat(linkCtx, c, k.Chat)
			case *boardv1.LinkResponse_Stop:
				l.command(linkCtx, c, "stop", k.Stop.GetRequestId(), l.cfg.OnStop != nil, func() { l.stop(linkCtx, c, k.Stop) })
			default:
				// Kinds this agent does not know: ignored.
			}
		}
	}
}

// receiveErr turns a failed Send into the board's reason, which a Receive
// returns (a Send only sees that the stream is gone).
func receiveErr(stream boardv1connect.AgentLinkServiceLinkClientStream, sendErr error) error {
	if !errors.Is(sendErr, io.EOF) {
		return sendErr
	}
	_, err := stream.Receive()
	if err == nil {
		return sendErr
	}
	return err
}

// attach makes c, which welcome opened, the link that is up now.
func (l *Link) attach(c *conn, welcome *boardv1.Welcome) {
	l.mu.Lock()
	l.session = welcome.GetSession()
	l.minProtocol, l.maxProtocol = welcome.GetMinProtocol(), welcome.GetMaxProtocol()
	l.cur = c
	l.mu.Unlock()
}

// detach ends c: nothing more is sent on it, and every request waiting on
// it fails with why.
func (l *Link) detach(c *conn, why error) {
	l.mu.Lock()
	if l.cur == c {
		l.cur = nil
		l.session = ""
	}
	l.mu.Unlock()
	c.finish(why)
}

func (l *Link) current() *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

func (l *Link) state(s State) {
	if l.cfg.OnState != nil {
		l.cfg.OnState(s)
	}
}

// httpClient is a client whose connections this link owns: a fresh TCP
// connection for every dial (a half-open one is never reused), HTTP/2 with
// PINGs after interval of silence and timeout to answer them, and each
// message sent as one DATA frame (wholemsg).
func (l *Link) httpClient(conns *connTracker, interval, timeout time.Duration) *http.Client {
	p := new(http.Protocols)
	if l.board().Scheme == "https" {
		p.SetHTTP2(true)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 15 * time.Second}
	return &http.Client{Transport: wholemsg.Transport(&http.Transport{
		Protocols:       p,
		TLSClientConfig: l.cfg.TLS,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				conns.add(c)
			}
			return c, err
		},
		HTTP2: &http.HTTP2Config{SendPingTimeout: interval, PingTimeout: timeout},
	})}
}

// connTracker closes the connections one dial made when the dial ends.
type connTracker struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (t *connTracker) add(c net.Conn) {
	t.mu.Lock()
	t.conns = append(t.conns, c)
	t.mu.Unlock()
}

func (t *connTracker) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.conns {
		c.Close()
	}
	t.conns = nil
}
