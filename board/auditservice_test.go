package board_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
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

// auditFixture starts a board whose log holds, after the admin's token,
// four entries written hours apart from t0: who did what to which thing.
func auditFixture(t *testing.T) (bt *boardtest.Board, admin string, t0 time.Time) {
	t.Helper()
	bt = boardtest.Start(t, boardtest.Options{})
	admin = bt.OperatorToken("root", identity.RoleAdmin)
	t0 = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	log := audit.New(bt.Store)
	for i, r := range []audit.Record{
		{Actor: "alice", Action: "approval.decide", Subject: "ap-1"},
		{Actor: "bob", Action: "approval.raise", Subject: "ap-1"},
		{Actor: "alice", Action: "rule.put", Subject: "r-1"},
		{Actor: "alice", Action: "approval.decide", Subject: "ap-2"},
	} {
		r.At = t0.Add(time.Duration(i) * time.Hour)
		if err := log.AppendNow(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	return bt, admin, t0
}

// said is an entry as actor/action/subject.
func said(entries []*boardv1.AuditEntry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.GetActor()+" "+e.GetAction()+" "+e.GetSubject())
	}
	return out
}

// TestListAuditFilters: each filter narrows the list to the entries it
// names, in the store's query, pages and all; newest_first turns it round.
func TestListAuditFilters(t *testing.T) {
	t.Parallel()
	bt, admin, t0 := auditFixture(t)
	at := func(h int) *timestamppb.Timestamp { return timestamppb.New(t0.Add(time.Duration(h) * time.Hour)) }
	for _, tc := range []struct {
		name string
		req  *boardv1.ListAuditRequest
		want []string
	}{
		{"actor", &boardv1.ListAuditRequest{Actor: "alice"},
			[]string{"alice approval.decide ap-1", "alice rule.put r-1", "alice approval.decide ap-2"}},
		{"action exactly", &boardv1.ListAuditRequest{Action: "approval.decide"},
			[]string{"alice approval.decide ap-1", "alice approval.decide ap-2"}},
		{"action prefix", &boardv1.ListAuditRequest{Action: "approval."},
			[]string{"alice approval.decide ap-1", "bob approval.raise ap-1", "alice approval.decide ap-2"}},
		{"action without its dot is exact", &boardv1.ListAuditRequest{Action: "approval"}, []string{}},
		{"subject", &boardv1.ListAuditRequest{Subject: "ap-1"},
			[]string{"alice approval.decide ap-1", "bob approval.raise ap-1"}},
		{"since and until", &boardv1.ListAuditRequest{Since: at(1), Until: at(3)},
			[]string{"bob approval.raise ap-1", "alice rule.put r-1"}},
		{"since alone", &boardv1.ListAuditRequest{Since: at(3), Actor: "alice"},
			[]string{"alice approval.decide ap-2"}},
		{"newest first", &boardv1.ListAuditRequest{Actor: "alice", NewestFirst: true},
			[]string{"alice approval.decide ap-2", "alice rule.put r-1", "alice approval.decide ap-1"}},
		{"all together", &boardv1.ListAuditRequest{Actor: "alice", Action: "approval.", Subject: "ap-2", Since: at(0), Until: at(4)},
			[]string{"alice approval.decide ap-2"}},
	} {
		for proto, opts := range boardtest.Protocols {
			c := boardv1connect.NewAuditServiceClient(bt.Client(admin, opts...))
			res, err := c.ListAudit(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("%s %s: ListAudit: %v", tc.name, proto, err)
			}
			if d := cmp.Diff(tc.want, said(res.GetEntries())); d != "" {
				t.Errorf("%s %s: ListAudit (-want +got):\n%s", tc.name, proto, d)
			}
			// Page by page, one at a time, the same entries.
			var paged []*boardv1.AuditEntry
			req := proto2Clone(tc.req)
			req.PageSize = 1
			for pages := 0; ; pages++ {
				res, err := c.ListAudit(t.Context(), req)
				if err != nil || pages > 10 {
					t.Fatalf("%s %s: ListAudit page %d: %v", tc.name, proto, pages, err)
				}
				paged = append(paged, res.GetEntries()...)
				if res.GetNextPageToken() == "" {
					break
				}
				req.PageToken = res.GetNextPageToken()
			}
			if d := cmp.Diff(tc.want, said(paged)); d != "" {
				t.Errorf("%s %s: ListAudit by pages of 1 (-want +got):\n%s", tc.name, proto, d)
			}
		}
	}
	// The newest first, from after_seq: the entries above it, newest first.
	c := boardv1connect.NewAuditServiceClient(bt.Client(admin))
	res, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: 3, NewestFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"alice approval.decide ap-2", "alice rule.put r-1"}, said(res.GetEntries())); d != "" {
		t.Errorf("ListAudit(after 3, newest first) (-want +got):\n%s", d)
	}
}

