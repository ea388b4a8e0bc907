package board

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/agentbuild"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/pairing"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/pump"
	"github.com/symphonix/symphonix/store"
)

// accepts is what the welcome says this board reads beyond its protocol:
// the LinkRequest kinds added since, which an agent sends only to a board
// that lists them.
var accepts = []string{"run_events"}

// Accepts is what a welcome says this board reads beyond the link's
// protocol number.
func Accepts() []string { return slices.Clone(accepts) }

// The link protocols this board accepts: every one from MinProtocol to
// Protocol, compared as whole numbers. What it sends a link is decided by
// the capabilities the agent announced, never by the number.
const (
	MinProtocol = "2"
	Protocol    = "3"
)

// Limits on what a hello may carry.
const (
	maxDescription  = 4096
	maxCapabilities = 64
	maxCapability   = 64
	maxTools        = 1024
	maxTool         = 256
	helloWithin     = 10 * time.Second
)

var (
	capabilityShape = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	buildShape      = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// linkService is symphonix.board.v1.AgentLinkService.
type linkService struct {
	b *Board
}

var _ boardv1connect.AgentLinkServiceHandler = linkService{}

func (l linkService) Link(ctx context.Context, stream boardv1connect.AgentLinkServiceLinkServerStream) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// This goroutine waits for the whole life of a link, ten thousand of them
	// at once, so its frames are kept small: the work before and after the
	// wait is in functions of their own (docs/benchmarks.md).
	s, in, err := l.open(ctx, cancel, stream)
	if err != nil {
		return err
	}
	defer s.stopExpiry()
	defer s.out.close()
	defer s.asks.close()
	return l.close(ctx, s, l.serve(ctx, s, in))
}

// open receives and checks the hello, records the agent online and
// welcomes it. One goroutine receives; the handler's decides. When the
// handler returns, the stream's request body is closed and the receiver's
// Receive fails, so the receiver always ends.
func (l linkService) open(ctx context.Context, cancel context.CancelCauseFunc, stream boardv1connect.AgentLinkServiceLinkServerStream) (*session, <-chan pump.Received[*boardv1.LinkRequest], error) {
	b := l.b
	caller, ok := identity.FromContext(ctx)
	if !ok || caller.Kind != identity.KindAgent {
		return nil, nil, connect.NewError(connect.CodeUnauthenticated, "unauthenticated")
	}
	if err := b.admitLink(); err != nil {
		return nil, nil, err
	}
	in := pump.Receive(ctx, stream.Receive)
	hello, err := l.awaitHello(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	if err := validHello(hello, caller); err != nil {
		return nil, nil, err
	}
	s := &session{id: newSessionID(), name: hello.GetName(), tokenID: caller.TokenID, cancel: cancel, out: newLinkOut(stream),
		caps:     slices.Clone(hello.GetCapabilities()),
		runSlots: make(chan struct{}, maxRunWritesInFlight), runStored: make(chan *runWrite, maxRunWritesInFlight)}
	var owed owed
	row, err := b.presence.arrive(ctx, s, func(ctx context.Context) (row *ent.Agent, err error) {
		row, owed, err = b.recordHello(ctx, hello, s.id)
		return row, err
	})
	if err != nil {
		return nil, nil, arriveError(ctx, b, s.name, err)
	}
	if !caller.ExpiresAt.IsZero() {
		// A link lives no longer than the token that opened it.
		s.expiry = time.AfterFunc(caller.ExpiresAt.Sub(b.now()), func() { cancel(errExpired) })
	}
	b.log.InfoContext(ctx, "agent linked", "agent", s.name, "session", s.id)
	err = s.out.welcome(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{
		Session:      s.id,
		Protocol:     hello.GetProtocol(),
		MinProtocol:  MinProtocol,
		MaxProtocol:  Protocol,
		PingInterval: durationpb.New(b.cfg.PingInterval),
		PingTimeout:  durationpb.New(b.cfg.PingTimeout),
		RedialWithin: durationpb.New(b.presence.redialWithin()),
		Accepts:      accepts,
	}}})
	if err != nil {
		s.stopExpiry()
		s.out.close()
		b.presence.leave(s, true)
		return nil, nil, context.Canceled
	}
	// What the agent is switched on for first, so that a run a decision
	// resumes calls its tools under the board's word; then the decisions
	// made while it was away, exactly once; then the people who paired
	// with its conversations meanwhile; then an operator's pause or resume
	// it has not acted on yet; then which of its triggers are paused. What
	// happens meanwhile (a decision
	// made, a switch flipped) is held, and follows them.
	sendSwitches(s, row)
	if owed.decisions {
		b.deliverUndelivered(ctx, s, s.out.send)
	}
	if owed.pairings {
		b.deliverPairings(ctx, s, s.out.send)
	}
	sendPause(s, row)
	sendTriggerPauses(s, row)
	if err := s.out.catchUpDone(); err != nil {
		s.stopExpiry()
		s.out.close()
		b.presence.leave(s, true)
		return nil, nil, context.Canceled
	}
	b.metrics.linked()
	return s, in, nil
}

