package board_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// signedIn is the approvals client of a person signed in on the web.
func signedIn(t *testing.T, bt *boardtest.Board, email string, role identity.Role) boardv1connect.ApprovalServiceClient {
	t.Helper()
	bt.AddUser(email, role, "correct horse battery staple")
	return boardv1connect.NewApprovalServiceClient(bt.SessionClient(bt.SignIn(email, "correct horse battery staple")))
}

// TestActionLink: the person a link was made for opens it (which decides
// nothing), then decides through it once; the audit names the link.
func TestActionLink(t *testing.T) {
	t.Parallel()
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER}, boardtest.Options{})
	l := openLink(t, bt, "desk")
	id := l.raised(refund("run-1", 1)).GetApprovalId()
	ann := signedIn(t, bt, "ann@example.com", identity.RoleApprover)
	link := bt.Board.ActionLinkForTest("ann@example.com", id)

	opened, err := ann.OpenActionLink(t.Context(), &boardv1.OpenActionLinkRequest{Link: link})
	if err != nil {
		t.Fatal(err)
	}
	if a := opened.GetApproval(); a.GetId() != id || a.GetDigest() != digestOf(1) || a.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Fatalf("opened: %v, want approval %s pending with its digest", a, id)
	}
	if !opened.GetExpiresAt().AsTime().After(time.Now()) {
		t.Errorf("expires_at %v: want in the future", opened.GetExpiresAt().AsTime())
	}
	res, err := ann.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digestOf(1), ActionLink: link})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Fatalf("decided through the link: %v", res.GetApproval().GetState())
	}
	if d, _ := l.nextDecision(within); d.GetApprovalId() != id || d.GetSay() != boardv1.Say_SAY_YES {
		t.Fatalf("decision on the link: %v", d)
	}
	e, err := bt.Store.AuditEntry.Query().Where(auditentry.Action("approval.decide"), auditentry.Subject(id)).Only(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(e.Detail), `"action_link":"act-`) {
		t.Errorf("audit detail %s: want the action link's id", e.Detail)
	}
	// A link to an approval someone else decided first is refused.
	other := l.raised(refund("run-2", 2)).GetApprovalId()
	late := bt.Board.ActionLinkForTest("ann@example.com", other)
	if _, err := decide(approver(bt, "bob"), t, other, "no", digestOf(2), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := ann.OpenActionLink(t.Context(), &boardv1.OpenActionLinkRequest{Link: late}); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "not pending") {
		t.Errorf("opening a link to a decided approval: %v, want failed_precondition, not pending", err)
	}
	if _, err := ann.Decide(t.Context(), &boardv1.DecideRequest{Id: other, Say: boardv1.Say_SAY_YES, Digest: digestOf(2), ActionLink: late}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("deciding through a link to a decided approval: %v, want failed_precondition", err)
	}
	// Used: opening it again is refused.
	_, err = ann.OpenActionLink(t.Context(), &boardv1.OpenActionLinkRequest{Link: link})
	if connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "used already") {
		t.Errorf("opening a used link: %v, want failed_precondition, used already", err)
	}
}

// TestActionLinkRefused: a link is useless to anyone but its person, for
// any other approval or digest, changed in any way, used twice, or after
// its time; each refusal is audited and decides nothing.
func TestActionLinkRefused(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	bt, _ := decideBoard(t, &boardv1.Rule{Agent: "*", Node: "*", Role: boardv1.Role_ROLE_APPROVER, Quorum: ptr(int32(2))}, boardtest.Options{
		Now:        func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) },
		SessionTTL: 48 * time.Hour,
	})
	l := openLink(t, bt, "desk")
	first := l.raised(refund("run-1", 1)).GetApprovalId()
	second := l.raised(refund("run-2", 2)).GetApprovalId()
	ann := signedIn(t, bt, "ann@example.com", identity.RoleApprover)
	bob := signedIn(t, bt, "bob@example.com", identity.RoleApprover)
	link := bt.Board.ActionLinkForTest("ann@example.com", first)
	yes := func(c boardv1connect.ApprovalServiceClient, id string, d int, link string) error {
		_, err := c.Decide(t.Context(), &boardv1.DecideRequest{Id: id, Say: boardv1.Say_SAY_YES, Digest: digestOf(d), ActionLink: link})
		return err
	}
	changed := []byte(link)
	changed[len(changed)/2] ^= 1
	for _, tc := range []struct {
		name string
		err  error
		code connect.Code
		want string
	}{
		{"another person opens it", func() error {
			_, err := bob.OpenActionLink(t.Context(), &boardv1.OpenActionLinkRequest{Link: link})
			return err
		}(), connect.CodePermissionDenied, "another person"},
		{"another person decides with it", yes(bob, first, 1, link), connect.CodePermissionDenied, "another person"},
		{"an operator token decides with it", yes(approver(bt, "ann"), first, 1, link), connect.CodePermissionDenied, "another person"},
		{"for another approval", yes(ann, second, 2, link), connect.CodePermissionDenied, "made for approval"},
		{"changed", yes(ann, first, 1, string(changed)), connect.CodeInvalidArgument, "link:"},
		{"not a link", yes(ann, first, 1, "hello"), connect.CodeInvalidArgument, "not an action link"},
		{"too long", yes(ann, first, 1, strings.Repeat("a", 1025)), connect.CodeInvalidArgument, "action_link: 1025 bytes"},
	} {
		if connect.CodeOf(tc.err) != tc.code || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %v and %q", tc.name, tc.err, tc.code, tc.want)
		}
	}
	a, err := approver(bt, "root").GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: first})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.GetApproval().GetVotes()) != 0 {
		t.Fatalf("votes after refused links: %v, want none", a.GetApproval().GetVotes())
	}
	// Used once (a vote toward a quorum of 2), then replayed.
	if err := yes(ann, first, 1, link); err != nil {
		t.Fatal(err)
	}
	if err := yes(ann, first, 1, link); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "used already") {
		t.Errorf("replayed: %v, want failed_precondition, used already", err)
	}
	// Past its time (a day at most).
	late := bt.Board.ActionLinkForTest("ann@example.com", second)
	ahead.Store(int64(25 * time.Hour))
	if err := yes(ann, second, 2, late); connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired: %v, want failed_precondition, expired", err)
	}
	n, err := bt.Store.AuditEntry.Query().Where(auditentry.Action("approval.refuse")).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Errorf("%d refusals audited, want at least 8", n)
	}
}
