package board_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/ent/pairing"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// person is somebody the board knows, put straight into its store.
type person struct {
	id, email, name string
}

// addPerson stores a person; hash is their verify secret's hash ("" for
// none).
func addPerson(t *testing.T, bt *boardtest.Board, email, name, hash string, disabled bool) person {
	t.Helper()
	p := make([]byte, 8)
	_, _ = rand.Read(p)
	id := "usr-" + hex.EncodeToString(p)
	now := time.Now()
	_, err := bt.Store.User.Create().SetID(id).SetEmail(email).SetName(name).SetRole("viewer").
		SetVerifyHash(hash).SetDisabled(disabled).SetCreatedAt(now).SetUpdatedAt(now).Save(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return person{id: id, email: email, name: name}
}

// enter enters code on the board as p, signed in.
func (p person) enter(t *testing.T, bt *boardtest.Board, code string) (*boardv1.EnterPairingCodeResponse, error) {
	t.Helper()
	return bt.Board.EnterPairingCodeAsForTest(t.Context(), p.id, p.email, code)
}

// pairingAgent is an agentlink.Link against a board under test, with what
// it was told.
type pairingAgent struct {
	link   *agentlink.Link
	up     chan agentlink.State
	paired chan agentlink.Paired
	stop   func()
}

func startPairingAgent(t *testing.T, bt *boardtest.Board, name string, tune func(*agentlink.Config)) *pairingAgent {
	t.Helper()
	a := &pairingAgent{up: make(chan agentlink.State, 64), paired: make(chan agentlink.Paired, 64)}
	cfg := agentlink.Config{
		BoardURL: bt.URL, Token: bt.AgentToken(name), Identity: agentlink.Identity{Name: name},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, AnswerWithin: 5 * time.Second,
		OnState:  func(s agentlink.State) { a.up <- s },
		OnPaired: func(p agentlink.Paired) { a.paired <- p },
	}
	if tune != nil {
		tune(&cfg)
	}
	link, err := agentlink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.link = link
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = link.Run(ctx) }()
	var once sync.Once
	a.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(a.stop)
	a.await(t, true)
	return a
}

func (a *pairingAgent) await(t *testing.T, up bool) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case s := <-a.up:
			if s.Up == up {
				return
			}
		case <-deadline:
			t.Fatalf("link up=%v: not within 15s", up)
		}
	}
}

func (a *pairingAgent) pair(t *testing.T, thread string) string {
	t.Helper()
	code, expires, err := a.link.Pair(t.Context(), thread)
	if err != nil {
		t.Fatalf("Pair(%q) = %v", thread, err)
	}
	if d := time.Until(expires); d < 9*time.Minute || d > 11*time.Minute {
		t.Fatalf("Pair(%q) expires in %s, want 10 minutes", thread, d)
	}
	return code
}

func (a *pairingAgent) awaitPaired(t *testing.T) agentlink.Paired {
	t.Helper()
	select {
	case p := <-a.paired:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no paired within 10s")
	}
	return agentlink.Paired{}
}

// noMorePaired checks that nothing more was paired: a round trip on the
// link comes back after anything the board sent before it.
func (a *pairingAgent) noMorePaired(t *testing.T) {
	t.Helper()
	if _, err := a.link.HowToIdentify(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-a.paired:
		t.Fatalf("paired again: %+v", p)
	default:
	}
}

// typed is code as a person might type it: lower case, with a dash and
// spaces.
func typed(code string) string {
	return " " + strings.ToLower(code[:4]) + "-" + strings.ToLower(code[4:6]) + " " + strings.ToLower(code[6:]) + " "
}

func wantCode(t *testing.T, err error, code connect.Code) {
	t.Helper()
	if connect.CodeOf(err) != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
}