// arriveError is what an agent whose arrival could not be recorded is
// told: to come back (unavailable), never that it was refused. The cause
// is logged, not sent.
func arriveError(ctx context.Context, b *Board, name string, err error) error {
	if errors.Is(err, errShutdown) {
		return connect.NewError(connect.CodeUnavailable, "hello: the board is shutting down; try again")
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	b.log.ErrorContext(ctx, "record agent online", "agent", name, "err", err.Error())
	return connect.NewError(connect.CodeUnavailable, "hello: the board cannot record the agent now; try again")
}

// close records why the link ended and what the agent is told.
func (l linkService) close(ctx context.Context, s *session, err error) error {
	// A link the agent closed itself is a goodbye; anything else may be a
	// blip, and the agent gets the grace to come back.
	l.b.presence.leave(s, !errors.Is(err, io.EOF))
	l.b.metrics.unlinked(disconnectReason(err))
	l.b.log.InfoContext(ctx, "agent unlinked", "agent", s.name, "session", s.id, "why", linkEnd(err))
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, errSuperseded), errors.Is(err, errShutdown), errors.Is(err, context.Canceled):
		return nil
	case errors.Is(err, identity.ErrRevoked):
		return connect.NewError(connect.CodeUnauthenticated, "token revoked")
	case errors.Is(err, errExpired):
		return connect.NewError(connect.CodeUnauthenticated, "token expired")
	case errors.Is(err, errSilent):
		return connect.NewError(connect.CodeDeadlineExceeded, "no ping within the ping timeout")
	case errors.Is(err, errOverrun):
		return connect.NewError(connect.CodeUnavailable, "the board could not hold what happened while the link caught up; link again")
	case errors.Is(err, errAgeLimit):
		return withRetryHint(connect.NewError(connect.CodeUnavailable, "the link reached the board's age limit; link again, to another board if there are several"), 0)
	}
	return err
}

func linkEnd(err error) string {
	if errors.Is(err, io.EOF) {
		return "agent closed the link"
	}
	return err.Error()
}

// awaitHello waits for the first message, which must be a hello.
func (l linkService) awaitHello(ctx context.Context, in <-chan pump.Received[*boardv1.LinkRequest]) (*boardv1.Hello, error) {
	t := time.NewTimer(helloWithin)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-t.C:
		return nil, connect.Errorf(connect.CodeDeadlineExceeded, "hello: not sent within %s", helloWithin)
	case r, ok := <-in:
		if !ok {
			return nil, context.Cause(ctx)
		}
		if r.Err != nil {
			if errors.Is(r.Err, io.EOF) {
				return nil, connect.NewError(connect.CodeInvalidArgument, "hello: link closed before hello")
			}
			return nil, r.Err
		}
		h := r.Msg.GetHello()
		if h == nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, "hello: the first message must be a hello")
		}
		return h, nil
	}
}

