package agentlink_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
)

// recorder is a board that welcomes every agent, saying it accepts
// protocols 2 to 3, answers its pings, hands the test every other message
// the agent sends, and sends the agent what the test pushes. drop ends the
// link that is up.
type recorder struct {
	// accepts: what the welcome lists in accepts.
	accepts []string
	hellos  chan *boardv1.Hello
	got     chan *boardv1.LinkRequest
	push    chan *boardv1.LinkResponse
	drop    chan struct{}
}

func newRecorder(t *testing.T) (*recorder, string) {
	r := &recorder{
		hellos: make(chan *boardv1.Hello, 16),
		got:    make(chan *boardv1.LinkRequest, 256),
		push:   make(chan *boardv1.LinkResponse),
		drop:   make(chan struct{}),
	}
	return r, serveLink(t, r)
}

func (r *recorder) Link(ctx context.Context, s boardv1connect.AgentLinkServiceLinkServerStream) error {
	first, err := s.Receive()
	if err != nil {
		return err
	}
	r.hellos <- first.GetHello()
	if err := s.Send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Welcome{Welcome: &boardv1.Welcome{
		Session: "s", Protocol: first.GetHello().GetProtocol(), MinProtocol: "2", MaxProtocol: "3", Accepts: r.accepts,
	}}}); err != nil {
		return err
	}
	in := make(chan *boardv1.LinkRequest)
	go func() {
		defer close(in)
		for {
			m, err := s.Receive()
			if err != nil {
				return
			}
			select {
			case in <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.drop:
			return nil
		case m := <-r.push:
			if err := s.Send(m); err != nil {
				return err
			}
		case m, ok := <-in:
			if !ok {
				return nil
			}
			if p := m.GetPing(); p != nil {
				if err := s.Send(&boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pong{Pong: &boardv1.Pong{Seq: p.GetSeq()}}}); err != nil {
					return err
				}
				continue
			}
			r.got <- m
		}
	}
}

// next is the next message the agent sent that is not a ping.
func (r *recorder) next(t *testing.T) *boardv1.LinkRequest {
	t.Helper()
	select {
	case m := <-r.got:
		return m
	case <-time.After(within):
		t.Fatalf("the agent sent nothing within %s", within)
	}
	return nil
}

// hello is the next hello the board received.
func (r *recorder) hello(t *testing.T) *boardv1.Hello {
	t.Helper()
	select {
	case h := <-r.hellos:
		return h
	case <-time.After(within):
		t.Fatalf("no hello within %s", within)
	}
	return nil
}

// logLines is a slog handler's output a test can read.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runLink runs a link with cfg, against url, until the test ends.
func runLink(t *testing.T, url string, cfg agentlink.Config) (*agentlink.Link, chan agentlink.State) {
	t.Helper()
	states := make(chan agentlink.State, 64)
	cfg.BoardURL, cfg.Token, cfg.Identity = url, "t", agentlink.Identity{Name: "desk"}
	cfg.MinBackoff, cfg.MaxBackoff = 10*time.Millisecond, 20*time.Millisecond
	cfg.OnState = func(s agentlink.State) { states <- s }
	l, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return l, states
}

func awaitUp(t *testing.T, states chan agentlink.State) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case s := <-states:
			if s.Up {
				return
			}
		case <-deadline:
			t.Fatalf("the link did not come up within %s", within)
		}
	}
}

// TestHelloAnnouncesWhatIsGiven: the hello says protocol 3 and exactly the
// capabilities given, nothing more; the link keeps the range the welcome
// names.
func TestHelloAnnouncesWhatIsGiven(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	l, states := runLink(t, url, agentlink.Config{Capabilities: []string{agentlink.CapabilityPause}})
	h := rec.hello(t)
	if h.GetProtocol() != "3" || !slices.Equal(h.GetCapabilities(), []string{"pause"}) {
		t.Errorf("hello = protocol %q, capabilities %q; want 3 and [pause] only", h.GetProtocol(), h.GetCapabilities())
	}
	awaitUp(t, states)
	if lo, hi := l.Protocols(); lo != "2" || hi != "3" {
		t.Errorf("Protocols = %q, %q; want the welcome's 2, 3", lo, hi)
	}
	if err := l.ReportHealth(agentlink.Health{Status: agentlink.HealthOK}); err == nil {
		t.Error("ReportHealth on a link that does not announce health = nil, want an error")
	}

	rec2, url2 := newRecorder(t)
	runLink(t, url2, agentlink.Config{})
	if h := rec2.hello(t); len(h.GetCapabilities()) != 0 {
		t.Errorf("hello with no capabilities given announces %q; want none", h.GetCapabilities())
	}
}

