package board_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestLibraryYank: a yanked version is hidden from an install by name or
// by name@version, stays downloadable by digest, stays listed and marked;
// a second yank keeps the first reason; all of it survives a restart.
func TestLibraryYank(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	v1 := buildPkg(t, "acme/hello", "1.0.0", "# one\n", nil)
	v2 := buildPkg(t, "acme/hello", "1.1.0", "# two\n", nil)
	l.publishOK(v1, alice)
	l.publishOK(v2, alice)

	latest := func() string {
		t.Helper()
		res, err := l.admin.ListPackages(t.Context(), &boardv1.ListPackagesRequest{Scope: "acme"})
		if err != nil || len(res.GetPackages()) != 1 {
			t.Fatalf("ListPackages = %v, %v", res, err)
		}
		return res.GetPackages()[0].GetLatest()
	}
	if got := latest(); got != "1.1.0" {
		t.Fatalf("latest = %q, want 1.1.0", got)
	}

	for _, bad := range []struct {
		req   *boardv1.YankRequest
		code  connect.Code
		words []string
	}{
		{&boardv1.YankRequest{Name: "acme/hello", Version: "1.1.0"}, connect.CodeInvalidArgument, []string{"reason: required"}},
		{&boardv1.YankRequest{Name: "acme/hello", Version: "1.1.0", Reason: strings.Repeat("x", 1025)}, connect.CodeInvalidArgument, []string{"reason: 1025 bytes, at most 1024"}},
		{&boardv1.YankRequest{Name: "acme/hello", Reason: "r"}, connect.CodeInvalidArgument, []string{"version: required"}},
		{&boardv1.YankRequest{Version: "1.1.0", Reason: "r"}, connect.CodeInvalidArgument, []string{"name: required"}},
		{&boardv1.YankRequest{Name: "acme/hello", Version: "9.9.9", Reason: "r"}, connect.CodeNotFound, []string{"acme/hello@9.9.9"}},
	} {
		_, err := l.admin.Yank(t.Context(), bad.req)
		refused(t, bad.req.String(), err, bad.code, bad.words...)
	}

	reason := strings.Repeat("r", 1024)
	res, err := l.admin.Yank(t.Context(), &boardv1.YankRequest{Name: "acme/hello", Version: "1.1.0", Reason: reason})
	if err != nil || res.GetVersion().GetYanked().GetReason() != reason || res.GetVersion().GetYanked().GetBy() != "root" {
		t.Fatalf("Yank = %v, %v", res, err)
	}
	again, err := l.admin.Yank(t.Context(), &boardv1.YankRequest{Name: "acme/hello", Version: "1.1.0", Reason: "second thoughts"})
	if err != nil || again.GetVersion().GetYanked().GetReason() != reason ||
		!again.GetVersion().GetYanked().GetTime().AsTime().Equal(res.GetVersion().GetYanked().GetTime().AsTime()) {
		t.Fatalf("second Yank = %v, %v; want the first reason and time kept", again, err)
	}

	check := func(when string) {
		t.Helper()
		if got := latest(); got != "1.0.0" {
			t.Fatalf("%s: latest = %q, want 1.0.0", when, got)
		}
		head, data, err := download(t.Context(), l.admin, &boardv1.DownloadRequest{Name: "acme/hello"})
		if err != nil || head.GetVersion().GetVersion() != "1.0.0" || !bytes.Equal(data, v1.archive) {
			t.Fatalf("%s: download by name = %v, %v; want 1.0.0", when, head, err)
		}
		_, _, err = download(t.Context(), l.admin, &boardv1.DownloadRequest{Name: "acme/hello", Version: "1.1.0"})
		refused(t, when+": download yanked by name@version", err, connect.CodeFailedPrecondition, "yanked", v2.digest)
		head, data, err = download(t.Context(), l.admin, &boardv1.DownloadRequest{Digest: v2.digest})
		if err != nil || head.GetVersion().GetYanked() == nil || !bytes.Equal(data, v2.archive) {
			t.Fatalf("%s: download yanked by digest = %v, %v", when, head, err)
		}
		got, err := l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/hello"})
		if err != nil || len(got.GetVersions()) != 2 || got.GetVersions()[0].GetYanked().GetReason() != reason || got.GetVersions()[1].GetYanked() != nil {
			t.Fatalf("%s: GetPackage = %v, %v", when, got, err)
		}
	}
	check("after yank")
	l.bt.Restart()
	l.reconnect()
	check("after restart")

	// Every version yanked: nothing by name, latest empty, still by digest.
	if _, err := l.admin.Yank(t.Context(), &boardv1.YankRequest{Name: "acme/hello", Version: "1.0.0", Reason: "all gone"}); err != nil {
		t.Fatal(err)
	}
	_, _, err = download(t.Context(), l.admin, &boardv1.DownloadRequest{Name: "acme/hello"})
	refused(t, "download by name, all yanked", err, connect.CodeNotFound, "every version is yanked")
	if got := latest(); got != "" {
		t.Fatalf("latest = %q, want none", got)
	}
	if _, _, err := download(t.Context(), l.admin, &boardv1.DownloadRequest{Digest: v1.digest}); err != nil {
		t.Fatal(err)
	}

	// Each publish and each yank that changed something is audited, once.
	counts := map[string]int{}
	entries, err := audit.New(l.bt.Store).List(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		counts[e.Action+" "+e.Subject]++
	}
	for _, want := range []string{"package.publish acme/hello@1.0.0", "package.publish acme/hello@1.1.0", "package.yank acme/hello@1.1.0", "package.yank acme/hello@1.0.0"} {
		if counts[want] != 1 {
			t.Errorf("audit %q: %d entries, want 1 (%v)", want, counts[want], counts)
		}
	}
}

