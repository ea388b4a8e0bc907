package board

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// bubbleBoard is a board on a store of its own, made inside a synctest
// bubble so that its clock (time.Now) is the bubble's.
func bubbleBoard(t *testing.T) *Board {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.SQLiteDSN(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ctx, Config{Store: db, RevocationPoll: time.Hour})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		db.Close()
	})
	return b
}

func bubblePerson(t *testing.T, b *Board, id string) identity.Caller {
	t.Helper()
	now := b.now()
	err := b.db.User.Create().SetID(id).SetEmail(id + "@example.com").SetRole("viewer").
		SetCreatedAt(now).SetUpdatedAt(now).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return identity.Caller{Kind: identity.KindSession, Name: id + "@example.com", UserID: id, Role: identity.RoleViewer}
}

func enterAs(b *Board, c identity.Caller, code string) error {
	_, err := b.enterPairingCode(identity.NewContext(context.Background(), c), &boardv1.EnterPairingCodeRequest{Code: code})
	return err
}

// TestPairCodeExpires: a code works for ten minutes and not a moment
// longer.
func TestPairCodeExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t)
		ann := bubblePerson(t, b, "ann")
		ctx := context.Background()
		early, _, err := b.pairCode(ctx, "desk", &boardv1.Pair{RequestId: "1", Thread: "early"})
		if err != nil {
			t.Fatal(err)
		}
		late, expires, err := b.pairCode(ctx, "desk", &boardv1.Pair{RequestId: "2", Thread: "late"})
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Until(expires); got != PairCodeLife {
			t.Fatalf("expires in %s, want %s", got, PairCodeLife)
		}
		time.Sleep(PairCodeLife - time.Second)
		if err := enterAs(b, ann, early); err != nil {
			t.Fatalf("a second before expiry: %v", err)
		}
		time.Sleep(time.Second)
		err = enterAs(b, ann, late)
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "invalid or expired code") {
			t.Fatalf("at expiry: %v, want invalid or expired code", err)
		}
	})
}

// TestPairingLimitWindows: a person stopped after ten wrong codes may try
// again once the oldest leaves the fifteen minutes; the board's limit
// lasts a minute.
func TestPairingLimitWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t)
		ann := bubblePerson(t, b, "ann")
		code, _, err := b.pairCode(context.Background(), "desk", &boardv1.Pair{RequestId: "1", Thread: "t"})
		if err != nil {
			t.Fatal(err)
		}
		for range wrongPerPerson {
			if err := enterAs(b, ann, "2222-2222"); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("wrong code: %v", err)
			}
			time.Sleep(time.Minute)
		}
		// The first wrong code was ten minutes ago.
		if err := enterAs(b, ann, code); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("after %d wrong codes: %v, want resource_exhausted", wrongPerPerson, err)
		}
		time.Sleep(wrongPersonWithin - 10*time.Minute)
		// Now it has left the window; one more wrong code fills it again.
		if err := enterAs(b, ann, "2222-2222"); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("after the window: %v, want invalid_argument", err)
		}
		if err := enterAs(b, ann, code); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("full again: %v, want resource_exhausted", err)
		}
		time.Sleep(time.Minute)
		code, _, err = b.pairCode(context.Background(), "desk", &boardv1.Pair{RequestId: "2", Thread: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if err := enterAs(b, ann, code); err != nil {
			t.Fatalf("with room again: %v", err)
		}

		// The board's limit.
		for i := range wrongOnBoard {
			p := bubblePerson(t, b, "p"+strings.Repeat("x", i))
			if err := enterAs(b, p, "3333-3333"); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("wrong code %d: %v", i, err)
			}
		}
		bob := bubblePerson(t, b, "bob")
		code, _, err = b.pairCode(context.Background(), "desk", &boardv1.Pair{RequestId: "3", Thread: "u"})
		if err != nil {
			t.Fatal(err)
		}
		if err := enterAs(b, bob, code); connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("board full: %v, want resource_exhausted", err)
		}
		time.Sleep(wrongOnBoardWithin)
		if err := enterAs(b, bob, code); err != nil {
			t.Fatalf("a minute later: %v", err)
		}
	})
}

func TestPairCodeShape(t *testing.T) {
	t.Parallel()
	seen := map[byte]int{}
	for range 2000 {
		c, err := newPairCode()
		if err != nil {
			t.Fatal(err)
		}
		if !wellFormedPairCode(c) {
			t.Fatalf("newPairCode() = %q, not well formed", c)
		}
		for i := range len(c) {
			seen[c[i]]++
		}
	}
	// 16,000 symbols over 30: each about 533; a symbol never drawn, or
	// drawn twice as often as it should, is a bias.
	for i := range len(pairAlphabet) {
		if n := seen[pairAlphabet[i]]; n < 350 || n > 750 {
			t.Errorf("symbol %c drawn %d times in 16000, want about 533", pairAlphabet[i], n)
		}
	}
	for _, bad := range "0O1IL" {
		if strings.ContainsRune(pairAlphabet, bad) {
			t.Errorf("alphabet has look-alike %c", bad)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"abcd-efgh", "ABCDEFGH"},
		{" AB CD\tEF-GH ", "ABCDEFGH"},
		{"ab--cd  ef gh", "ABCDEFGH"},
	} {
		if got := normalPairCode(tc.in); got != tc.want {
			t.Errorf("normalPairCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if n := len(nearMisses("ABCDEFGH")); n != pairCodeLen*(len(pairAlphabet)-1) {
		t.Errorf("nearMisses: %d, want %d", n, pairCodeLen*(len(pairAlphabet)-1))
	}
}
