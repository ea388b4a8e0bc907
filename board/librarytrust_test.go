package board_test

import (
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/packages"
)

func packagesClient(bt *boardtest.Board, token string) boardv1connect.PackageServiceClient {
	return boardv1connect.NewPackageServiceClient(bt.Client(token))
}

// newPublicKey is a fresh Ed25519 public key as text, and its key id.
func newPublicKey(t *testing.T) (text, id string) {
	t.Helper()
	pub, _, err := packages.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return packages.FormatPublicKey(pub), packages.KeyID(pub)
}

// wantRefusal fails the test unless err is a connect error with code whose
// message says says.
func wantRefusal(t *testing.T, what string, err error, code connect.Code, says string) {
	t.Helper()
	if connect.CodeOf(err) != code || !strings.Contains(err.Error(), says) {
		t.Errorf("%s: %v, want %v saying %q", what, err, code, says)
	}
}

// TestLibraryKeys: an admin trusts a key for a publisher (again is a
// no-op, for another publisher is refused), lists and revokes it; a
// revoked key is never trusted again; each change is audited; bad input
// is refused naming the field.
func TestLibraryKeys(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := packagesClient(bt, bt.OperatorToken("ada", identity.RoleAdmin))
	ctx := t.Context()
	text, id := newPublicKey(t)

	add, err := admin.AddKey(ctx, &boardv1.AddKeyRequest{PublicKey: text, Publisher: "acme-release"})
	if err != nil {
		t.Fatal(err)
	}
	if k := add.GetKey(); !add.GetCreated() || k.GetKeyId() != id || k.GetPublisher() != "acme-release" || k.GetAddedBy() != "ada" || k.GetPublicKey() != text {
		t.Errorf("AddKey = %v, want %s created for acme-release by ada", add, id)
	}
	again, err := admin.AddKey(ctx, &boardv1.AddKeyRequest{PublicKey: text, Publisher: "acme-release"})
	if err != nil || again.GetCreated() {
		t.Errorf("the same key again: %v %v, want a no-op", again, err)
	}
	_, err = admin.AddKey(ctx, &boardv1.AddKeyRequest{PublicKey: text, Publisher: "mallory"})
	wantRefusal(t, "the key for another publisher", err, connect.CodeAlreadyExists, "already acme-release's")

	for _, tc := range []struct {
		req  *boardv1.AddKeyRequest
		says string
	}{
		{&boardv1.AddKeyRequest{Publisher: "p"}, "public_key: required"},
		{&boardv1.AddKeyRequest{PublicKey: "rsa:abc", Publisher: "p"}, "public_key:"},
		{&boardv1.AddKeyRequest{PublicKey: text}, "publisher: required"},
		{&boardv1.AddKeyRequest{PublicKey: text, Publisher: "Acme Release"}, "publisher:"},
	} {
		_, err := admin.AddKey(ctx, tc.req)
		wantRefusal(t, "AddKey "+tc.req.String(), err, connect.CodeInvalidArgument, tc.says)
	}

	other, otherID := newPublicKey(t)
	if _, err := admin.AddKey(ctx, &boardv1.AddKeyRequest{PublicKey: other, Publisher: "beta"}); err != nil {
		t.Fatal(err)
	}
	list, err := admin.ListKeys(ctx, &boardv1.ListKeysRequest{Publisher: "beta"})
	if err != nil || len(list.GetKeys()) != 1 || list.GetKeys()[0].GetKeyId() != otherID {
		t.Errorf("ListKeys(beta) = %v %v, want only %s", list, err, otherID)
	}
	// Paging by key id: one a page, each once.
	seen := map[string]bool{}
	token := ""
	for range 5 {
		page, err := admin.ListKeys(ctx, &boardv1.ListKeysRequest{PageSize: 1, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page.GetKeys() {
			if seen[k.GetKeyId()] {
				t.Errorf("key %s twice", k.GetKeyId())
			}
			seen[k.GetKeyId()] = true
		}
		if token = page.GetNextPageToken(); token == "" {
			break
		}
	}
	if !seen[id] || !seen[otherID] || len(seen) != 2 {
		t.Errorf("paged keys = %v, want both", seen)
	}

	_, err = admin.RevokeKey(ctx, &boardv1.RevokeKeyRequest{KeyId: id})
	wantRefusal(t, "a revocation without a reason", err, connect.CodeInvalidArgument, "reason: required")
	_, err = admin.RevokeKey(ctx, &boardv1.RevokeKeyRequest{KeyId: "sha256:" + strings.Repeat("0", 64), Reason: "r"})
	wantRefusal(t, "revoking an unknown key", err, connect.CodeNotFound, "not a key this board knows")
	_, err = admin.RevokeKey(ctx, &boardv1.RevokeKeyRequest{KeyId: "abc", Reason: "r"})
	wantRefusal(t, "revoking a malformed key id", err, connect.CodeInvalidArgument, "key_id:")
	rev, err := admin.RevokeKey(ctx, &boardv1.RevokeKeyRequest{KeyId: id, Reason: "laptop stolen"})
	if err != nil || rev.GetKey().GetRevoked().GetReason() != "laptop stolen" || rev.GetKey().GetRevoked().GetBy() != "ada" {
		t.Fatalf("RevokeKey = %v %v", rev, err)
	}
	twice, err := admin.RevokeKey(ctx, &boardv1.RevokeKeyRequest{KeyId: id, Reason: "again"})
	if err != nil || twice.GetKey().GetRevoked().GetReason() != "laptop stolen" {
		t.Errorf("a second revocation: %v %v, want a no-op keeping the first reason", twice, err)
	}
	_, err = admin.AddKey(ctx, &boardv1.AddKeyRequest{PublicKey: text, Publisher: "acme-release"})
	wantRefusal(t, "trusting a revoked key again", err, connect.CodeFailedPrecondition, "never trusted again")

	// Survives a restart.
	bt.Restart()
	admin = packagesClient(bt, bt.OperatorToken("ada", identity.RoleAdmin))
	all, err := admin.ListKeys(ctx, &boardv1.ListKeysRequest{})
	if err != nil || len(all.GetKeys()) != 2 {
		t.Fatalf("ListKeys after a restart = %v %v", all, err)
	}
	for _, k := range all.GetKeys() {
		if (k.GetKeyId() == id) != (k.GetRevoked() != nil) {
			t.Errorf("key %s revoked = %v", k.GetKeyId(), k.GetRevoked())
		}
	}
	wantAudited(t, bt, "package.key.add", 2)
	wantAudited(t, bt, "package.key.revoke", 1)
}

// TestLibraryScopes: an admin puts a scope's publishers and threshold;
// bad input is refused naming the field; the list reads them back.
func TestLibraryScopes(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	admin := packagesClient(bt, bt.OperatorToken("ada", identity.RoleAdmin))
	ctx := t.Context()
	put, err := admin.PutScope(ctx, &boardv1.PutScopeRequest{Name: "acme", Publishers: []string{"release", "security", "release"}, Threshold: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sc := put.GetScope(); sc.GetThreshold() != 2 || strings.Join(sc.GetPublishers(), ",") != "release,security" || sc.GetSetBy() != "ada" {
		t.Errorf("PutScope = %v", sc)
	}
	one, err := admin.PutScope(ctx, &boardv1.PutScopeRequest{Name: "tools", Publishers: []string{"ops"}})
	if err != nil || one.GetScope().GetThreshold() != 1 {
		t.Errorf("threshold 0 = %v %v, want it read as 1", one, err)
	}
	for _, tc := range []struct {
		req  *boardv1.PutScopeRequest
		says string
	}{
		{&boardv1.PutScopeRequest{}, "name: required"},
		{&boardv1.PutScopeRequest{Name: "Acme"}, "name:"},
		{&boardv1.PutScopeRequest{Name: "acme", Publishers: []string{"ok", ""}}, "publishers[1]: required"},
		{&boardv1.PutScopeRequest{Name: "acme", Threshold: -1}, "threshold: -1"},
		{&boardv1.PutScopeRequest{Name: "acme", Threshold: 33}, "threshold: 33, at most 32"},
		{&boardv1.PutScopeRequest{Name: "acme", Publishers: make([]string, 65)}, "publishers: 65, at most 64"},
	} {
		_, err := admin.PutScope(ctx, tc.req)
		wantRefusal(t, "PutScope "+tc.req.String(), err, connect.CodeInvalidArgument, tc.says)
	}
	list, err := admin.ListScopes(ctx, &boardv1.ListScopesRequest{})
	if err != nil || len(list.GetScopes()) != 2 || list.GetScopes()[0].GetName() != "acme" || list.GetScopes()[1].GetName() != "tools" {
		t.Errorf("ListScopes = %v %v", list, err)
	}
	wantAudited(t, bt, "package.scope.put", 2)
}

// TestLibraryTrustAccess: an agent token reads the trust (keys and scopes,
// to check an install) but changes nothing (it is no operator's token); a
// viewer or approver neither; without a token nothing at all.
func TestLibraryTrustAccess(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	ctx := t.Context()
	text, _ := newPublicKey(t)
	for _, tc := range []struct {
		who   string
		token string
		read  connect.Code
		write connect.Code
	}{
		{"an agent", bt.AgentToken("desk"), 0, connect.CodeUnauthenticated},
		{"a viewer", bt.OperatorToken("vic", identity.RoleViewer), 0, connect.CodePermissionDenied},
		{"an approver", bt.OperatorToken("amy", identity.RoleApprover), 0, connect.CodePermissionDenied},
		{"nobody", "", connect.CodeUnauthenticated, connect.CodeUnauthenticated},
	} {
		c := packagesClient(bt, tc.token)
		_, err := c.ListKeys(ctx, &boardv1.ListKeysRequest{})
		if connect.CodeOf(err) != tc.read && (tc.read != 0 || err != nil) {
			t.Errorf("%s: ListKeys: %v, want %v", tc.who, err, tc.read)
		}
		_, err = c.ListScopes(ctx, &boardv1.ListScopesRequest{})
		if connect.CodeOf(err) != tc.read && (tc.read != 0 || err != nil) {
			t.Errorf("%s: ListScopes: %v, want %v", tc.who, err, tc.read)
		}
		_, err = c.AddKey(ctx, &boardv1.AddKeyRequest{PublicKey: text, Publisher: "p"})
		if connect.CodeOf(err) != tc.write {
			t.Errorf("%s: AddKey: %v, want %v", tc.who, err, tc.write)
		}
		_, err = c.PutScope(ctx, &boardv1.PutScopeRequest{Name: "acme", Publishers: []string{"p"}})
		if connect.CodeOf(err) != tc.write {
			t.Errorf("%s: PutScope: %v, want %v", tc.who, err, tc.write)
		}
	}
}

// TestHelloPackage: the package an agent's hello names is what the board
// shows for it, and a later hello without one clears it.
func TestHelloPackage(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	agents := bt.Agents(bt.OperatorToken("vic", identity.RoleViewer))
	pkg := &boardv1.InstalledPackage{Name: "acme/desk", Version: "1.2.0", Digest: "sha256:" + strings.Repeat("ab", 32)}
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol, Package: pkg})
	got, err := agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "desk"})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.GetAgent().GetPackage(); p.GetName() != pkg.Name || p.GetVersion() != pkg.Version || p.GetDigest() != pkg.Digest {
		t.Errorf("Agent.package = %v, want %v", p, pkg)
	}
	l.hangUp()
	openLinkWith(t, bt, &boardv1.Hello{Name: "desk", Protocol: board.Protocol})
	got, err = agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "desk"})
	if err != nil || got.GetAgent().GetPackage() != nil {
		t.Errorf("after a hello without a package: %v %v, want none", got.GetAgent().GetPackage(), err)
	}
}

// wantAudited fails the test unless the board's audit log holds n entries
// of action.
func wantAudited(t *testing.T, bt *boardtest.Board, action string, n int) {
	t.Helper()
	c := boardv1connect.NewAuditServiceClient(bt.Client(bt.OperatorToken("auditor", identity.RoleAdmin)))
	got := 0
	var after int64
	for {
		res, err := c.ListAudit(t.Context(), &boardv1.ListAuditRequest{AfterSeq: after, PageSize: 500})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetEntries()) == 0 {
			break
		}
		for _, e := range res.GetEntries() {
			if e.GetAction() == action {
				got++
			}
		}
		after = res.GetEntries()[len(res.GetEntries())-1].GetSeq()
	}
	if got != n {
		t.Errorf("audit: %d entries of %s, want %d", got, action, n)
	}
}