// serve handles the link after the welcome until it ends, and returns why.
func (l linkService) serve(ctx context.Context, s *session, in <-chan pump.Received[*boardv1.LinkRequest]) error {
	b := l.b
	silence := b.cfg.PingInterval + b.cfg.PingTimeout
	watchdog := time.NewTimer(silence)
	defer watchdog.Stop()
	var aged <-chan time.Time // nil: no age limit
	if age := b.linkAge(); age > 0 {
		t := time.NewTimer(age)
		defer t.Stop()
		aged = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-watchdog.C:
			return errSilent
		case <-aged:
			return errAgeLimit
		case w := <-s.runStored:
			if err := l.runStored(s, w); err != nil {
				return err
			}
		case r, ok := <-in:
			if !ok {
				return context.Cause(ctx)
			}
			if r.Err != nil {
				return r.Err
			}
			watchdog.Reset(silence)
			switch k := r.Msg.GetKind().(type) {
			case *boardv1.LinkRequest_Hello:
				return connect.NewError(connect.CodeInvalidArgument, "hello: sent twice")
			case *boardv1.LinkRequest_Ping:
				if d := k.Ping.GetLastRoundTrip(); d != nil {
					if err := b.pingTimed(d); err != nil {
						if err := l.answerError(ctx, s, "", "ping", err); err != nil {
							return err
						}
					}
				}
				err := s.out.send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{
					Seq: k.Ping.GetSeq(), SendTime: k.Ping.GetSendTime(),
					RedialWithin: durationpb.New(b.presence.redialWithin()),
				}}})
				if err != nil {
					return err
				}
			case *boardv1.LinkRequest_WhoDecides:
				if err := l.whoDecides(ctx, s, k.WhoDecides); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Raise:
				if err := l.raise(ctx, s, k.Raise); err != nil {
					return err
				}
			case *boardv1.LinkRequest_HowToIdentify:
				if err := l.howToIdentify(ctx, s, k.HowToIdentify); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Pair:
				if err := l.pair(ctx, s, k.Pair); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Verify:
				if err := l.verify(ctx, s, k.Verify); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Conversations:
				if err := l.conversations(ctx, s, k.Conversations); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Withdraw:
				if err := l.withdraw(ctx, s, k.Withdraw); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Health:
				if err := l.health(ctx, s, k.Health); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Triggers:
				if err := l.triggerReport(ctx, s, k.Triggers); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Evals:
				if err := l.evalReport(ctx, s, k.Evals); err != nil {
					return err
				}
			case *boardv1.LinkRequest_PauseState:
				if err := l.pauseState(ctx, s, k.PauseState); err != nil {
					return err
				}
			case *boardv1.LinkRequest_ChatAnswer:
				s.asks.answer(k.ChatAnswer.GetRequestId(), k.ChatAnswer, nil)
			case *boardv1.LinkRequest_RunEvent:
				if err := l.runEvent(ctx, s, "run_event", k.RunEvent); err != nil {
					return err
				}
			case *boardv1.LinkRequest_RunEvents:
				if err := l.runEvents(ctx, s, k.RunEvents); err != nil {
					return err
				}
			case *boardv1.LinkRequest_RunSummary:
				if err := l.runSummary(ctx, s, k.RunSummary); err != nil {
					return err
				}
			case *boardv1.LinkRequest_Fired:
				s.asks.answer(k.Fired.GetRequestId(), k.Fired, nil)
			case *boardv1.LinkRequest_Stopped:
				s.asks.answer(k.Stopped.GetRequestId(), k.Stopped, nil)
			case *boardv1.LinkRequest_Error:
				s.asks.answer(k.Error.GetRequestId(), nil, k.Error)
			default:
				// Pongs, and kinds this board does not know: ignored.
			}
		}
	}
}