// TestLibraryAgentsRunning: the versions the library shows name the agents
// whose hello said they run them, by digest; yanking one tells them
// nothing and keeps them shown.
func TestLibraryAgentsRunning(t *testing.T) {
	t.Parallel()
	l := newLibrary(t, boardtest.Options{})
	alice := newSigner(t)
	l.trustKey("alice", alice)
	l.putScope("acme", 1, "alice")
	v1 := buildPkg(t, "acme/desk", "1.0.0", "# one\n", nil)
	v2 := buildPkg(t, "acme/desk", "2.0.0", "# two\n", nil)
	l.publishOK(v1, alice)
	l.publishOK(v2, alice)
	for _, name := range []string{"desk-b", "desk-a"} {
		openLinkWith(t, l.bt, &boardv1.Hello{Name: name, Protocol: board.Protocol,
			Package: &boardv1.InstalledPackage{Name: v1.name, Version: v1.version, Digest: v1.digest}})
	}
	res, err := l.admin.GetPackage(t.Context(), &boardv1.GetPackageRequest{Name: "acme/desk"})
	if err != nil || len(res.GetVersions()) != 2 {
		t.Fatalf("GetPackage = %v, %v", res, err)
	}
	if v := res.GetVersions()[1]; v.GetVersion() != "1.0.0" || v.GetAgentCount() != 2 || !slices.Equal(v.GetAgents(), []string{"desk-a", "desk-b"}) {
		t.Errorf("1.0.0 = %v, want run by desk-a and desk-b", v)
	}
	if v := res.GetVersions()[0]; v.GetAgentCount() != 0 || len(v.GetAgents()) != 0 {
		t.Errorf("2.0.0 = %v, want run by nobody", v)
	}
	y, err := l.admin.Yank(t.Context(), &boardv1.YankRequest{Name: v1.name, Version: v1.version, Reason: "a bug"})
	if err != nil || y.GetVersion().GetAgentCount() != 2 {
		t.Fatalf("Yank = %v, %v; want the two agents still shown", y, err)
	}
	head, _, err := download(t.Context(), l.admin, &boardv1.DownloadRequest{Digest: v1.digest})
	if err != nil || head.GetVersion().GetAgentCount() != 2 {
		t.Fatalf("download head = %v, %v", head, err)
	}
}