func proto2Clone(r *boardv1.ListAuditRequest) *boardv1.ListAuditRequest {
	return proto.Clone(r).(*boardv1.ListAuditRequest)
}

// TestListAuditInvalid: a filter out of bounds is invalid_argument naming
// its field, and so is a page token used with other filters.
func TestListAuditInvalid(t *testing.T) {
	t.Parallel()
	bt, admin, t0 := auditFixture(t)
	c := boardv1connect.NewAuditServiceClient(bt.Client(admin))
	for _, tc := range []struct {
		name, field string
		req         *boardv1.ListAuditRequest
	}{
		{"negative after_seq", "after_seq", &boardv1.ListAuditRequest{AfterSeq: -1}},
		{"actor too long", "actor", &boardv1.ListAuditRequest{Actor: strings.Repeat("a", 257)}},
		{"subject too long", "subject", &boardv1.ListAuditRequest{Subject: strings.Repeat("s", 257)}},
		{"action too long", "action", &boardv1.ListAuditRequest{Action: strings.Repeat("a", 65)}},
		{"action upper case", "action", &boardv1.ListAuditRequest{Action: "Approval."}},
		{"action with a wildcard", "action", &boardv1.ListAuditRequest{Action: "approval.%"}},
		{"action a dot", "action", &boardv1.ListAuditRequest{Action: "."}},
		{"since out of range", "since", &boardv1.ListAuditRequest{Since: &timestamppb.Timestamp{Seconds: 1 << 40}}},
		{"until bad nanos", "until", &boardv1.ListAuditRequest{Until: &timestamppb.Timestamp{Nanos: -1}}},
		{"until before since", "until", &boardv1.ListAuditRequest{Since: timestamppb.New(t0.Add(time.Hour)), Until: timestamppb.New(t0)}},
		{"until at since", "until", &boardv1.ListAuditRequest{Since: timestamppb.New(t0), Until: timestamppb.New(t0)}},
	} {
		_, err := c.ListAudit(t.Context(), tc.req)
		var ce *connect.Error
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !errors.As(err, &ce) || !strings.HasPrefix(ce.Message(), tc.field+":") {
			t.Errorf("%s: ListAudit = %v, want invalid_argument naming %s", tc.name, err, tc.field)
		}
	}
	// 256 bytes is allowed: the bound is inclusive.
	if _, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{Actor: strings.Repeat("a", 256), Action: strings.Repeat("a", 64)}); err != nil {
		t.Errorf("ListAudit(256-byte actor, 64-byte action) = %v, want no error", err)
	}
	res, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{Actor: "alice", PageSize: 1})
	if err != nil || res.GetNextPageToken() == "" {
		t.Fatalf("ListAudit(alice, 1) = %v, %v; want a page and more", res, err)
	}
	for name, req := range map[string]*boardv1.ListAuditRequest{
		"another actor":  {Actor: "bob", PageToken: res.GetNextPageToken()},
		"another order":  {Actor: "alice", NewestFirst: true, PageToken: res.GetNextPageToken()},
		"another action": {Actor: "alice", Action: "rule.", PageToken: res.GetNextPageToken()},
		"another time":   {Actor: "alice", Since: timestamppb.New(t0), PageToken: res.GetNextPageToken()},
	} {
		if _, err := c.ListAudit(t.Context(), req); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("ListAudit(token, %s) = %v, want invalid_argument", name, err)
		}
	}
}

