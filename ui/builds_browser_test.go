package ui_test

import (
	"fmt"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// linkBuilds has the agent name link once with each of builds, in turn,
// the first from a package; it stays linked with the last.
func linkBuilds(t *testing.T, bt *boardtest.Board, name string, builds ...string) {
	t.Helper()
	for i, b := range builds {
		h := &boardv1.Hello{Name: name, Build: b}
		if i == 0 {
			h.Package = &boardv1.InstalledPackage{Name: "acme/" + name, Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", 0xd)}
		}
		l := openRawHello(t, bt, h)
		l.settle()
		if i < len(builds)-1 {
			_ = l.s.CloseSend()
		}
	}
}

// TestBrowserAgentBuilds: an agent's page lists the builds its hellos
// named, the current one first and marked in words, each shortened with
// the full digest on hover, its package, and when it was first and last
// seen, the exact time on hover.
func TestBrowserAgentBuilds(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	a, b := fmt.Sprintf("sha256:%064x", 0xa), fmt.Sprintf("sha256:%064x", 0xb)
	linkBuilds(t, bt, "desk", a, b)

	tab := browsertest.New(t)
	signInTo(t, tab, bt, bt.OperatorToken("vera", identity.RoleViewer), "agents")
	openAgentPage(t, tab, "desk")
	tab.Until("two builds listed", `() => document.querySelectorAll("#build-rows tr").length === 2 && !document.getElementById("builds").hidden`)
	got := tab.Eval(`JSON.stringify(Array.from(document.querySelectorAll("#build-rows tr")).map((tr) => ({
		build: tr.dataset.build,
		current: tr.dataset.current,
		shown: tr.querySelector("th").textContent,
		hover: tr.querySelector("code").title,
		pkg: tr.querySelector(".build-package").textContent,
		first: tr.querySelector(".build-first time") !== null && tr.querySelector(".build-first time").title !== "",
		last: tr.querySelector(".build-last time") !== null && tr.querySelector(".build-last time").title !== "",
	})))`)
	want := fmt.Sprintf(`[{"build":%q,"current":"true","shown":"%s current","hover":%q,"pkg":"—","first":true,"last":true},`+
		`{"build":%q,"current":"false","shown":"%s","hover":%q,"pkg":"acme/desk@1.0.0","first":true,"last":true}]`,
		b, b[7:19], b, a, a[7:19], a)
	if got != want {
		t.Errorf("the builds:\n got %s\nwant %s", got, want)
	}
}
