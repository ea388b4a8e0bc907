package board_test

import (
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
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
