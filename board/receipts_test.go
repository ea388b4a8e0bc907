package board_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/receipts"
)

// receiptKeys is the board's published receipt key set.
func receiptKeys(t *testing.T, bt *boardtest.Board) receipts.KeySet {
	t.Helper()
	resp, err := http.Get(bt.URL + "/.well-known/receipt-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("receipt keys: %s %s", resp.Status, raw)
	}
	ks, err := receipts.ParseKeySet(raw)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestDecisionReceipts: every decision — a yes by quorum, a no, a cancel,
// an expiry — reaches the agent with a receipt the board's published keys
// verify, naming the approval, its run, node and digest, what was said,
// who voted and when, the rule and its version, and the content hash of
// the audit entry that recorded it. After the key is rotated, new
// receipts are signed by the new key and the old ones still verify.
func TestDecisionReceipts(t *testing.T) {
	t.Parallel()
	quorum := int32(2)
	bt, admin := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: &quorum, TimeLimit: durationpb.New(time.Hour)},
		boardtest.Options{})
	l := openLink(t, bt, "desk")
	yes := l.raised(refund("run-1", 1))
	no := l.raised(refund("run-2", 2))
	gone := l.raised(refund("run-3", 3))
	for _, who := range []string{"ann", "bob"} {
		if _, err := decide(approver(bt, who), t, yes.GetApprovalId(), "yes", digestOf(1), ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := decide(approver(bt, "cat"), t, no.GetApprovalId(), "no", digestOf(2), "too much"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Cancel(t.Context(), &boardv1.CancelRequest{Id: gone.GetApprovalId()}); err != nil {
		t.Fatal(err)
	}
	ds := map[string]*boardv1.ApprovalDecision{}
	for len(ds) < 3 {
		d, _ := l.nextDecision(within)
		ds[d.GetApprovalId()] = d
	}
	keys := receiptKeys(t, bt)
	entries := map[string]string{} // content hash → action
	for _, action := range []string{"approval.decide", "approval.cancel"} {
		for _, e := range auditEntries(t, bt, action) {
			entries[e.Content] = e.Subject + " " + action
		}
	}
	rule := stateOf(t, admin, yes.GetApprovalId()).GetRuleId()
	for id, want := range map[string]struct {
		say, run, digest string
		who              []string
	}{
		yes.GetApprovalId():  {"yes", "run-1", digestOf(1), []string{"ann", "bob"}},
		no.GetApprovalId():   {"no", "run-2", digestOf(2), []string{"cat"}},
		gone.GetApprovalId(): {"cancelled", "run-3", digestOf(3), []string{"root"}},
	} {
		d := ds[id]
		r, err := receipts.Verify(d.GetReceipt(), keys)
		if err != nil {
			t.Fatalf("%s receipt: %v", want.say, err)
		}
		if err := r.Binds(id, want.run, "pay", want.digest, want.say); err != nil {
			t.Errorf("%s receipt: %v", want.say, err)
		}
		if r.Agent != "desk" || !slices.Equal(r.Who, want.who) || r.Rule != rule || r.RuleVersion == "" || !r.DecidedAt.Equal(d.GetDecideTime().AsTime()) {
			t.Errorf("%s receipt: %+v, want desk, who %v, rule %s and its version, decided at %v", want.say, r, want.who, rule, d.GetDecideTime().AsTime())
		}
		if entries[r.Audit] == "" || entries[r.Audit][:len(id)] != id {
			t.Errorf("%s receipt: audit %q is not the content hash of the entry that recorded it (entries %v)", want.say, r.Audit, entries)
		}
		if want.say == "yes" && (len(r.Votes) != 2 || r.Votes[0].Who != "ann" || r.Votes[1].Who != "bob" || r.Votes[0].At.IsZero()) {
			t.Errorf("yes receipt votes: %+v, want ann's and bob's with when", r.Votes)
		}
		if got := stateOf(t, admin, id).GetDecision().GetReceipt(); got != d.GetReceipt() {
			t.Errorf("%s: GetApproval's receipt differs from the one the agent got", want.say)
		}
	}

	// Rotation: the new key signs from now; the old one, retired, is
	// still published and still verifies what it signed.
	from := time.Now().Add(time.Second)
	kid, err := board.NewReceiptKey(t.Context(), bt.Store, from)
	if err != nil {
		t.Fatal(err)
	}
	if err := bt.Board.LoadReceiptKeys(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(from.Truncate(time.Second).Add(10 * time.Millisecond)))
	later := l.raised(refund("run-4", 4))
	if _, err := decide(approver(bt, "cat"), t, later.GetApprovalId(), "no", digestOf(4), ""); err != nil {
		t.Fatal(err)
	}
	d, _ := l.nextDecision(within)
	keys = receiptKeys(t, bt)
	if len(keys) != 2 || keys[0].NotAfter.IsZero() || !keys[1].NotAfter.IsZero() || keys[1].ID != kid {
		t.Fatalf("keys after rotation: %+v, want the old one retired and %s", keys, kid)
	}
	if _, err := receipts.Verify(d.GetReceipt(), keys); err != nil {
		t.Errorf("a receipt after rotation: %v", err)
	}
	var header struct{ Kid string }
	raw, _ := jwsHeader(d.GetReceipt())
	_ = json.Unmarshal(raw, &header)
	if header.Kid != kid {
		t.Errorf("a receipt after rotation signed by %q, want the new key %s", header.Kid, kid)
	}
	if _, err := receipts.Verify(ds[yes.GetApprovalId()].GetReceipt(), keys); err != nil {
		t.Errorf("a receipt of the retired key after rotation: %v", err)
	}
}

// TestExpiryReceipt: an expiry reaches the agent with a receipt saying
// expired.
func TestExpiryReceipt(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, TimeLimit: durationpb.New(100 * time.Millisecond)},
		boardtest.Options{RevocationPoll: 20 * time.Millisecond})
	l := openLink(t, bt, "desk")
	a := l.raised(refund("run-1", 1))
	d, _ := l.nextDecision(within)
	r, err := receipts.Verify(d.GetReceipt(), receiptKeys(t, bt))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Binds(a.GetApprovalId(), "run-1", "pay", digestOf(1), "expired"); err != nil || len(r.Who) != 0 {
		t.Errorf("expiry receipt %+v: %v", r, err)
	}
}

// jwsHeader is the decoded header of a compact JWS.
func jwsHeader(raw string) ([]byte, error) {
	h, _, _ := strings.Cut(raw, ".")
	return base64.RawURLEncoding.DecodeString(h)
}