// validHello refuses a hello the board cannot accept, naming the field.
func validHello(h *boardv1.Hello, caller identity.Caller) error {
	bad := func(format string, a ...any) error {
		return connect.NewError(connect.CodeInvalidArgument, "hello: "+fmt.Sprintf(format, a...))
	}
	if p := h.GetProtocol(); !speaks(p) {
		return connect.Errorf(connect.CodeFailedPrecondition,
			"hello: protocol: agent speaks %s, board speaks %s to %s", protocolWord(p), MinProtocol, Protocol)
	}
	if err := identity.ValidName(h.GetName()); err != nil {
		return bad("%v", err)
	}
	if h.GetName() != caller.Name {
		return connect.Errorf(connect.CodePermissionDenied,
			"hello: name %q is not the name this token was issued for", h.GetName())
	}
	if n := len(h.GetDescription()); n > maxDescription {
		return bad("description: %d bytes, at most %d", n, maxDescription)
	}
	if n := len(h.GetCapabilities()); n > maxCapabilities {
		return bad("capabilities: %d, at most %d", n, maxCapabilities)
	}
	for i, c := range h.GetCapabilities() {
		if len(c) > maxCapability || !capabilityShape.MatchString(c) {
			return bad("capabilities[%d]: want lower-case letters, digits and dashes, at most %d bytes", i, maxCapability)
		}
	}
	if b := h.GetBuild(); b != "" && !buildShape.MatchString(b) {
		return bad("build: want sha256: and 64 lower-case hex digits")
	}
	if err := validInputs(h.GetInputs()); err != nil {
		return bad("%v", err)
	}
	if err := validInstalledPackage(h.GetPackage()); err != nil {
		return bad("%v", err)
	}
	if n := len(h.GetTools()); n > maxTools {
		return bad("tools: %d, at most %d", n, maxTools)
	}
	for i, t := range h.GetTools() {
		if t == "" || len(t) > maxTool {
			return bad("tools[%d]: want 1 to %d bytes", i, maxTool)
		}
		if server, tool, ok := strings.Cut(t, "."); !ok || server == "" || tool == "" {
			return bad("tools[%d]: %q: want \"<server>.<tool>\"", i, t)
		}
	}
	return nil
}

// speaks reports whether p is a protocol from MinProtocol to Protocol: a
// whole number written without leading zeros.
func speaks(p string) bool {
	n, err := strconv.Atoi(p)
	if err != nil || strconv.Itoa(n) != p {
		return false
	}
	lo, _ := strconv.Atoi(MinProtocol)
	hi, _ := strconv.Atoi(Protocol)
	return lo <= n && n <= hi
}

// protocolWord is the protocol a hello names, for a refusal: as it is when
// it looks like a version, quoted and cut short otherwise.
func protocolWord(p string) string {
	switch {
	case p == "":
		return "none (protocol is empty)"
	case len(p) <= 16 && !strings.ContainsFunc(p, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '.' || r == '-')
	}):
		return p
	}
	return quoted(p)
}

// uniqueTools is tools without repeats, in the order first declared.
func uniqueTools(tools []string) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// recordHello records the agent online under session, with what its hello
// says, and returns its row with any tools its build no longer declares
// switched off, and what it may be owed. The write is one of a batch
// (presence.hellos).
func (b *Board) recordHello(ctx context.Context, h *boardv1.Hello, session string) (*ent.Agent, owed, error) {
	w := &helloWrite{hello: h, session: session, at: b.now()}
	b.presence.hellos.add(w)
	if w.err != nil {
		return nil, owed{}, w.err
	}
	row, err := b.pruneSwitches(ctx, w.row)
	return row, w.owed, err
}

// owed says what an arriving agent may be owed from while it was away:
// decisions, pairings. Where it says no, there was nothing when its
// arrival was recorded, and what comes after goes to its link as it
// comes, so the link does not read them again.
type owed struct{ decisions, pairings bool }

// maxHelloBatch is the most hellos one transaction records.
const maxHelloBatch = 500

// helloWrite is one hello waiting for its batch (presence.hellos): arrivals
// are recorded many at a time, so that a fleet redialling at once costs the
// store a few hundred writes, not one transaction each.
type helloWrite struct {
	hello   *boardv1.Hello
	session string
	at      time.Time
	row     *ent.Agent
	owed    owed
	err     error
}