func TestNewRefusesCapabilities(t *testing.T) {
	t.Parallel()
	for name, caps := range map[string][]string{
		"not built":   {"delegation-trees"},
		"unknown":     {"teleport"},
		"given twice": {"pause", "users", "pause"},
	} {
		_, err := agentlink.New(agentlink.Config{BoardURL: "http://127.0.0.1:1", Token: "t", Identity: agentlink.Identity{Name: "a"}, Capabilities: caps})
		if err == nil || !strings.Contains(err.Error(), "Capabilities") {
			t.Errorf("New with capabilities %s %q = %v, want an error naming Capabilities", name, caps, err)
		}
	}
}

// TestPauseStateAndPause: the state given before the link runs goes first
// after the welcome, and again after every welcome; a change goes at once;
// the board's Pause reaches OnPause; a report the board refuses (an error
// with no request id) is logged and the link stays up.
func TestPauseStateAndPause(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	log := &logLines{}
	pauses := make(chan agentlink.Pause, 4)
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	l, err := agentlink.New(agentlink.Config{BoardURL: url, Token: "t", Identity: agentlink.Identity{Name: "desk"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ReportPause(agentlink.PauseState{}); err == nil {
		t.Error("ReportPause on a link that does not announce pause = nil, want an error")
	}
	l, states := runLink(t, url, agentlink.Config{
		Capabilities: []string{agentlink.CapabilityPause},
		Logger:       slog.New(slog.NewTextHandler(log, nil)),
		OnPause:      func(p agentlink.Pause) { pauses <- p },
	})
	long := strings.Repeat("é", 300) // 600 bytes
	if err := l.ReportPause(agentlink.PauseState{Paused: true, Reason: long, By: "ann", At: at, Origin: agentlink.OriginLocal}); err != nil {
		t.Fatal(err)
	}
	if err := l.ReportPause(agentlink.PauseState{Origin: "moon"}); err == nil {
		t.Error("ReportPause with an unknown origin = nil, want an error")
	}
	awaitUp(t, states)
	ps := rec.next(t).GetPauseState()
	if !ps.GetPaused() || ps.GetBy() != "ann" || ps.GetOrigin() != boardv1.PauseOrigin_PAUSE_ORIGIN_LOCAL ||
		!ps.GetTime().AsTime().Equal(at) || len(ps.GetReason()) != 512 || !strings.HasPrefix(long, ps.GetReason()) {
		t.Errorf("first message after the welcome = %v; want the local pause, its reason cut to 512 bytes", ps)
	}

	rec.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Error{Error: &boardv1.LinkError{
		Code: boardv1.LinkErrorCode_LINK_ERROR_CODE_RESOURCE_EXHAUSTED, Message: "health: sooner than 5 s after the last",
	}}}
	rec.push <- &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_Pause{Pause: &boardv1.Pause{
		Paused: false, Reason: "migrated", By: "bob", Time: timestamppb.New(at),
	}}}
	select {
	case p := <-pauses:
		if p.Paused || p.Reason != "migrated" || p.By != "bob" || !p.At.Equal(at) {
			t.Errorf("OnPause got %+v, want bob's resume", p)
		}
	case <-time.After(within):
		t.Fatal("OnPause not called within the ceiling")
	}
	select {
	case s := <-states:
		t.Fatalf("the link went %+v after a refused report; want it up", s)
	default:
	}
	if !strings.Contains(log.String(), "the board refused a report") || !strings.Contains(log.String(), "resource_exhausted") {
		t.Errorf("log = %q, want the refusal warned about with its code", log)
	}

	if err := l.ReportPause(agentlink.PauseState{Reason: "migrated", By: "bob", At: at, Origin: agentlink.OriginBoard}); err != nil {
		t.Fatal(err)
	}
	if ps := rec.next(t).GetPauseState(); ps.GetPaused() || ps.GetOrigin() != boardv1.PauseOrigin_PAUSE_ORIGIN_BOARD {
		t.Errorf("after the resume, sent %v; want not paused, from the board", ps)
	}

	rec.drop <- struct{}{}
	rec.hello(t)
	if ps := rec.next(t).GetPauseState(); ps == nil || ps.GetPaused() || ps.GetBy() != "bob" {
		t.Errorf("first message after the second welcome = %v; want the state again", ps)
	}
}

// TestHealthReportedOnChange: the first round is reported; rounds that
// come out the same are not; a changed one is, no sooner than 5 s after
// the one before; after a relink, the newest round is reported again.
func TestHealthReportedOnChange(t *testing.T) {
	t.Parallel()
	rec, url := newRecorder(t)
	l, states := runLink(t, url, agentlink.Config{Capabilities: []string{agentlink.CapabilityHealth}})
	round := func(status, check, detail string) agentlink.Health {
		return agentlink.Health{Status: status, Start: time.Now(), Checks: []agentlink.HealthCheck{
			{Name: "waiting", Status: agentlink.CheckOK, Took: time.Millisecond},
			{Name: "mcp:orders", Status: check, Took: 2 * time.Millisecond, Detail: detail},
		}}
	}
	awaitUp(t, states)
	if err := l.ReportHealth(round(agentlink.HealthOK, agentlink.CheckOK, "")); err != nil {
		t.Fatal(err)
	}
	first := rec.next(t).GetHealth()
	sentFirst := time.Now()
	if first.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_OK || len(first.GetChecks()) != 2 ||
		first.GetChecks()[1].GetName() != "mcp:orders" || first.GetChecks()[1].GetDuration().AsDuration() != 2*time.Millisecond {
		t.Fatalf("first report = %v; want ok with its two lines", first)
	}
	for range 3 { // the same outcome: not reported
		if err := l.ReportHealth(round(agentlink.HealthOK, agentlink.CheckOK, "")); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", 2000)
	if err := l.ReportHealth(round(agentlink.HealthDegraded, agentlink.CheckError, long)); err != nil {
		t.Fatal(err)
	}
	second := rec.next(t).GetHealth()
	if since := time.Since(sentFirst); since < agentlink.HealthSpacing-100*time.Millisecond {
		t.Errorf("the second report came %s after the first, want at least %s", since, agentlink.HealthSpacing)
	}
	if second.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_DEGRADED || len(second.GetChecks()[1].GetDetail()) != agentlink.MaxCheckDetail {
		t.Fatalf("second report = %v; want the change (the unchanged rounds not sent), its detail cut to %d bytes", second, agentlink.MaxCheckDetail)
	}

	rec.drop <- struct{}{}
	rec.hello(t)
	if again := rec.next(t).GetHealth(); again.GetStatus() != boardv1.HealthStatus_HEALTH_STATUS_DEGRADED {
		t.Errorf("after the relink, sent %v; want the newest round again", again)
	}
}

func TestReportHealthRefusesOutOfBounds(t *testing.T) {
	t.Parallel()
	l, err := agentlink.New(agentlink.Config{BoardURL: "http://127.0.0.1:1", Token: "t", Identity: agentlink.Identity{Name: "a"},
		Capabilities: []string{agentlink.CapabilityHealth}})
	if err != nil {
		t.Fatal(err)
	}
	ok := agentlink.HealthCheck{Name: "waiting", Status: agentlink.CheckOK}
	many := make([]agentlink.HealthCheck, agentlink.MaxHealthChecks+1)
	for i := range many {
		many[i] = agentlink.HealthCheck{Name: "c" + strings.Repeat("x", i%10) + string(rune('a'+i%26)) + string(rune('a'+i/26)), Status: agentlink.CheckOK}
	}
	for name, h := range map[string]agentlink.Health{
		"no status":      {Checks: []agentlink.HealthCheck{ok}},
		"a check status": {Status: agentlink.HealthOK, Checks: []agentlink.HealthCheck{{Name: "x", Status: "fine"}}},
		"no name":        {Status: agentlink.HealthOK, Checks: []agentlink.HealthCheck{{Status: agentlink.CheckOK}}},
		"a long name":    {Status: agentlink.HealthOK, Checks: []agentlink.HealthCheck{{Name: strings.Repeat("n", 65), Status: agentlink.CheckOK}}},
		"a control":      {Status: agentlink.HealthOK, Checks: []agentlink.HealthCheck{{Name: "a\nb", Status: agentlink.CheckOK}}},
		"a name twice":   {Status: agentlink.HealthOK, Checks: []agentlink.HealthCheck{ok, ok}},
		"too many":       {Status: agentlink.HealthOK, Checks: many},
	} {
		if err := l.ReportHealth(h); err == nil {
			t.Errorf("ReportHealth with %s = nil, want an error", name)
		}
	}
	if err := l.ReportHealth(agentlink.Health{Status: agentlink.HealthOK, Checks: []agentlink.HealthCheck{ok}}); err != nil {
		t.Errorf("ReportHealth of a good round = %v", err)
	}
}
