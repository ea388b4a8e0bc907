package main

import (
	"os"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestApprovalsCommands: list and get show a raised approval; decide
// shows its card, refuses without a terminal or --yes, decides with
// --yes, and refuses an approval already decided; cancel ends one.
func TestApprovalsCommands(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	f.governRefunds(t)
	id := f.raise(t, "r1", 40)
	other := f.raise(t, "r2", 90)

	out := f.ok(t, "approvals", "list", "--state", "pending")
	if !regexpLine(out, `^`+id+`\s+pending\s+refund-bot\s+approve\s+refund 40 EUR to ann\?\s+refunds\s`) || !strings.Contains(out, other) {
		t.Errorf("approvals list --state pending:\n%s", out)
	}
	if out := f.ok(t, "approvals", "list", "--state", "approved"); strings.Contains(out, id) {
		t.Errorf("approvals list --state approved shows a pending one:\n%s", out)
	}
	type approvalJSON struct {
		ID       string `json:"id"`
		State    string `json:"state"`
		Digest   string `json:"digest"`
		RuleID   string `json:"rule_id"`
		ShowJSON string `json:"show_json"`
	}
	list := decodeJSON[[]approvalJSON](t, f.ok(t, "approvals", "list", "-o", "json", "--limit", "1"))
	if len(list) != 1 || list[0].ID != other || list[0].State != "APPROVAL_STATE_PENDING" || list[0].RuleID != "refunds" {
		t.Errorf("approvals list -o json --limit 1 = %+v, want the newest, %s", list, other)
	}

	card := f.ok(t, "approvals", "get", id)
	a := f.approval(t, id)
	for _, want := range []string{"refund 40 EUR to ann?", "agent refund-bot, run r1, node approve", a.GetDigest(), "refunds", `"amount": 40`, "ann's parcel arrived broken"} {
		if !strings.Contains(card, want) {
			t.Errorf("approvals get: %q missing:\n%s", want, card)
		}
	}

	// Without a terminal and without --yes: refused, nothing decided,
	// the card shown first.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	_, stderr, err := runWith(t, f.env, r, "approvals", "decide", id, "approve", "--board", f.b.URL)
	wantExit(t, err, 2, "--yes", id)
	if !strings.Contains(stderr, a.GetDigest()) {
		t.Errorf("decide without --yes: the card is not shown first:\n%s", stderr)
	}
	if got := f.approval(t, id).GetState(); got != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("after a refused decide: %v, want pending", got)
	}
	// --yes only counts on the command line, never from the environment.
	env := func(k string) string {
		if k == "SYMPHONIX_YES" {
			return "true"
		}
		return f.env(k)
	}
	_, _, err = runWith(t, env, nil, "approvals", "decide", id, "approve", "--board", f.b.URL)
	wantExit(t, err, 2, "--yes")

	out = f.ok(t, "approvals", "decide", id, "approve", "--yes", "--reason", "checked the photo")
	if !strings.Contains(out, "approval "+id+": approved by ops at ") {
		t.Errorf("decide --yes: %q", out)
	}
	got := f.approval(t, id)
	if got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED || got.GetDecision().GetReason() != "checked the photo" {
		t.Errorf("the board has %v (%q), want approved with the reason", got.GetState(), got.GetDecision().GetReason())
	}
	_, _, err = f.board(t, "approvals", "decide", id, "reject", "--yes")
	wantExit(t, err, 1, "already approved", "nothing to decide")

	_, _, err = f.board(t, "approvals", "decide", other, "maybe", "--yes")
	wantExit(t, err, 2, "approve or reject")
	_, _, err = f.board(t, "approvals", "decide", "nosuch", "approve", "--yes")
	wantExit(t, err, 1, "nosuch", "not found")

	res := decodeJSON[approvalJSON](t, f.ok(t, "approvals", "cancel", other, "-o", "json"))
	if res.ID != other || res.State != "APPROVAL_STATE_CANCELLED" {
		t.Errorf("cancel -o json = %+v", res)
	}
	_, _, err = f.board(t, "approvals", "cancel", other)
	wantExit(t, err, 1, other)
}