// writeHellos upserts every agent of batch as online under its session
// and reads the rows back, in one transaction; a failure fails them all.
func writeHellos(b *Board, batch []*helloWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rows []*ent.Agent
	names := make([]string, len(batch))
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		creates := make([]*ent.AgentCreate, len(batch))
		for i, w := range batch {
			h := w.hello
			caps := slices.Clone(h.GetCapabilities())
			slices.Sort(caps)
			caps = slices.Compact(caps)
			creates[i] = tx.Agent.Create().
				SetName(h.GetName()).
				SetDescription(h.GetDescription()).
				SetOnline(true).
				SetSession(w.session).
				SetBoard(b.id).
				SetCapabilities(caps).
				SetProtocol(h.GetProtocol()).
				SetBuild(h.GetBuild()).
				SetTools(uniqueTools(h.GetTools())).
				SetInputs(inputsJSON(h.GetInputs())).
				SetPackageName(h.GetPackage().GetName()).
				SetPackageVersion(h.GetPackage().GetVersion()).
				SetPackageDigest(h.GetPackage().GetDigest()).
				SetFirstSeen(w.at).
				SetLastSeen(w.at)
			names[i] = h.GetName()
		}
		err := tx.Agent.CreateBulk(creates...).
			OnConflictColumns(agent.FieldName).
			Update(func(u *ent.AgentUpsert) {
				u.UpdateDescription().UpdateOnline().UpdateSession().UpdateBoard().UpdateCapabilities().
					UpdateProtocol().UpdateBuild().UpdateTools().UpdateInputs().UpdateLastSeen().
					UpdatePackageName().UpdatePackageVersion().UpdatePackageDigest()
			}).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("record agents: %w", err)
		}
		if err := writeBuilds(ctx, tx, batch); err != nil {
			return fmt.Errorf("record agents' builds: %w", err)
		}
		rows, err = tx.Agent.Query().Where(agent.NameIn(names...)).All(ctx)
		return err
	})
	byName := make(map[string]*ent.Agent, len(rows))
	for _, r := range rows {
		byName[r.Name] = r
	}
	if err == nil {
		owedTo(ctx, b, batch, names)
	}
	for _, w := range batch {
		switch w.row = byName[w.hello.GetName()]; {
		case err != nil:
			w.row, w.err = nil, err
		case w.row == nil:
			w.err = fmt.Errorf("record agent %q: not found after it was written", w.hello.GetName())
		}
	}
}

// owedTo reads which agents of a batch of arrivals, just recorded online,
// are owed decisions or pairings: two reads for the batch, after its
// transaction, so that whatever was stored before them is seen, and
// whatever is stored after finds the agent linked here and is sent to it
// then. An agent whose debts could not be read is taken to owe both, and
// its link reads them itself.
func owedTo(ctx context.Context, b *Board, batch []*helloWrite, names []string) {
	decisions, derr := b.db.Approval.Query().
		Where(approval.AgentIn(names...), approval.SayNEQ(""), approval.DeliveredAtIsNil()).
		Unique(true).Select(approval.FieldAgent).Strings(ctx)
	pairings, perr := b.db.Pairing.Query().
		Where(pairing.AgentIn(names...), pairing.DeliveredAtIsNil()).
		Unique(true).Select(pairing.FieldAgent).Strings(ctx)
	owesDecisions, owesPairings := setOf(decisions), setOf(pairings)
	for _, w := range batch {
		name := w.hello.GetName()
		w.owed = owed{decisions: derr != nil || owesDecisions[name], pairings: perr != nil || owesPairings[name]}
	}
}

// setOf is a set of the strings ss.
func setOf(ss []string) map[string]bool {
	set := make(map[string]bool, len(ss))
	for _, s := range ss {
		set[s] = true
	}
	return set
}

