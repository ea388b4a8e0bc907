package board_test

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// queryCount counts the store's queries of one table, through ent's
// interceptors.
type queryCount struct{ n atomic.Int64 }

func (q *queryCount) interceptor() ent.Interceptor {
	return ent.InterceptFunc(func(next ent.Querier) ent.Querier {
		return ent.QuerierFunc(func(ctx context.Context, query ent.Query) (ent.Value, error) {
			q.n.Add(1)
			return next.Query(ctx, query)
		})
	})
}

// TestStreamVerifiedOnce: opening a stream verifies its credential once —
// one read of the token's row, or one of the session's and one of its
// person's — though both the stream guard and the interceptor (or, for
// health's Watch, requireToken) see it; a unary call, once too.
func TestStreamVerifiedOnce(t *testing.T) {
	// The board's loop reads the tokens and sessions every RevocationPoll:
	// an hour, so that it does not while the queries are counted, and the
	// interceptors are added before anything but this test reads the store.
	bt := boardtest.Start(t, boardtest.Options{RevocationPoll: time.Hour})
	bt.AddUser("ann@example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("ann@example.com", password)
	token := bt.OperatorToken("ops", identity.RoleViewer)
	var tokens, sessions, users queryCount
	bt.Store.Token.Intercept(tokens.interceptor())
	bt.Store.Session.Intercept(sessions.interceptor())
	bt.Store.User.Intercept(users.interceptor())

	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second) // the ceiling
	defer cancel()
	watch := func(c *connect.Client) func() error {
		return func() error {
			s, err := boardv1connect.NewApprovalServiceClient(c).WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{})
			if err != nil {
				return err
			}
			defer s.Close()
			for {
				m, err := s.Receive()
				if err != nil || m.GetEvent() == boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED {
					return err
				}
			}
		}
	}
	healthWatch := func() error {
		// grpc.health.v1.Health/Watch over the Connect protocol, in JSON:
		// the first answer says the board serves.
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, bt.URL+"/grpc.health.v1.Health/Watch",
			bytes.NewReader(envelope(0, []byte(`{"service":""}`))))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/connect+json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := bt.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if flags, payload := readEnvelope(t, resp.Body); flags != 0 || !bytes.Contains(payload, []byte(`SERVING`)) {
			t.Errorf("health Watch answered %x %s, want SERVING", flags, payload)
		}
		return nil
	}
	list := func(c *connect.Client) func() error {
		return func() error {
			_, err := boardv1connect.NewAgentServiceClient(c).ListAgents(ctx, &boardv1.ListAgentsRequest{})
			return err
		}
	}
	for _, tc := range []struct {
		name                    string
		open                    func() error
		tokens, sessions, users int64
	}{
		{"WatchApprovals, token, connect", watch(bt.Client(token)), 1, 0, 0},
		{"WatchApprovals, token, grpc", watch(bt.Client(token, boardtest.Protocols["grpc"]...)), 1, 0, 0},
		{"WatchApprovals, session", watch(bt.SessionClient(cookie, csrf)), 0, 1, 1},
		{"health Watch, token", healthWatch, 1, 0, 0},
		{"ListAgents, token", list(bt.Client(token)), 1, 0, 0},
		{"ListAgents, session", list(bt.SessionClient(cookie, csrf)), 0, 1, 1},
	} {
		t0, s0, u0 := tokens.n.Load(), sessions.n.Load(), users.n.Load()
		if err := tc.open(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if dt, ds, du := tokens.n.Load()-t0, sessions.n.Load()-s0, users.n.Load()-u0; dt != tc.tokens || ds != tc.sessions || du != tc.users {
			t.Errorf("%s read %d tokens, %d sessions, %d people; want %d, %d, %d: one verification",
				tc.name, dt, ds, du, tc.tokens, tc.sessions, tc.users)
		}
	}
}