// TestApprovalsWatch: the watch prints the snapshot, then each change, one
// line or one JSON object per event, until interrupted.
func TestApprovalsWatch(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	f.governRefunds(t)
	first := f.raise(t, "r1", 40)

	text, stopText := f.watch(t, "approvals", "watch")
	js, stopJSON := f.watch(t, "approvals", "watch", "-o", "json")
	boardtest.Eventually(t, 10*time.Second, "the snapshot", func() bool {
		return regexpLine(text.String(), `^snapshot  `+first+`  pending  refund-bot  approve  refund 40 EUR to ann\?$`) &&
			regexpLine(text.String(), `^synced$`) && strings.Contains(js.String(), "APPROVAL_EVENT_SYNCED")
	})
	second := f.raise(t, "r2", 70)
	boardtest.Eventually(t, 10*time.Second, "the raise", func() bool {
		return regexpLine(text.String(), `^raised  `+second+`  pending  refund-bot`) && strings.Contains(js.String(), second)
	})
	f.ok(t, "approvals", "decide", second, "reject", "--yes")
	boardtest.Eventually(t, 10*time.Second, "the decision", func() bool {
		return regexpLine(text.String(), `^decided  `+second+`  rejected  `)
	})
	if err := stopText(); err != nil {
		t.Errorf("approvals watch, interrupted: %v, want nil", err)
	}
	stopJSON()
	var events []string
	for _, l := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		v := decodeJSON[map[string]any](t, l)
		events = append(events, v["event"].(string))
	}
	if events[0] != "APPROVAL_EVENT_SNAPSHOT" || events[1] != "APPROVAL_EVENT_SYNCED" || events[2] != "APPROVAL_EVENT_RAISED" {
		t.Errorf("approvals watch -o json events = %v", events)
	}
}

// TestApprovalsWatchSilence: a watch whose connection dies without a word
// (here, a proxy that stops forwarding) ends once nothing, not even a
// heartbeat, has come for the silence, saying to watch again.
func TestApprovalsWatchSilence(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{WatchHeartbeat: 50 * time.Millisecond})
	proxy := boardtest.NewProxy(t, b.Addr)
	bc, err := clientOptions{Board: proxy.URL(), Token: b.OperatorToken("ops", identity.RoleViewer)}.dial()
	if err != nil {
		t.Fatal(err)
	}
	bc.silence = time.Second
	var out lines
	done := make(chan error, 1)
	go func() { done <- watchApprovals(t.Context(), bc, &boardv1.WatchApprovalsRequest{}, false, &out) }()
	boardtest.Eventually(t, 10*time.Second, "the snapshot", func() bool { return strings.Contains(out.String(), "synced") })
	proxy.Freeze()
	select {
	case err := <-done:
		wantExit(t, err, 1, "went silent", "watch again")
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not end within 20s of its connection going silent")
	}
}

// TestApprovalsDecideQuorum: a yes short of the rule's quorum is counted
// and said to be so; the approval stays pending.
func TestApprovalsDecideQuorum(t *testing.T) {
	t.Parallel()
	f := startFleet(t)
	f.ok(t, "rules", "put", "--agent", "refund-bot", "--node", "approve", "--person", "ops", "--person", "ann@example.com", "--quorum", "2")
	id := f.raise(t, "r1", 400)
	out := f.ok(t, "approvals", "decide", id, "approve", "--yes")
	if out != "approval "+id+": vote counted, still pending (yes so far: ops)\n" {
		t.Errorf("decide under a quorum of 2: %q", out)
	}
	if got := f.approval(t, id); got.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING || len(got.GetVotes()) != 1 {
		t.Errorf("the board has %v with votes %v, want pending with one", got.GetState(), got.GetVotes())
	}
}
