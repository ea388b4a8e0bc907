package agentlink_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/ent/receiptkey"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/receipts"
)

// TestReceiptChecked: a decision the board holds for a held approval is
// acted on only when its receipt verifies with the board's published keys
// and names that decision: none, one with a field changed, one signed by
// another key, and one of another run are each refused (the re-ask finds
// the decision, and OnDecision is not called); the board's own is acted
// on.
func TestReceiptChecked(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	governAll(t, bt)
	held := &agentlink.HeldInMemory{}
	r := refund(t, "run-1", 5000)
	held.Hold(r)
	a := startAgent(t, bt, "desk", func(c *agentlink.Config) { c.Holding = held })
	a.awaitState(t, true)
	a.awaitReAsk(t)
	id := listApprovals(t, bt, "desk")[0].GetId()

	good := receipts.Receipt{Approval: id, Agent: "desk", Run: "run-1", Node: "pay", Digest: r.Digest, Say: "yes", Who: []string{"ann"}, Audit: "x"}
	valid := boardReceipt(t, bt, good)
	parts := strings.Split(valid, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	changed := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"ann"`, `"eve"`, 1))) + "." + parts[2]
	k, err := bt.Store.ReceiptKey.Query().Where(receiptkey.RetiredAtIsNil()).First(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	byOther, _ := receipts.Sign(other, k.ID, good, time.Now())
	replayed := good
	replayed.Run = "run-2"
	ofAnotherRun := boardReceipt(t, bt, replayed)

	decideWith := func(receipt string) {
		t.Helper()
		if _, err := bt.Store.Approval.UpdateOneID(id).
			SetState("approved").SetSay("yes").SetDecisionDigest(r.Digest).
			SetDecidedBy([]string{"ann"}).SetDecidedAt(time.Now()).SetReceipt(receipt).
			Save(t.Context()); err != nil {
			t.Fatal(err)
		}
		bt.Restart()
		a.awaitState(t, false)
		a.awaitState(t, true)
		if got := a.awaitReAsk(t); got.Decided != 1 {
			t.Fatalf("re-ask = %+v, want the decision found", got)
		}
	}
	for name, receipt := range map[string]string{
		"no receipt":       "",
		"a field changed":  changed,
		"another key":      byOther,
		"another run's":    ofAnotherRun,
		"not a JWS at all": "not.a.receipt",
	} {
		decideWith(receipt)
		select {
		case d := <-a.decisions:
			t.Fatalf("%s: the decision was acted on: %+v", name, d)
		case <-time.After(200 * time.Millisecond):
		}
	}
	decideWith(valid)
	select {
	case d := <-a.decisions:
		if d.ApprovalID != id || d.Say != "yes" || d.Receipt != valid {
			t.Fatalf("OnDecision got %+v, want the yes with its receipt", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the decision with the board's receipt was not acted on")
	}
}