func TestPairing(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	ann := addPerson(t, bt, "ann@example.com", "Ann", "", false)
	a := startPairingAgent(t, bt, "desk", nil)

	door, err := a.link.HowToIdentify(t.Context())
	if err != nil || door != agentlink.DoorPairing {
		t.Fatalf("HowToIdentify = %q, %v; want %q", door, err, agentlink.DoorPairing)
	}
	code := a.pair(t, "thread-1")
	if len(code) != 8 || strings.Trim(code, board.PairAlphabetForTest) != "" {
		t.Fatalf("code %q: want 8 symbols of %s", code, board.PairAlphabetForTest)
	}
	res, err := ann.enter(t, bt, typed(code))
	if err != nil {
		t.Fatalf("enter %q: %v", typed(code), err)
	}
	if res.GetAgent() != "desk" || res.GetThread() != "thread-1" {
		t.Fatalf("enter = %v, want desk, thread-1", res)
	}
	p := a.awaitPaired(t)
	if p.Thread != "thread-1" || p.Who != ann.email || p.Name != "Ann" || p.ID == "" || p.At.IsZero() {
		t.Fatalf("paired %+v, want thread-1 and %s", p, ann.email)
	}
	a.noMorePaired(t)

	// Used: refused, in the words an unknown code gets.
	_, err = ann.enter(t, bt, code)
	wantCode(t, err, connect.CodeInvalidArgument)
	if !strings.Contains(err.Error(), "invalid or expired code") {
		t.Fatalf("used code: %v, want \"invalid or expired code\"", err)
	}
	_, unknown := ann.enter(t, bt, "ZZZZ-ZZZZ")
	if connect.CodeOf(unknown) != connect.CodeOf(err) || unknown.Error() != err.Error() {
		t.Fatalf("unknown code: %v; used code: %v; want the same refusal", unknown, err)
	}

	// A new code for a thread replaces the one before.
	first := a.pair(t, "thread-2")
	second := a.pair(t, "thread-2")
	_, err = ann.enter(t, bt, first)
	wantCode(t, err, connect.CodeInvalidArgument)
	if _, err := ann.enter(t, bt, second); err != nil {
		t.Fatalf("second code: %v", err)
	}
	if p := a.awaitPaired(t); p.Thread != "thread-2" {
		t.Fatalf("paired %+v, want thread-2", p)
	}

	acts := auditCounts(t, bt)
	if acts["pair.code"] != 3 || acts["pair.enter"] != 2 || acts["pair.wrong"] != 3 {
		t.Fatalf("audit: %v, want pair.code 3, pair.enter 2, pair.wrong 3", acts)
	}
	assertNoCodeInAudit(t, bt, code, first, second)
}

// auditCounts is how many entries of each action the audit log holds.
func auditCounts(t *testing.T, bt *boardtest.Board) map[string]int {
	t.Helper()
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range entries {
		out[e.Action]++
	}
	return out
}

// assertNoCodeInAudit checks that no audit entry carries a code.
func assertNoCodeInAudit(t *testing.T, bt *boardtest.Board, codes ...string) {
	t.Helper()
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := json.Marshal(e)
		for _, c := range codes {
			if strings.Contains(strings.ToUpper(string(b)), c) {
				t.Fatalf("audit entry %d %s carries a code: %s", e.Seq, e.Action, b)
			}
		}
	}
}

// TestPairingReachesOfflineAgentOnce: a code entered while its agent is
// away reaches it when it links again, and never again after.
func TestPairingReachesOfflineAgentOnce(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: -1})
	bob := addPerson(t, bt, "bob@example.com", "Bob", "", false)
	a := startPairingAgent(t, bt, "kiosk", nil)
	code := a.pair(t, "t-9")
	a.stop()
	if _, err := bob.enter(t, bt, code); err != nil {
		t.Fatal(err)
	}
	again := startPairingAgent(t, bt, "kiosk", nil)
	if p := again.awaitPaired(t); p.Thread != "t-9" || p.Who != bob.email {
		t.Fatalf("paired %+v, want t-9 and %s", p, bob.email)
	}
	again.noMorePaired(t)
	boardtest.Eventually(t, 5*time.Second, "delivered_at", func() bool {
		n, _ := bt.Store.Pairing.Query().Where(pairing.DeliveredAtIsNil()).Count(context.Background())
		return n == 0
	})
	again.stop()
	// A fresh Link remembers nothing: only the board can keep it from
	// coming a second time.
	third := startPairingAgent(t, bt, "kiosk", nil)
	third.noMorePaired(t)
}

