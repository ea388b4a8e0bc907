package agentlink_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// quickly bounds how long a link may take to give up on what cannot heal:
// one dial, no redial.
const quickly = 10 * time.Second

// runUntilDone runs a link with cfg and returns what Run returned, its
// waits recorded; the test fails if Run is still dialling after quickly.
func runUntilDone(t *testing.T, cfg agentlink.Config) (*retries, error) {
	t.Helper()
	rec := &retries{changed: make(chan struct{}, 1)}
	cfg.Logger = slog.New(rec)
	link, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- link.Run(ctx) }()
	select {
	case err := <-done:
		return rec, err
	case <-time.After(quickly):
		cancel()
		<-done
		rec.mu.Lock()
		defer rec.mu.Unlock()
		t.Fatalf("Run still dialling after %v: %d redials, %v", quickly, len(rec.waits), rec.msgs)
		return nil, nil
	}
}

// checkGaveUp fails t unless err is a *GaveUpError for reason whose one
// line says what to do, and the link gave up without a redial.
func checkGaveUp(t *testing.T, err error, rec *retries, reason error, says ...string) {
	t.Helper()
	var gave *agentlink.GaveUpError
	if !errors.As(err, &gave) || !errors.Is(err, reason) {
		t.Fatalf("Run = %v, want a *GaveUpError for %v", err, reason)
	}
	line := err.Error()
	if strings.Contains(line, "\n") {
		t.Errorf("Run's error is more than a line: %q", line)
	}
	for _, want := range says {
		if !strings.Contains(line, want) {
			t.Errorf("Run = %q, want it to say %q", line, want)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.waits) != 0 {
		t.Errorf("redials before giving up: %v, want none", rec.msgs)
	}
}

// TestGivesUpOnARefusedToken: a revoked token, a token that is not one,
// an operator's token and another agent's token are refused by the board
// when the link is dialled; waiting does not mend a token, so Run returns
// at once, saying to mint one.
func TestGivesUpOnARefusedToken(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	revoked := bt.Mint(identity.MintOptions{Kind: identity.KindAgent, Name: "revoked"})
	if err := bt.Board.Tokens().Revoke(t.Context(), revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, token, agent string
	}{
		{"revoked", revoked.Token, "revoked"},
		{"malformed", "not-a-token", "malformed"},
		{"operator's", bt.OperatorToken("ops", identity.RoleAdmin), "ops"},
		{"another agent's", bt.AgentToken("someone-else"), "impostor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, err := runUntilDone(t, agentlink.Config{BoardURL: bt.URL, Token: tt.token, Identity: agentlink.Identity{Name: tt.agent}})
			checkGaveUp(t, err, rec, agentlink.ErrTokenRefused, "board token agent --name "+tt.agent)
		})
	}
}

// h2cServer serves handler on loopback over HTTP/2 without TLS, as a
// board does, and HTTP/1.
func h2cServer(t *testing.T, handler http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestGivesUpOnNotABoard: a server that answers the link's call with 404
// or 405 is not a board (a web server, a proxy's wrong path): Run returns
// at once, saying to check the URL.
func TestGivesUpOnNotABoard(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			srv := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, http.StatusText(status), status)
			}))
			rec, err := runUntilDone(t, agentlink.Config{BoardURL: srv.URL, Token: "t", Identity: agentlink.Identity{Name: "lost"}})
			checkGaveUp(t, err, rec, agentlink.ErrNotABoard, srv.URL, "--monitor", http.StatusText(status))
		})
	}
}

// TestGivesUpOnAnUntrustedCertificate: a board whose self-signed
// certificate no authority the agent trusts has signed is not dialled
// again: Run returns at once, saying how to trust it. Trusting it, the
// same board links.
func TestGivesUpOnAnUntrustedCertificate(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{TLS: true})
	tok := bt.AgentToken("careful")
	rec, err := runUntilDone(t, agentlink.Config{BoardURL: bt.URL, Token: tok, Identity: agentlink.Identity{Name: "careful"}})
	checkGaveUp(t, err, rec, agentlink.ErrUntrustedCertificate, "SSL_CERT_FILE")

	up := make(chan agentlink.State, 8)
	runLogged(t, agentlink.Config{BoardURL: bt.URL, Token: tok, Identity: agentlink.Identity{Name: "careful"}, TLS: bt.TLSConfig(),
		OnState: func(s agentlink.State) { up <- s }})
	awaitUp(t, up)
}

// TestKeepsDialingWhatCanHeal: a board that is down (the connection
// refused) and then comes up on its address is linked to; a server that
// answers 503 (a proxy before a board restarting) is dialled again and
// again with backoff, and never given up on.
func TestKeepsDialingWhatCanHeal(t *testing.T) {
	t.Parallel()
	t.Run("down, then up", func(t *testing.T) {
		t.Parallel()
		bt := boardtest.Start(t, boardtest.Options{})
		tok := bt.AgentToken("patient")
		bt.Stop()
		up := make(chan agentlink.State, 8)
		rec := runLogged(t, agentlink.Config{BoardURL: bt.URL, Token: tok, Identity: agentlink.Identity{Name: "patient"},
			MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
			OnState: func(s agentlink.State) { up <- s }})
		awaitWaits(t, rec, 3) // refused, and redialled
		bt.Restart()
		awaitUp(t, up)
	})
	t.Run("503", func(t *testing.T) {
		t.Parallel()
		srv := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
		}))
		rec := runLogged(t, agentlink.Config{BoardURL: srv.URL, Token: "t", Identity: agentlink.Identity{Name: "patient"},
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
		_, msgs := awaitWaits(t, rec, 4)
		for i, m := range msgs {
			if m != "link down" {
				t.Errorf("redial %d: %q, want the link down and dialled again", i, m)
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		// A listener that never answers: the dial's welcome wait ends it.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		rec := runLogged(t, agentlink.Config{BoardURL: "http://" + ln.Addr().String(), Token: "t", Identity: agentlink.Identity{Name: "patient"},
			PingTimeout: 50 * time.Millisecond, PingInterval: 50 * time.Millisecond,
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
		awaitWaits(t, rec, 1)
	})
}
