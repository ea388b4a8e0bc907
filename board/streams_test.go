package board_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// bubbleStream is a stream served by a board in a synctest bubble, opened
// as a Connect client would.
type bubbleStream struct {
	name  string
	ended chan struct{}
	rec   *httptest.ResponseRecorder
}

// streamSpec is a stream to open: its procedure and its one request (JSON);
// bidi streams are served as over HTTP/2 and keep their body open, as a
// client between two requests does.
type streamSpec struct {
	name, procedure, request string
	bidi                     bool
	// tokensOnly: a procedure a session cookie may not call.
	tokensOnly bool
}

var heldStreams = []streamSpec{
	{name: "WatchApprovals", procedure: boardv1connect.ApprovalServiceWatchApprovalsProcedure, request: "{}"},
	{name: "WatchAgents", procedure: boardv1connect.AgentServiceWatchAgentsProcedure, request: "{}"},
	{name: "reflection", procedure: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", bidi: true},
	{name: "health Watch", procedure: "/grpc.health.v1.Health/Watch", request: `{"service":""}`, tokensOnly: true},
}

func openBubbleStream(t *testing.T, h http.Handler, spec streamSpec, header map[string]string) *bubbleStream {
	t.Helper()
	var body io.Reader = bytes.NewReader(envelope(0, []byte(spec.request)))
	if spec.bidi {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		body = pr
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // a client that goes away, should the test end first
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, spec.procedure, body)
	if spec.bidi {
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	}
	r.Header.Set("Content-Type", "application/connect+json")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	s := &bubbleStream{name: spec.name, ended: make(chan struct{}), rec: httptest.NewRecorder()}
	go func() {
		defer close(s.ended)
		h.ServeHTTP(s.rec, r)
	}()
	return s
}

// open says whether the stream is still open, once everything in the
// bubble has settled.
func (s *bubbleStream) open() bool {
	synctest.Wait()
	select {
	case <-s.ended:
		return false
	default:
		return true
	}
}

// endedWith is the code and message of the error the stream ended with.
func (s *bubbleStream) endedWith(t *testing.T) (code, msg string) {
	t.Helper()
	<-s.ended
	data := s.rec.Body.Bytes()
	for len(data) >= 5 {
		flags, n := data[0], int(data[1])<<24|int(data[2])<<16|int(data[3])<<8|int(data[4])
		payload := data[5 : 5+n]
		data = data[5+n:]
		if flags&2 == 0 {
			continue
		}
		var end struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(payload, &end); err != nil {
			t.Fatalf("%s: end of stream %s: %v", s.name, payload, err)
		}
		return end.Error.Code, end.Error.Message
	}
	t.Fatalf("%s: no end of stream in %q (status %d)", s.name, s.rec.Body.String(), s.rec.Code)
	return "", ""
}

// TestStreamsEndWithTheirCredential: every stream an operator holds open
// — the watches, reflection, health's Watch — ends with unauthenticated
// within the revocation poll of its token being revoked or expiring, of
// its session ending or expiring, or of its person being disabled; and
// not before. Time is the bubble's.
func TestStreamsEndWithTheirCredential(t *testing.T) {
	t.Parallel()
	// Credentials lapse a few polls in: every poll checks each stream's
	// credential against the store, for real, so a lapse hours in would
	// make thousands of checks.
	const (
		poll       = time.Second
		sessionTTL = 20 * poll
	)
	type lapse struct {
		// credential is what opens the streams, and the token's id; lapse
		// makes it lapse (it may sleep until it does).
		credential func(t *testing.T, b *board.Board) (header map[string]string, tokenID string)
		lapse      func(t *testing.T, b *board.Board, header map[string]string, tokenID string)
		session    bool
		want       string
	}
	operator := func(ttl time.Duration) func(t *testing.T, b *board.Board) (map[string]string, string) {
		return func(t *testing.T, b *board.Board) (map[string]string, string) {
			m, err := b.Tokens().Mint(t.Context(), identity.MintOptions{Kind: identity.KindOperator, Name: "ops", Role: identity.RoleViewer, TTL: ttl, Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			return map[string]string{"Authorization": "Bearer " + m.Token}, m.ID
		}
	}
	signedIn := func(t *testing.T, b *board.Board) (map[string]string, string) {
		addWithPassword(t, b, "ann@example.com", identity.RoleViewer, password)
		addWithPassword(t, b, "root@example.com", identity.RoleAdmin, password)
		resp, body := serve(b.Handler(), http.MethodPost, "/auth/signin", signInBody("ann@example.com", password), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("sign in: %s %s", resp.Status, body)
		}
		var s struct {
			CSRFToken string `json:"csrfToken"`
		}
		_ = json.Unmarshal([]byte(body), &s)
		for _, c := range resp.Cookies() {
			if c.Name == board.SessionCookie {
				return map[string]string{"Cookie": board.SessionCookie + "=" + c.Value, board.CSRFHeader: s.CSRFToken}, ""
			}
		}
		t.Fatal("no session cookie")
		return nil, ""
	}
	sleepUntil := func(at time.Time) func(*testing.T, *board.Board, map[string]string, string) {
		return func(*testing.T, *board.Board, map[string]string, string) { time.Sleep(time.Until(at)) }
	}
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // the bubble's epoch
	for name, tc := range map[string]lapse{
		"token revoked": {
			credential: operator(0),
			lapse: func(t *testing.T, b *board.Board, _ map[string]string, tokenID string) {
				if err := b.Tokens().Revoke(t.Context(), tokenID, time.Now()); err != nil {
					t.Fatal(err)
				}
			},
			want: "token revoked",
		},
		"token expired": {credential: operator(10 * poll), lapse: sleepUntil(start.Add(10 * poll)), want: "token expired"},
		"signed out": {
			credential: signedIn,
			lapse: func(t *testing.T, b *board.Board, h map[string]string, _ string) {
				if resp, body := serve(b.Handler(), http.MethodPost, "/auth/signout", "{}", h); resp.StatusCode != http.StatusNoContent {
					t.Fatalf("sign out: %s %s", resp.Status, body)
				}
			},
			session: true,
			want:    "session ended",
		},
		"session expired": {credential: signedIn, lapse: sleepUntil(start.Add(sessionTTL)), session: true, want: "session expired"},
		"person disabled": {
			credential: signedIn,
			lapse: func(t *testing.T, b *board.Board, _ map[string]string, _ string) {
				if _, _, err := b.Users().SetDisabled(t.Context(), "ann@example.com", true, "test"); err != nil {
					t.Fatal(err)
				}
			},
			session: true,
			want:    "session ended",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := configuredBubbleBoard(t, board.Config{RevocationPoll: poll, SessionTTL: sessionTTL})
				header, tokenID := tc.credential(t, b)
				var streams []*bubbleStream
				for _, spec := range heldStreams {
					if tc.session && spec.tokensOnly {
						continue
					}
					streams = append(streams, openBubbleStream(t, b.Handler(), spec, header))
				}
				time.Sleep(3 * poll)
				for _, s := range streams {
					if !s.open() {
						code, msg := s.endedWith(t)
						t.Fatalf("%s ended with %s %q before its credential lapsed", s.name, code, msg)
					}
				}
				tc.lapse(t, b, header, tokenID)
				time.Sleep(poll)
				for _, s := range streams {
					if s.open() {
						t.Errorf("%s still open a poll after its credential lapsed", s.name)
						continue
					}
					if code, msg := s.endedWith(t); code != "unauthenticated" || msg != tc.want {
						t.Errorf("%s ended with %s %q, want unauthenticated %q", s.name, code, msg, tc.want)
					}
				}
			})
		})
	}
}