// TestPairingOneWinner: two people entering one code at the same moment:
// exactly one is paired.
func TestPairingOneWinner(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startPairingAgent(t, bt, "desk", nil)
	for round := range 5 {
		code := a.pair(t, "race")
		const n = 4
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			p := addPerson(t, bt, "racer"+string(rune('a'+i))+string(rune('a'+round))+"@example.com", "", "", false)
			wg.Go(func() { _, errs[i] = p.enter(t, bt, code) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case connect.CodeOf(err) != connect.CodeInvalidArgument:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d entries won, want 1 (%v)", round, won, errs)
		}
		a.awaitPaired(t)
	}
}

// TestPairingLimits: a code dies after five near misses; a person is
// stopped after ten wrong codes, even with a right one; everyone is
// stopped after a hundred wrong codes on the board in a minute.
func TestPairingLimits(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startPairingAgent(t, bt, "desk", nil)

	t.Run("per code", func(t *testing.T) {
		code := a.pair(t, "near")
		far := a.pair(t, "far")
		for i := range 5 {
			p := addPerson(t, bt, "near"+string(rune('a'+i))+"@example.com", "", "", false)
			_, err := p.enter(t, bt, oneOff(code, i))
			wantCode(t, err, connect.CodeInvalidArgument)
		}
		p := addPerson(t, bt, "owner@example.com", "", "", false)
		_, err := p.enter(t, bt, code)
		wantCode(t, err, connect.CodeInvalidArgument) // dead
		// Far misses are not counted against a code.
		if _, err := p.enter(t, bt, far); err != nil {
			t.Fatalf("a code nobody came near: %v", err)
		}
		a.awaitPaired(t)
	})

	t.Run("per person", func(t *testing.T) {
		code := a.pair(t, "mine")
		guesser := addPerson(t, bt, "guesser@example.com", "", "", false)
		for range 10 {
			_, err := guesser.enter(t, bt, "2222-2222")
			wantCode(t, err, connect.CodeInvalidArgument)
		}
		_, err := guesser.enter(t, bt, code)
		wantCode(t, err, connect.CodeResourceExhausted)
		other := addPerson(t, bt, "other@example.com", "", "", false)
		if _, err := other.enter(t, bt, code); err != nil {
			t.Fatalf("another person: %v", err)
		}
		a.awaitPaired(t)
	})
}

// oneOff is code with its i-th symbol changed.
func oneOff(code string, i int) string {
	b := []byte(code)
	alpha := board.PairAlphabetForTest
	b[i] = alpha[(strings.IndexByte(alpha, b[i])+1)%len(alpha)]
	return string(b)
}

// TestPairingBoardLimit is the limit on the whole board: a hundred wrong
// codes within a minute, from anyone, stop everyone.
func TestPairingBoardLimit(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startPairingAgent(t, bt, "desk", nil)
	code := a.pair(t, "x")
	for i := range 100 {
		p := addPerson(t, bt, "g"+string(rune('a'+i/26))+string(rune('a'+i%26))+"@example.com", "", "", false)
		_, err := p.enter(t, bt, "3333-3333")
		wantCode(t, err, connect.CodeInvalidArgument)
	}
	fresh := addPerson(t, bt, "fresh@example.com", "", "", false)
	_, err := fresh.enter(t, bt, code)
	wantCode(t, err, connect.CodeResourceExhausted)
}

// TestPairingNeedsAPerson: a code links a thread to a person the board
// knows, and a token is not a person. Nor is a code a token.
func TestPairingNeedsAPerson(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	a := startPairingAgent(t, bt, "desk", nil)
	code := a.pair(t, "t")

	_, err := bt.Board.EnterPairingCodeAsOperatorForTest(t.Context(), "root", code)
	wantCode(t, err, connect.CodePermissionDenied)

	users := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	_, err = users.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: code})
	wantCode(t, err, connect.CodePermissionDenied)

	for _, c := range []string{code, typed(code)} {
		asToken := boardv1connect.NewUserServiceClient(bt.Client(c))
		_, err = asToken.GetIdentify(t.Context(), &boardv1.GetIdentifyRequest{})
		wantCode(t, err, connect.CodeUnauthenticated)
		_, err = asToken.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: code})
		wantCode(t, err, connect.CodeUnauthenticated)
	}
	link := boardv1connect.NewAgentLinkServiceClient(bt.Client(code))
	if err := helloErr(t.Context(), link, &boardv1.Hello{Name: "desk", Protocol: board.Protocol}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("a code as an agent token: %v, want unauthenticated", err)
	}

	// A person disabled since they signed in is no longer one the board
	// vouches for.
	gone := addPerson(t, bt, "gone@example.com", "", "", true)
	_, err = gone.enter(t, bt, code)
	wantCode(t, err, connect.CodePermissionDenied)

	// Still unused after all that.
	ann := addPerson(t, bt, "ann@example.com", "", "", false)
	if _, err := ann.enter(t, bt, code); err != nil {
		t.Fatal(err)
	}
	a.awaitPaired(t)
}

