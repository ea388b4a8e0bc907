package board_test

import (
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"connectrpc.com/connect/v2/connectproto"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// retryInfo is the wait a board's error asks for, or false.
func retryInfo(err error) (time.Duration, bool) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return 0, false
	}
	for _, d := range ce.Details() {
		m, derr := connectproto.UnmarshalErrorDetail(d)
		if ri, ok := m.(*errdetails.RetryInfo); derr == nil && ok {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}

// TestLinksPerSecond: a link past the board's rate of new links is refused
// unavailable before its hello is read, with a hint of when to come back,
// and is counted; a link within the rate is welcomed.
func TestLinksPerSecond(t *testing.T) {
	t.Parallel()
	// One link now, the next in 100 s.
	bt := boardtest.Start(t, boardtest.Options{LinksPerSecond: 0.01})
	first := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken("first")))
	if err := helloErr(t.Context(), first, &boardv1.Hello{Name: "first", Protocol: "3"}); err != nil {
		t.Fatalf("the first link: %v, want a welcome", err)
	}
	second := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken("second")))
	err := helloErr(t.Context(), second, &boardv1.Hello{Name: "second", Protocol: "3"})
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("the second link: %v, want unavailable", err)
	}
	hint, ok := retryInfo(err)
	if !ok || hint < time.Second {
		t.Errorf("the refusal's retry hint = %v (%v), want at least 1s", hint, ok)
	}
	m := scrapeMetrics(t, bt.HTTPClient(), bt.URL+"/metrics", bt.OperatorToken("vic", identity.RoleViewer))
	if got, _ := m.value("symphonix_link_refusals_total"); got != 1 {
		t.Errorf("symphonix_link_refusals_total = %v, want 1", got)
	}
}

// TestLinkMaxAge: the board ends a link that reached its age, between 90%
// and 100% of the limit, unavailable with a hint to link again at once,
// and counts it.
func TestLinkMaxAge(t *testing.T) {
	t.Parallel()
	const age = 2 * time.Second
	bt := boardtest.Start(t, boardtest.Options{LinkMaxAge: age})
	start := time.Now()
	err := helloEnd(t, bt.Client(bt.AgentToken("old")), "old")
	took := time.Since(start)
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("the link ended with %v, want unavailable", err)
	}
	if hint, ok := retryInfo(err); !ok || hint != 0 {
		t.Errorf("the end's retry hint = %v (%v), want 0: link again now", hint, ok)
	}
	if took < age*9/10 {
		t.Errorf("the link ended after %v, want at least 90%% of %v", took, age)
	}
	m := scrapeMetrics(t, bt.HTTPClient(), bt.URL+"/metrics", bt.OperatorToken("vic", identity.RoleViewer))
	if got, _ := m.value("symphonix_link_disconnects_total", "reason", "age"); got != 1 {
		t.Errorf(`symphonix_link_disconnects_total{reason="age"} = %v, want 1`, got)
	}
}
