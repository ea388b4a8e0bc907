package board_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

const secret = "correct horse battery"

// verifyWithin is how long a test's verify waits for the board: each
// checks an argon2id hash, slow under the race detector on a busy machine.
const verifyWithin = time.Minute

// verifyBoard is a board whose door is verify, with people in it.
func verifyBoard(t *testing.T, opts boardtest.Options) (*boardtest.Board, *pairingAgent) {
	t.Helper()
	bt := boardtest.Start(t, opts)
	admin := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_VERIFY}); err != nil {
		t.Fatal(err)
	}
	h := board.HashSecretForTest(secret)
	addPerson(t, bt, "ann@example.com", "Ann", h, false)
	addPerson(t, bt, "gone@example.com", "Gone", h, true)
	addPerson(t, bt, "nosecret@example.com", "No Secret", "", false)
	return bt, startPairingAgent(t, bt, "desk", nil)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	bt, a := verifyBoard(t, boardtest.Options{})

	got := a.link.Verify(t.Context(), "  Ann@Example.COM ", secret, verifyWithin)
	if want := (agentlink.VerifyResult{OK: true, Address: "ann@example.com", Name: "Ann"}); got != want {
		t.Fatalf("Verify(ann, right secret) = %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		name, who, secret string
	}{
		{"wrong secret", "ann@example.com", "correct horse battery!"},
		{"unknown person", "nobody@example.com", secret},
		{"disabled person", "gone@example.com", secret},
		{"no verify secret", "nosecret@example.com", ""},
		{"no verify secret, some secret", "nosecret@example.com", secret},
		{"not an address", "ann", secret},
	} {
		got := a.link.Verify(t.Context(), tc.who, tc.secret, verifyWithin)
		if want := (agentlink.VerifyResult{Why: "not verified"}); got != want {
			t.Errorf("%s: Verify = %+v, want %+v", tc.name, got, want)
		}
	}
	acts := auditCounts(t, bt)
	if acts["verify.ok"] != 1 || acts["verify.fail"] != 6 {
		t.Fatalf("audit: %v, want verify.ok 1, verify.fail 6", acts)
	}
	entries, err := audit.New(bt.Store).List(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if b, _ := json.Marshal(e); strings.Contains(string(b), "horse") {
			t.Fatalf("audit entry %d carries the secret: %s", e.Seq, b)
		}
	}
}

// TestVerifyLimits: five failures for an address stop it, the right secret
// included, and not another address; the door must be verify.
func TestVerifyLimits(t *testing.T) {
	t.Parallel()
	bt, a := verifyBoard(t, boardtest.Options{})
	for range 5 {
		if got := a.link.Verify(t.Context(), "ann@example.com", "guess guess guess", verifyWithin); got.OK || got.Why != "not verified" {
			t.Fatalf("wrong secret: %+v", got)
		}
	}
	got := a.link.Verify(t.Context(), "ANN@example.com", secret, verifyWithin)
	if got.OK || !strings.Contains(got.Why, "too many failed tries") {
		t.Fatalf("after five failures: %+v, want refused for too many", got)
	}
	if got := a.link.Verify(t.Context(), "nobody@example.com", secret, verifyWithin); got.OK || got.Why != "not verified" {
		t.Fatalf("another address: %+v", got)
	}

	admin := boardv1connect.NewUserServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))
	if _, err := admin.SetIdentify(t.Context(), &boardv1.SetIdentifyRequest{Door: boardv1.Door_DOOR_PAIRING}); err != nil {
		t.Fatal(err)
	}
	other := startPairingAgent(t, bt, "other", nil)
	if got := other.link.Verify(t.Context(), "nosecret@example.com", secret, verifyWithin); got.OK || !strings.Contains(got.Why, "does not verify") {
		t.Fatalf("door pairing: %+v, want refused", got)
	}
}

// TestVerifyAgentLimit: one agent may ask sixty times a minute. The
// board's clock stands still, so the sixty fall in one minute however
// long the machine takes over them.
func TestVerifyAgentLimit(t *testing.T) {
	t.Parallel()
	now := time.Now().Add(time.Minute) // after every token the test mints
	_, a := verifyBoard(t, boardtest.Options{Now: func() time.Time { return now }})
	for i := range 60 {
		if got := a.link.Verify(t.Context(), "ann@example.com", secret, verifyWithin); !got.OK {
			t.Fatalf("verify %d: %+v", i, got)
		}
	}
	if got := a.link.Verify(t.Context(), "ann@example.com", secret, verifyWithin); got.OK || !strings.Contains(got.Why, "too many verifies") {
		t.Fatalf("verify 61: %+v, want refused", got)
	}
}

// TestVerifyLimitBurst: wrong secrets for one address sent at once, by
// many agents, check no more secrets than the limit; the rest are refused
// unchecked.
func TestVerifyLimitBurst(t *testing.T) {
	t.Parallel()
	bt, _ := verifyBoard(t, boardtest.Options{ConcurrentHashes: 32})
	const n = 12
	agents := make([]*pairingAgent, n)
	for i := range agents {
		agents[i] = startPairingAgent(t, bt, fmt.Sprintf("desk-%d", i), nil)
	}
	whys := make(chan string, n)
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Go(func() { whys <- a.link.Verify(t.Context(), "ann@example.com", "guess guess guess", verifyWithin).Why })
	}
	wg.Wait()
	close(whys)
	checked := 0
	for why := range whys {
		switch {
		case why == "not verified":
			checked++
		case strings.Contains(why, "too many failed tries"):
		default:
			t.Errorf("verify: %q, want not verified or too many failed tries", why)
		}
	}
	if checked > 5 {
		t.Fatalf("%d secrets checked in a burst of %d, want at most 5", checked, n)
	}
}
