package board_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent/auditentry"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestListAudit: an admin pages through the log; the entries chain, and
// no token ever appears in them; anyone below admin is refused.
func TestListAudit(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := bt.OperatorToken("root", identity.RoleAdmin)
	agentTok := bt.AgentToken("desk")
	for proto, opts := range boardtest.Protocols {
		audit := boardv1connect.NewAuditServiceClient(bt.Client(admin, opts...))
		var all []*boardv1.AuditEntry
		var after int64
		for {
			res, err := audit.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: after, PageSize: 1})
			if err != nil {
				t.Fatalf("%s: ListAudit: %v", proto, err)
			}
			if len(res.GetEntries()) == 0 {
				break
			}
			all = append(all, res.GetEntries()...)
			after = res.GetEntries()[len(res.GetEntries())-1].GetSeq()
		}
		if len(all) != 2 {
			t.Fatalf("%s: %d entries, want the two mints", proto, len(all))
		}
		for i, e := range all {
			if e.GetAction() != "token.mint" || e.GetSeq() != int64(i+1) || (i > 0 && e.GetPrev() != all[i-1].GetHash()) {
				t.Errorf("%s: entry %d = %v, want token.mint chained to the one before", proto, i, e)
			}
			if d := e.GetDetail().String(); len(d) > 0 && (strings.Contains(d, admin) || strings.Contains(d, agentTok)) {
				t.Errorf("%s: entry %d carries a token", proto, i)
			}
		}
		if _, err := audit.ListAudit(t.Context(), &boardv1.ListAuditRequest{PageSize: -1}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("%s: ListAudit(limit -1) = %v, want invalid_argument", proto, err)
		}
	}
	for _, r := range []identity.Role{identity.RoleViewer, identity.RoleApprover} {
		c := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken("someone", r)))
		if _, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("ListAudit as %s = %v, want permission_denied", r, err)
		}
	}
}

// TestAuditSequencer: the board chains the entries it writes without
// anyone reading the log, soon after they commit (the board's own and
// those identity writes on the same store), and so does a second board on
// the same PostgreSQL database for entries the first wrote; the chain
// never forks.
func TestAuditSequencer(t *testing.T) {
	t.Parallel()
	waiting := func(bt *boardtest.Board) func() bool {
		return func() bool {
			n, err := bt.Store.AuditEntry.Query().Where(auditentry.SeqIsNil()).Count(t.Context())
			return err == nil && n == 0
		}
	}
	bt := boardtest.Start(t, boardtest.Options{})
	bt.OperatorToken("root", identity.RoleAdmin) // token.mint
	boardtest.Eventually(t, 5*time.Second, "every entry chained", waiting(bt))
	if n, err := bt.Store.AuditEntry.Query().Where(auditentry.SeqNotNil()).Count(t.Context()); err != nil || n == 0 {
		t.Fatalf("chained entries = %d, %v; want some", n, err)
	}

	dsn := boardtest.PostgresDSN(t)
	one := boardtest.Start(t, boardtest.Options{DSN: dsn})
	two := boardtest.Start(t, boardtest.Options{DSN: dsn})
	for i := range 20 {
		for _, b := range []*boardtest.Board{one, two} {
			b.OperatorToken(fmt.Sprintf("op-%d", i), identity.RoleViewer)
		}
	}
	boardtest.Eventually(t, 5*time.Second, "every entry chained", waiting(two))
	r, err := audit.New(one.Store).Verify(t.Context())
	if err != nil || !r.OK() || r.Entries < 40 || r.Pending != 0 {
		t.Fatalf("Verify = %+v, %v; want ok with 40 entries or more, none pending", r, err)
	}
}