// TestStreamOnAnotherCredential: a stream opened with a token is not ended
// when another token is revoked, or another person signs out.
func TestStreamOnAnotherCredential(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := configuredBubbleBoard(t, board.Config{RevocationPoll: time.Second})
		mint := func(name string) identity.Minted {
			m, err := b.Tokens().Mint(t.Context(), identity.MintOptions{Kind: identity.KindOperator, Name: name, Role: identity.RoleViewer, Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		kept, other := mint("kept"), mint("other")
		s := openBubbleStream(t, b.Handler(), heldStreams[0], map[string]string{"Authorization": "Bearer " + kept.Token})
		if err := b.Tokens().Revoke(t.Context(), other.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		if !s.open() {
			code, msg := s.endedWith(t)
			t.Fatalf("a stream ended with %s %q when another token was revoked", code, msg)
		}
		if !strings.Contains(s.rec.Body.String(), `"APPROVAL_EVENT_SYNCED"`) {
			t.Errorf("the stream sent %q, want its snapshot synced", s.rec.Body.String())
		}
	})
}

// TestStreamsEndOnARealBoard: over real HTTP/2, with both protocols, the
// watches end with unauthenticated once their token is revoked, and so
// does a reflection stream waiting for its client's next request (its
// request body is closed under it).
func TestStreamsEndOnARealBoard(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{RevocationPoll: 50 * time.Millisecond})
	revoke := func(t *testing.T, id string) {
		t.Helper()
		if err := bt.Board.Tokens().Revoke(t.Context(), id, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for proto, opts := range boardtest.Protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // the ceiling
			defer cancel()
			m := bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ops", Role: identity.RoleViewer})
			approvals, err := boardv1connect.NewApprovalServiceClient(bt.Client(m.Token, opts...)).WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			agents, err := bt.Agents(m.Token, opts...).WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			runs, err := boardv1connect.NewRunServiceClient(bt.Client(m.Token, opts...)).WatchRuns(ctx, &boardv1.WatchRunsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if r, err := approvals.Receive(); err != nil || r.GetEvent() != boardv1.ApprovalEvent_APPROVAL_EVENT_SYNCED {
				t.Fatalf("WatchApprovals: %v %v, want synced", r, err)
			}
			if r, err := runs.Receive(); err != nil || r.GetKind() != boardv1.RunEventKind_RUN_EVENT_KIND_SYNCED {
				t.Fatalf("WatchRuns: %v %v, want synced", r, err)
			}
			revoke(t, m.ID)
			for name, receive := range map[string]func() error{
				"WatchApprovals": func() error { _, err := approvals.Receive(); return err },
				"WatchAgents":    func() error { _, err := agents.Receive(); return err },
				"WatchRuns":      func() error { _, err := runs.Receive(); return err },
			} {
				var err error
				for err == nil {
					err = receive()
				}
				var ce *connect.Error
				if !errors.As(err, &ce) || ce.Code() != connect.CodeUnauthenticated || ce.Message() != "token revoked" {
					t.Errorf("%s after its token was revoked: %v, want unauthenticated: token revoked", name, err)
				}
			}
		})
	}
	t.Run("reflection", func(t *testing.T) {
		t.Parallel()
		m := bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "ops", Role: identity.RoleViewer})
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // the ceiling
		defer cancel()
		pr, pw := io.Pipe()
		defer pw.Close()
		// The transport notices the ceiling only between writes of the
		// body: end the body then too.
		defer context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, bt.URL+"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/connect+proto")
		req.Header.Set("Authorization", "Bearer "+m.Token)
		go func() {
			// One request, list_services (field 7, an empty string), and
			// then nothing: a client thinking.
			_, _ = pw.Write(envelope(0, []byte{7<<3 | 2, 0}))
		}()
		resp, err := bt.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if flags, payload := readEnvelope(t, resp.Body); flags != 0 || !bytes.Contains(payload, []byte("symphonix.board.v1")) {
			t.Fatalf("reflection answered %x %q, want the services", flags, payload)
		}
		revoke(t, m.ID)
		flags, payload := readEnvelope(t, resp.Body)
		if flags&2 == 0 || !bytes.Contains(payload, []byte(`"code":"unauthenticated","message":"token revoked"`)) {
			t.Errorf("reflection after its token was revoked: %x %s, want the end: unauthenticated, token revoked", flags, payload)
		}
	})
}

