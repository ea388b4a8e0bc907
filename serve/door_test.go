package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/serve"
	"github.com/symphonix/symphonix/transcript"
)

// doorServer is the package's refund desk served with a board configured
// (the door on), its index in index.
type doorServer struct {
	s   *serve.Server
	ts  *httptest.Server
	log *syncBuffer
}

type doorOptions struct {
	index  string
	public bool
	// board: the board to Use; nil: configured but never given.
	board serve.Board
	// link: a link to make with board's URL and OnPaired; overrides board.
	link *boardtest.Board
	// transcript: the server's; nil keeps none.
	transcript *transcript.Transcript
}

func newDoorServer(t *testing.T, o doorOptions) *doorServer {
	t.Helper()
	if o.index == "" {
		o.index = filepath.Join(t.TempDir(), "conversations.json")
	}
	d := &doorServer{log: &syncBuffer{}}
	var err error
	d.s, err = serve.New(t.Context(), serve.Config{
		Agent:         desk.agent,
		Conversations: o.index,
		Journal:       desk.j,
		Transcript:    o.transcript,
		Monitored:     true,
		Public:        o.public,
		Logger:        slog.New(slog.NewTextHandler(d.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	if o.link != nil {
		link, err := agentlink.New(agentlink.Config{
			BoardURL:   o.link.URL,
			Token:      o.link.AgentToken(desk.agent.Flow.Name),
			Identity:   agentlink.Identity{Name: desk.agent.Flow.Name},
			MinBackoff: 20 * time.Millisecond,
			MaxBackoff: 200 * time.Millisecond,
			OnPaired:   d.s.Paired,
			OnState: func(st agentlink.State) {
				if st.Up {
					d.s.ReportAll()
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = link.Run(ctx) })
		boardtest.Eventually(t, 10*time.Second, "the link up", func() bool { return link.Session() != "" })
		o.board = link
	}
	if o.board != nil {
		d.s.Use(o.board)
	}
	wg.Go(func() { _ = d.s.Report(ctx) })
	d.ts = httptest.NewServer(d.s)
	t.Cleanup(d.ts.Close)
	return d
}

// browser is one browser at a served agent: it sends Sec-Fetch-Site as a
// browser's fetch does, and keeps its visitor cookie (by hand, so that it
// can be taken to another server on the same index).
type browser struct {
	t      *testing.T
	ts     *httptest.Server
	cookie *http.Cookie
}

func newBrowser(t *testing.T, ts *httptest.Server) *browser { return &browser{t: t, ts: ts} }

func (b *browser) do(method, path, body string) (int, []byte) {
	b.t.Helper()
	return b.send(method, path, body, true)
}

func (b *browser) send(method, path, body string, fetch bool) (int, []byte) {
	b.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.ts.URL+path, r)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if fetch {
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if b.cookie != nil {
		req.AddCookie(b.cookie)
	}
	res, err := b.ts.Client().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == serve.VisitorCookie {
			b.cookie = c
		}
	}
	out, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return res.StatusCode, out
}

// decode sends a request that must answer want and decodes its body.
func (b *browser) decode(method, path, body string, want int, out any) {
	b.t.Helper()
	status, got := b.do(method, path, body)
	if status != want {
		b.t.Fatalf("%s %s = %d %s, want %d", method, path, status, got, want)
	}
	if err := json.Unmarshal(got, out); err != nil {
		b.t.Fatalf("%s %s: %v in %s", method, path, err, got)
	}
}

func (b *browser) threads() []string {
	b.t.Helper()
	var l struct{ Conversations []serve.Conversation }
	b.decode(http.MethodGet, "/api/conversations", "", http.StatusOK, &l)
	var out []string
	for _, c := range l.Conversations {
		out = append(out, c.Thread)
	}
	return out
}

func (b *browser) thread(name string) serve.Thread {
	b.t.Helper()
	var th serve.Thread
	b.decode(http.MethodGet, "/api/threads/"+name, "", http.StatusOK, &th)
	return th
}

// start posts the refund message to a new thread, whose run then waits at
// its approval; the run is cancelled when the test ends (the waiting
// store is the package's).
func (b *browser) start(thread string) {
	b.t.Helper()
	var tr serve.Turn
	b.decode(http.MethodPost, "/api/threads/"+thread+"/messages", message("A-1002"), http.StatusOK, &tr)
	if tr.Pending == nil {
		b.t.Fatalf("message on %s = %+v, want it waiting at its approval", thread, tr)
	}
	cancelAtEnd(b.t, thread)
}

func cancelAtEnd(t *testing.T, thread string) {
	t.Cleanup(func() {
		if err := desk.agent.Graph.Cancel(context.Background(), thread); err != nil && !errors.Is(err, flow.ErrNothingPending) {
			t.Errorf("cancelling %s: %v", thread, err)
		}
	})
}

// mine is the threads of list among want.
func mine(list []string, want ...string) []string {
	var out []string
	for _, t := range list {
		if slices.Contains(want, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// TestDoorVisitors: with a board configured, each browser sees only the
// threads it started; another's thread, one from before the door and one
// that does not exist all answer 404 alike; the operator (a client on
// this machine that is not a browser) reaches every thread; the claims
// outlive the server; served --public, there is no operator.
func TestDoorVisitors(t *testing.T) {
	t.Parallel()
	index := filepath.Join(t.TempDir(), "conversations.json")
	d := newDoorServer(t, doorOptions{index: index})
	ann, bob := newBrowser(t, d.ts), newBrowser(t, d.ts)
	tAnn, tBob, before, nobody := threadName(t)+"-ann", threadName(t)+"-bob", threadName(t)+"-before", threadName(t)+"-nobody"
	all := []string{tAnn, tBob, before, nobody}

	ann.start(tAnn)
	bob.start(tBob)
	// A run left waiting in the folder's store by another process, before
	// the door: nobody's.
	if _, err := desk.agent.Graph.Invoke(t.Context(), before, map[string]any{"order_id": "A-1002", "request": "x"}); err != nil {
		t.Fatal(err)
	}
	cancelAtEnd(t, before)

	c := ann.cookie
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) != 43 || c.MaxAge <= 0 {
		t.Fatalf("visitor cookie = %+v, want HttpOnly, SameSite=Strict, Path=/, 32 bytes base64url, a Max-Age", c)
	}
	if bob.cookie == nil || bob.cookie.Value == c.Value {
		t.Fatalf("bob's cookie = %+v, want one of his own", bob.cookie)
	}
	if raw, err := os.ReadFile(index); err != nil || bytes.Contains(raw, []byte(c.Value)) {
		t.Errorf("index holds the cookie itself (or cannot be read: %v): %s", err, raw)
	}

	if got := mine(ann.threads(), all...); !slices.Equal(got, []string{tAnn}) {
		t.Errorf("ann's conversations = %v, want only %s", got, tAnn)
	}
	if got := mine(bob.threads(), all...); !slices.Equal(got, []string{tBob}) {
		t.Errorf("bob's conversations = %v, want only %s", got, tBob)
	}

	_, notFound := bob.do(http.MethodGet, "/api/threads/"+nobody, "")
	notFound = bytes.ReplaceAll(notFound, []byte(nobody), nil)
	for _, tc := range []struct {
		name, method, path, body string
	}{
		{"another's thread", http.MethodGet, "/api/threads/" + tAnn, ""},
		{"a thread from before the door", http.MethodGet, "/api/threads/" + before, ""},
		{"a message to another's thread", http.MethodPost, "/api/threads/" + tAnn + "/messages", message("A-1002")},
		{"a message to a thread from before", http.MethodPost, "/api/threads/" + before + "/messages", message("A-1002")},
		{"an answer on another's thread", http.MethodPost, "/api/threads/" + tAnn + "/answer", `{"answer": "yes"}`},
		{"pairing another's thread", http.MethodPost, "/api/threads/" + tAnn + "/pair", `{}`},
		{"verifying on another's thread", http.MethodPost, "/api/threads/" + tAnn + "/verify", `{"who": "bob@example.com", "secret": "x"}`},
	} {
		status, b := bob.do(tc.method, tc.path, tc.body)
		if status != http.StatusNotFound || !bytes.Equal(b, notFound) {
			t.Errorf("%s: %s %s = %d %s, want 404 %s, as for a thread that does not exist", tc.name, tc.method, tc.path, status, b, notFound)
		}
	}
	if th := ann.thread(tAnn); !th.Waiting {
		t.Errorf("ann's thread after bob's tries = %+v, want it still waiting", th)
	}

	// The operator: no cookie, not a browser.
	op := newBrowser(t, d.ts)
	status, b := op.send(http.MethodGet, "/api/conversations", "", false)
	var l struct{ Conversations []serve.Conversation }
	if err := json.Unmarshal(b, &l); status != http.StatusOK || err != nil || op.cookie != nil {
		t.Fatalf("operator's conversations = %d %s (%v), cookie %v; want 200 and no cookie", status, b, err, op.cookie)
	}
	var got []string
	for _, c := range l.Conversations {
		got = append(got, c.Thread)
	}
	if got := mine(got, all...); !slices.Equal(got, sorted(tAnn, tBob, before)) {
		t.Errorf("operator's conversations = %v, want all three", got)
	}
	if status, b := op.send(http.MethodGet, "/api/threads/"+tAnn, "", false); status != http.StatusOK {
		t.Errorf("operator GET %s = %d %s, want 200", tAnn, status, b)
	}

	// A new server on the same index: ann is still ann.
	d2 := newDoorServer(t, doorOptions{index: index})
	ann2 := &browser{t: t, ts: d2.ts, cookie: ann.cookie}
	if got := mine(ann2.threads(), all...); !slices.Equal(got, []string{tAnn}) {
		t.Errorf("ann's conversations after a restart = %v, want only %s", got, tAnn)
	}
	if th := ann2.thread(tAnn); !th.Waiting {
		t.Errorf("ann's thread after a restart = %+v, want it waiting", th)
	}

	// Served --public: a client that is not a browser is a visitor too.
	pub := newDoorServer(t, doorOptions{index: index, public: true})
	stranger := newBrowser(t, pub.ts)
	if status, _ := stranger.send(http.MethodGet, "/api/threads/"+tAnn, "", false); status != http.StatusNotFound || stranger.cookie == nil {
		t.Errorf("--public, no cookie, not a browser: GET %s = %d, cookie %v; want 404 and a visitor cookie", tAnn, status, stranger.cookie)
	}
}

// TestNoBoardNoDoor: without a board configured there is no door: no
// cookie, every thread for everyone, a new thread is 200 before its
// first message; pair is refused and verify is "no board".
func TestNoBoardNoDoor(t *testing.T) {
	t.Parallel()
	ts := newServer(t, desk.agent)
	one, two := newBrowser(t, ts), newBrowser(t, ts)
	thread := threadName(t)
	one.start(thread)
	if got := mine(two.threads(), thread); !slices.Equal(got, []string{thread}) {
		t.Errorf("another browser's conversations = %v, want %s", got, thread)
	}
	if th := two.thread(thread); !th.Waiting {
		t.Errorf("another browser's GET thread = %+v, want it waiting", th)
	}
	if th := two.thread(threadName(t)); th.Waiting {
		t.Errorf("GET a new thread = %+v, want nothing waiting", th)
	}
	if one.cookie != nil || two.cookie != nil {
		t.Errorf("cookies %v %v, want none without a board", one.cookie, two.cookie)
	}
	status, b := one.do(http.MethodPost, "/api/threads/"+thread+"/pair", `{}`)
	var e struct{ Error, Field string }
	if err := json.Unmarshal(b, &e); err != nil || status != http.StatusConflict || e.Field != "board" || !strings.Contains(e.Error, "no board") {
		t.Errorf("pair without a board = %d %s, want 409 on board saying there is none", status, b)
	}
	var v serve.Verified
	one.decode(http.MethodPost, "/api/threads/"+thread+"/verify", `{"who": "ann@example.com", "secret": "twelve chars!"}`, http.StatusOK, &v)
	if v.OK || v.Why != agentlink.WhyNoBoard || v.Person != nil {
		t.Errorf("verify without a board = %+v, want not ok: %q", v, agentlink.WhyNoBoard)
	}
	var door serve.Door
	one.decode(http.MethodGet, "/api/door", "", http.StatusOK, &door)
	if door.Door != "" || door.Why == "" || !door.Operator {
		t.Errorf("door without a board = %+v, want none, why, and everyone the operator", door)
	}
}

// TestVerifyBoardAway: a board configured that the agent cannot reach is
// "no board" for verify, never a pass, and 503 for pair.
func TestVerifyBoardAway(t *testing.T) {
	t.Parallel()
	d := newDoorServer(t, doorOptions{})
	ann := newBrowser(t, d.ts)
	thread := threadName(t)
	var v serve.Verified
	ann.decode(http.MethodPost, "/api/threads/"+thread+"/verify", `{"who": "ann@example.com", "secret": "twelve chars!"}`, http.StatusOK, &v)
	if v.OK || v.Why != agentlink.WhyNoBoard {
		t.Errorf("verify, board never given = %+v, want not ok: %q", v, agentlink.WhyNoBoard)
	}

	var none *agentlink.Link // a link that is not up answers like one
	d2 := newDoorServer(t, doorOptions{board: none})
	bob := newBrowser(t, d2.ts)
	bob.decode(http.MethodPost, "/api/threads/"+thread+"/verify", `{"who": "ann@example.com", "secret": "twelve chars!"}`, http.StatusOK, &v)
	if v.OK || v.Why != agentlink.WhyNoBoard {
		t.Errorf("verify, no link up = %+v, want not ok: %q", v, agentlink.WhyNoBoard)
	}
	status, b := bob.do(http.MethodPost, "/api/threads/"+thread+"/pair", `{}`)
	var e struct{ Error, Field string }
	if err := json.Unmarshal(b, &e); err != nil || status != http.StatusServiceUnavailable || e.Field != "board" {
		t.Errorf("pair, no link up = %d %s, want 503 on board", status, b)
	}
	for _, tc := range []struct{ body, field string }{
		{`{"who": "ann@example.com"}`, "secret"},
		{`{"who": " ", "secret": "x"}`, "who"},
		{`{"who": "ann@example.com", "secret": 5}`, "secret"},
		{`{"who": "ann@example.com", "secret": "x", "code": "y"}`, "code"},
	} {
		status, b := bob.do(http.MethodPost, "/api/threads/"+thread+"/verify", tc.body)
		if err := json.Unmarshal(b, &e); err != nil || status != http.StatusBadRequest || e.Field != tc.field {
			t.Errorf("verify %s = %d %s, want 400 on %s", tc.body, status, b, tc.field)
		}
	}
}

// TestPairingAndVerify is the whole way with a real board: a browser's
// thread shows a code, a signed-in person enters it on the board, and the
// thread and the browser are that person; a second browser paired to the
// same person sees both threads, and so does the first; the board has the
// pointers with the person in them. Then the board's door is verify: a
// wrong secret is no, the right one puts the person in the thread, and
// pairing is refused naming the door. No code and no secret reach the
// agent's log or its index.
func TestPairingAndVerify(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	index := filepath.Join(t.TempDir(), "conversations.json")
	d := newDoorServer(t, doorOptions{index: index, link: bt})
	const password, secret = "a long enough password", "my verify secret"
	bt.AddUser("Cat@Example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("cat@example.com", password)
	cat := boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, csrf))

	one, two, three := newBrowser(t, d.ts), newBrowser(t, d.ts), newBrowser(t, d.ts)
	t1, t2, t3 := threadName(t)+"-1", threadName(t)+"-2", threadName(t)+"-3"
	one.start(t1)
	two.start(t2)

	var door serve.Door
	one.decode(http.MethodGet, "/api/door", "", http.StatusOK, &door)
	if door.Door != agentlink.DoorPairing || door.You != nil || door.Operator {
		t.Fatalf("door = %+v, want pairing, nobody yet", door)
	}
	var codes []string
	pair := func(b *browser, thread string) {
		t.Helper()
		var pc serve.PairCode
		b.decode(http.MethodPost, "/api/threads/"+thread+"/pair", `{}`, http.StatusOK, &pc)
		if len(pc.Code) != 8 || pc.Thread != thread || time.Until(pc.ExpiresAt) < 9*time.Minute {
			t.Fatalf("pair %s = %+v, want an 8-symbol code for about 10 minutes", thread, pc)
		}
		codes = append(codes, pc.Code)
		if _, err := cat.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: strings.ToLower(pc.Code)}); err != nil {
			t.Fatalf("EnterPairingCode: %v", err)
		}
		var th serve.Thread
		boardtest.Eventually(t, 5*time.Second, "the person in "+thread, func() bool {
			th = b.thread(thread)
			return len(th.People) > 0
		})
		if p := th.People[0]; len(th.People) != 1 || p.Address != "cat@example.com" || p.How != serve.HowPaired || p.At.IsZero() {
			t.Fatalf("people in %s = %+v, want cat@example.com, paired", thread, th.People)
		}
	}
	pair(one, t1)
	one.decode(http.MethodGet, "/api/door", "", http.StatusOK, &door)
	if door.You == nil || door.You.Address != "cat@example.com" {
		t.Errorf("door after pairing = %+v, want you cat@example.com", door)
	}
	if got := mine(two.threads(), t1, t2); !slices.Equal(got, []string{t2}) {
		t.Errorf("two's conversations before its pairing = %v, want only %s", got, t2)
	}
	pair(two, t2)
	for name, b := range map[string]*browser{"one": one, "two": two} {
		if got := mine(b.threads(), t1, t2); !slices.Equal(got, sorted(t1, t2)) {
			t.Errorf("%s's conversations, both browsers cat = %v, want both", name, got)
		}
	}
	if status, _ := two.do(http.MethodGet, "/api/threads/"+t1, ""); status != http.StatusOK {
		t.Errorf("two GET %s (cat's) = %d, want 200", t1, status)
	}
	if got := mine(three.threads(), t1, t2); len(got) != 0 {
		t.Errorf("a third browser's conversations = %v, want none of cat's", got)
	}

	// The board has the pointers, with cat in them, and cat sees them.
	convs := boardv1connect.NewConversationServiceClient(bt.SessionClient(cookie, csrf))
	boardtest.Eventually(t, 5*time.Second, "cat's conversations on the board", func() bool {
		res, err := convs.ListConversations(t.Context(), &boardv1.ListConversationsRequest{Agent: desk.agent.Flow.Name})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range res.GetConversations() {
			if (p.GetThread() == t1 || p.GetThread() == t2) && slices.Equal(p.GetPeople(), []string{"cat@example.com"}) && p.GetWaiting() {
				n++
			}
		}
		return n == 2
	})

	// The door is verify now.
	admin := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_VERIFY}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.SetVerifySecret(t.Context(), &boardv1.SetVerifySecretRequest{Secret: secret}); err != nil {
		t.Fatal(err)
	}
	three.decode(http.MethodGet, "/api/door", "", http.StatusOK, &door)
	if door.Door != agentlink.DoorVerify {
		t.Errorf("door = %+v, want verify", door)
	}
	status, b := three.do(http.MethodPost, "/api/threads/"+t3+"/pair", `{}`)
	var e struct{ Error, Field string }
	if err := json.Unmarshal(b, &e); err != nil || status != http.StatusConflict || e.Field != "door" || !strings.Contains(e.Error, "verify") {
		t.Errorf("pair with the door at verify = %d %s, want 409 on door naming it", status, b)
	}
	var v serve.Verified
	three.decode(http.MethodPost, "/api/threads/"+t3+"/verify", `{"who": "cat@example.com", "secret": "not my secret"}`, http.StatusOK, &v)
	if v.OK || v.Why == "" || v.Person != nil {
		t.Errorf("verify with a wrong secret = %+v, want not ok with why", v)
	}
	three.decode(http.MethodPost, "/api/threads/"+t3+"/verify", `{"who": " Cat@Example.com", "secret": "`+secret+`"}`, http.StatusOK, &v)
	if !v.OK || v.Person == nil || v.Person.Address != "cat@example.com" || v.Person.How != serve.HowVerified {
		t.Fatalf("verify with the secret = %+v, want ok, cat@example.com, verified", v)
	}
	if th := three.thread(t3); len(th.People) != 1 || th.People[0].How != serve.HowVerified {
		t.Errorf("people in %s = %+v, want cat, verified", t3, th.People)
	}
	if got := mine(three.threads(), t1, t2, t3); !slices.Equal(got, sorted(t1, t2, t3)) {
		t.Errorf("three's conversations, verified as cat = %v, want all of cat's", got)
	}

	raw, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	logs := d.log.String()
	for _, s := range append(codes, secret, "not my secret") {
		if bytes.Contains(raw, []byte(s)) || strings.Contains(logs, s) {
			t.Errorf("%q is in the index or the log", s)
		}
	}
}

// syncBuffer is a bytes.Buffer for a logger that several goroutines use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDoorOldIndex: an index written before the door reads as it did;
// its threads are nobody's (the operator's only), and the file written
// after a claim keeps them where an older agent looks.
func TestDoorOldIndex(t *testing.T) {
	t.Parallel()
	index := filepath.Join(t.TempDir(), "conversations.json")
	old := threadName(t) + "-old"
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	if err := os.WriteFile(index, []byte(`{"threads": {"`+old+`": "`+at.Format(time.RFC3339)+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDoorServer(t, doorOptions{index: index})
	ann, op := newBrowser(t, d.ts), newBrowser(t, d.ts)
	if got := mine(ann.threads(), old); len(got) != 0 {
		t.Errorf("a visitor's conversations = %v, want none from before the door", got)
	}
	if status, _ := ann.do(http.MethodGet, "/api/threads/"+old, ""); status != http.StatusNotFound {
		t.Errorf("a visitor GET a thread from before the door = %d, want 404", status)
	}
	if status, b := op.send(http.MethodGet, "/api/threads/"+old, "", false); status != http.StatusOK {
		t.Errorf("operator GET a thread from before the door = %d %s, want 200", status, b)
	}
	mineToo := threadName(t) + "-new"
	ann.start(mineToo)

	raw, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	var olderAgent struct{ Threads map[string]time.Time }
	if err := json.Unmarshal(raw, &olderAgent); err != nil || !olderAgent.Threads[old].Equal(at) || olderAgent.Threads[mineToo].IsZero() {
		t.Errorf("index after a claim, read as before the door = %+v (%v), want %s at %s and %s", olderAgent, err, old, at, mineToo)
	}
}

// TestDoorCalls: behind the door, GET /api/calls shows a visitor the
// journal entries of their own threads only, and the operator every one.
func TestDoorCalls(t *testing.T) {
	t.Parallel()
	d := newDoorServer(t, doorOptions{})
	ann, bob := newBrowser(t, d.ts), newBrowser(t, d.ts)
	tAnn, tBob := threadName(t)+"-ann", threadName(t)+"-bob"
	ann.start(tAnn)
	bob.start(tBob)

	calls := func(b *browser, fetch bool) []journal.Entry {
		t.Helper()
		status, body := b.send(http.MethodGet, "/api/calls?limit=500", "", fetch)
		var c serve.Calls
		if err := json.Unmarshal(body, &c); status != http.StatusOK || err != nil {
			t.Fatalf("GET /api/calls = %d %s (%v)", status, body, err)
		}
		return c.Calls
	}
	threadsOf := func(es []journal.Entry) map[string]int {
		m := map[string]int{}
		for _, e := range es {
			m[e.Thread]++
		}
		return m
	}
	got := threadsOf(calls(ann, true))
	if len(got) != 1 || got[tAnn] != 2 {
		t.Errorf("ann's calls by thread = %v, want the 2 of %s only", got, tAnn)
	}
	got = threadsOf(calls(bob, true))
	if len(got) != 1 || got[tBob] != 2 {
		t.Errorf("bob's calls by thread = %v, want the 2 of %s only", got, tBob)
	}
	stranger := newBrowser(t, d.ts)
	if got := calls(stranger, true); len(got) != 0 {
		t.Errorf("a new visitor's calls = %v, want none", got)
	}
	op := newBrowser(t, d.ts)
	if got := threadsOf(calls(op, false)); got[tAnn] != 2 || got[tBob] != 2 {
		t.Errorf("the operator's calls by thread = %v, want ann's and bob's", got)
	}
}