// TestVerifyAudit: an admin verifies the chain through the API, as the
// command line does: intact, then broken at the entry whose hash was
// changed in the store; anyone below admin is refused.
func TestVerifyAudit(t *testing.T) {
	t.Parallel()
	bt, admin, _ := auditFixture(t)
	c := boardv1connect.NewAuditServiceClient(bt.Client(admin))
	res, err := c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{})
	if err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	if !res.GetOk() || res.GetEntries() != 5 || res.GetBadSeq() != 0 || res.GetWhy() != "" || !strings.HasPrefix(res.GetHead(), "sha256:") {
		t.Fatalf("VerifyAudit = %v, want ok with 5 entries and a head", res)
	}
	list, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{NewestFirst: true, PageSize: 1})
	if err != nil || len(list.GetEntries()) != 1 || list.GetEntries()[0].GetHash() != res.GetHead() {
		t.Errorf("the newest entry = %v, %v; want the head %s", list, err, res.GetHead())
	}

	// Someone with the database rewrites entry 3's hash.
	n, err := bt.Store.AuditEntry.Update().Where(auditentry.Seq(3)).
		SetHash("sha256:" + strings.Repeat("0", 64)).Save(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("tamper with entry 3: %d, %v", n, err)
	}
	res, err = c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{})
	if err != nil {
		t.Fatalf("VerifyAudit: %v", err)
	}
	if res.GetOk() || res.GetBadSeq() != 3 || res.GetEntries() != 2 || res.GetWhy() != audit.ErrModified.Error() {
		t.Errorf("VerifyAudit after tampering = %v, want not ok, bad seq 3 (%v), 2 good", res, audit.ErrModified)
	}
	for _, r := range []identity.Role{identity.RoleViewer, identity.RoleApprover} {
		c := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken(fmt.Sprintf("someone-%d", r), r)))
		if _, err := c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("VerifyAudit as %s = %v, want permission_denied", r, err)
		}
	}
}

// TestVerifyAuditRate: one caller may verify a few times a minute, and
// then is told to wait; another caller is not held up by it.
func TestVerifyAuditRate(t *testing.T) {
	t.Parallel()
	bt, admin, _ := auditFixture(t)
	c := boardv1connect.NewAuditServiceClient(bt.Client(admin))
	for i := range board.VerifyAuditsPerCaller {
		if _, err := c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{}); err != nil {
			t.Fatalf("VerifyAudit %d: %v", i+1, err)
		}
	}
	_, err := c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{})
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("VerifyAudit %d = %v, want resource_exhausted", board.VerifyAuditsPerCaller+1, err)
	}
	other := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken("other", identity.RoleAdmin)))
	if _, err := other.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{}); err != nil {
		t.Errorf("VerifyAudit by another admin = %v, want ok", err)
	}
}

// TestVerifyAuditOneAtATime: while the board verifies, another
// verification is refused, not queued; once it is done, one runs.
func TestVerifyAuditOneAtATime(t *testing.T) {
	t.Parallel()
	bt, admin, _ := auditFixture(t)
	c := boardv1connect.NewAuditServiceClient(bt.Client(admin))
	release := bt.Board.HoldVerifyForTest()
	_, err := c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{})
	release()
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("VerifyAudit while another runs = %v, want resource_exhausted", err)
	}
	if res, err := c.VerifyAudit(t.Context(), &boardv1.VerifyAuditRequest{}); err != nil || !res.GetOk() {
		t.Errorf("VerifyAudit after = %v, %v; want ok", res, err)
	}
}