// TestStreamsRefused: a stream is refused at its start as any call is —
// unauthenticated and nothing more for a bad credential, permission_denied
// for a session without its CSRF header — over both protocols.
func TestStreamsRefused(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	revoked := bt.Mint(identity.MintOptions{Kind: identity.KindOperator, Name: "gone", Role: identity.RoleViewer})
	if err := bt.Board.Tokens().Revoke(t.Context(), revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	bt.AddUser("ann@example.com", identity.RoleViewer, password)
	cookie, _ := bt.SignIn("ann@example.com", password)
	for proto, opts := range boardtest.Protocols {
		for name, tc := range map[string]struct {
			client *connect.Client
			code   connect.Code
			msg    string
		}{
			"revoked token":     {bt.Client(revoked.Token, opts...), connect.CodeUnauthenticated, "unauthenticated"},
			"agent token":       {bt.Client(bt.AgentToken("desk"), opts...), connect.CodeUnauthenticated, "unauthenticated"},
			"no credential":     {bt.Client("", opts...), connect.CodeUnauthenticated, "unauthenticated"},
			"session, no CSRF":  {bt.SessionClient(cookie, "", opts...), connect.CodePermissionDenied, ""},
			"session, bad CSRF": {bt.SessionClient(cookie, "nope", opts...), connect.CodePermissionDenied, ""},
		} {
			t.Run(proto+"/"+name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				receive := map[string]func() error{
					"WatchApprovals": func() error {
						s, err := boardv1connect.NewApprovalServiceClient(tc.client).WatchApprovals(ctx, &boardv1.WatchApprovalsRequest{})
						if err != nil {
							return err
						}
						_, err = s.Receive()
						return err
					},
					"WatchAgents": func() error {
						s, err := boardv1connect.NewAgentServiceClient(tc.client).WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
						if err != nil {
							return err
						}
						_, err = s.Receive()
						return err
					},
				}
				for stream, receive := range receive {
					err := receive()
					var ce *connect.Error
					if !errors.As(err, &ce) || ce.Code() != tc.code || (tc.msg != "" && ce.Message() != tc.msg) {
						t.Errorf("%s: %v, want %v %q", stream, err, tc.code, tc.msg)
					}
				}
			})
		}
	}
}