// TestIdentifyDoor: any operator reads the door, an admin sets it, and
// the agent is refused a code when it is not pairing.
func TestIdentifyDoor(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	viewer := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("eve", identity.RoleViewer)))
	a := startPairingAgent(t, bt, "desk", nil)

	got, err := viewer.GetIdentify(t.Context(), &boardv1.GetIdentifyRequest{})
	if err != nil || got.GetDoor() != boardv1.Door_DOOR_PAIRING {
		t.Fatalf("GetIdentify = %v, %v; want pairing", got, err)
	}
	_, err = viewer.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_NONE})
	wantCode(t, err, connect.CodePermissionDenied)
	for door, want := range map[boardv1.Door]string{boardv1.Door_DOOR_UNSPECIFIED: "door: required", 42: "door: unknown value 42"} {
		_, err = admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: door})
		wantCode(t, err, connect.CodeInvalidArgument)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("SetIdentify(%v) = %v, want %q", door, err, want)
		}
	}

	code := a.pair(t, "before")
	for door, d := range map[string]boardv1.Door{"verify": boardv1.Door_DOOR_VERIFY, "none": boardv1.Door_DOOR_NONE} {
		set, err := admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: d})
		if err != nil || set.GetDoor() != d {
			t.Fatalf("SetIdentify(%s) = %v, %v", door, set, err)
		}
		if got, err := a.link.HowToIdentify(t.Context()); err != nil || got != door {
			t.Fatalf("HowToIdentify = %q, %v; want %q", got, err, door)
		}
		_, _, err = a.link.Pair(t.Context(), "t")
		var be *agentlink.BoardError
		if !errors.As(err, &be) || be.Code != "failed_precondition" {
			t.Fatalf("Pair with door %s: %v, want failed_precondition", door, err)
		}
		ann := addPerson(t, bt, door+"@example.com", "", "", false)
		_, err = ann.enter(t, bt, code)
		wantCode(t, err, connect.CodeFailedPrecondition)
	}
	acts := auditCounts(t, bt)
	if acts["identify.set"] != 2 {
		t.Fatalf("audit: %v, want identify.set 2", acts)
	}
	if _, err := admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_PAIRING}); err != nil {
		t.Fatal(err)
	}
	// The code issued before the door closed works again: it was never
	// used, and it has not expired.
	ann := addPerson(t, bt, "late@example.com", "", "", false)
	if _, err := ann.enter(t, bt, code); err != nil {
		t.Fatal(err)
	}
}

// TestPairingSignedIn is the whole way a person goes: signed in on the
// web, they set their verify secret and enter a code as they read it;
// the agent hears who paired, and later verifies them.
func TestPairingSignedIn(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	const password = "a long enough password"
	bt.AddUser("Cat@Example.com", identity.RoleViewer, password)
	cookie, csrf := bt.SignIn("cat@example.com", password)
	me := boardv1connect.NewUserServiceClient(bt.SessionClient(cookie, csrf))
	if _, err := me.SetVerifySecret(t.Context(), &boardv1.SetVerifySecretRequest{Secret: secret}); err != nil {
		t.Fatal(err)
	}
	a := startPairingAgent(t, bt, "desk", nil)
	code := a.pair(t, "chat-7")
	res, err := me.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: typed(code)})
	if err != nil || res.GetAgent() != "desk" || res.GetThread() != "chat-7" {
		t.Fatalf("EnterPairingCode = %v, %v; want desk, chat-7", res, err)
	}
	if p := a.awaitPaired(t); p.Thread != "chat-7" || p.Who != "cat@example.com" {
		t.Fatalf("paired %+v, want chat-7 and cat@example.com", p)
	}
	_, err = me.EnterPairingCode(t.Context(), &boardv1.EnterPairingCodeRequest{Code: code})
	wantCode(t, err, connect.CodeInvalidArgument)

	admin := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_VERIFY}); err != nil {
		t.Fatal(err)
	}
	if got := a.link.Verify(t.Context(), "cat@example.com", secret, 0); !got.OK || got.Address != "cat@example.com" {
		t.Fatalf("Verify = %+v, want ok", got)
	}
}