// maxAgentBuilds is the most builds the board keeps of one agent
// (AgentBuild): beyond it, those last seen longest ago go.
const maxAgentBuilds = 50

// writeBuilds records the build each hello of batch names, in the batch's
// transaction: a build new to its agent gets a row, a known one is seen
// again (last_seen and the package move). Then the agents of the batch
// keep at most maxAgentBuilds each. A hello naming no build records none.
func writeBuilds(ctx context.Context, tx *ent.Tx, batch []*helloWrite) error {
	type key struct{ agent, build string }
	latest := make(map[key]*helloWrite, len(batch))
	for _, w := range batch {
		k := key{w.hello.GetName(), w.hello.GetBuild()}
		if k.build == "" {
			continue
		}
		if o := latest[k]; o == nil || !w.at.Before(o.at) {
			latest[k] = w
		}
	}
	if len(latest) == 0 {
		return nil
	}
	// One order for every board on the store, so that two batches of the
	// same agents take their rows' locks alike.
	keys := slices.SortedFunc(maps.Keys(latest), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.build, b.build))
	})
	creates := make([]*ent.AgentBuildCreate, len(keys))
	agents := make([]string, 0, len(keys))
	for i, k := range keys {
		w := latest[k]
		at := w.at.UTC().Truncate(time.Microsecond) // what a page token holds
		creates[i] = tx.AgentBuild.Create().
			SetAgent(k.agent).
			SetBuild(k.build).
			SetPackageName(w.hello.GetPackage().GetName()).
			SetPackageVersion(w.hello.GetPackage().GetVersion()).
			SetFirstSeen(at).
			SetLastSeen(at)
		if len(agents) == 0 || agents[len(agents)-1] != k.agent {
			agents = append(agents, k.agent)
		}
	}
	err := tx.AgentBuild.CreateBulk(creates...).
		OnConflictColumns(agentbuild.FieldAgent, agentbuild.FieldBuild).
		Update(func(u *ent.AgentBuildUpsert) {
			u.UpdateLastSeen().UpdatePackageName().UpdatePackageVersion()
		}).
		Exec(ctx)
	if err != nil {
		return err
	}
	return capBuilds(ctx, tx, agents)
}

// capBuilds removes, of each of agents, the builds beyond maxAgentBuilds,
// those last seen longest ago first: one count for them all, and a read
// and a delete for each agent over, which is rare (a new build a hello).
func capBuilds(ctx context.Context, tx *ent.Tx, agents []string) error {
	var counts []struct {
		Agent string `json:"agent"`
		Count int    `json:"count"`
	}
	err := tx.AgentBuild.Query().Where(agentbuild.AgentIn(agents...)).
		GroupBy(agentbuild.FieldAgent).Aggregate(ent.Count()).Scan(ctx, &counts)
	if err != nil {
		return err
	}
	for _, c := range counts {
		if c.Count <= maxAgentBuilds {
			continue
		}
		ids, err := tx.AgentBuild.Query().Where(agentbuild.Agent(c.Agent)).
			Order(ent.Desc(agentbuild.FieldLastSeen), ent.Desc(agentbuild.FieldID)).
			Offset(maxAgentBuilds).IDs(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.AgentBuild.Delete().Where(agentbuild.IDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

func newSessionID() string {
	var p [12]byte
	_, _ = rand.Read(p[:])
	return hex.EncodeToString(p[:])
}

// pingTimed keeps the round trip an agent timed for its last ping: from 0
// to the ping timeout of its welcome, beyond which the agent would have
// given its link up.
func (b *Board) pingTimed(d *durationpb.Duration) error {
	if err := d.CheckValid(); err != nil {
		return badRequest("ping.last_round_trip: not a duration")
	}
	rtt := d.AsDuration()
	if rtt < 0 || rtt > b.cfg.PingTimeout {
		return badRequest("ping.last_round_trip: %s, want 0 to the ping timeout (%s)", rtt, b.cfg.PingTimeout)
	}
	b.metrics.pinged(rtt)
	return nil
}
