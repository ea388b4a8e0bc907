package ui_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
	"github.com/symphonix/symphonix/packages"
)

// libraryFlow is a small valid flow: one input, one secret, one MCP
// server, so that a version has requirements to show.
const libraryFlow = `{
  "version": "0.17",
  "name": "greeter",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "requires": {"env": ["GREETER_TOKEN"]},
  "state": {
    "who": { "type": "string" },
    "greeting": { "type": "string" }
  },
  "nodes": [
    { "id": "greet", "type": "llm", "output": "greeting", "prompt": "Write a one-line greeting for {{who}}." }
  ],
  "edges": [ { "from": "greet", "to": "END" } ],
  "start": "greet"
}
`

// library is the board's library under test, filled through the real
// PackageService by an admin: publishers with a trusted key each, allowed
// in one scope with a threshold of one.
type library struct {
	t          *testing.T
	pkgs       boardv1connect.PackageServiceClient
	scope      string
	publishers []string
	key        ed25519.PrivateKey // the first publisher's, which signs every package
	keyID      string
}

// newLibrary trusts a new key of publisher and lets publisher publish in
// scope with a threshold of one.
func newLibrary(t *testing.T, bt *boardtest.Board, admin, scope, publisher string) *library {
	t.Helper()
	l := &library{t: t, pkgs: boardv1connect.NewPackageServiceClient(bt.Client(bt.OperatorToken(admin, identity.RoleAdmin))), scope: scope}
	l.key, l.keyID = l.trust(publisher)
	return l
}

// trust trusts a new key of publisher, allows publisher in the library's
// scope, and returns the key and its id.
func (l *library) trust(publisher string) (ed25519.PrivateKey, string) {
	l.t.Helper()
	pub, key, err := packages.NewKey()
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.pkgs.AddKey(l.t.Context(), &boardv1.AddKeyRequest{PublicKey: packages.FormatPublicKey(pub), Publisher: publisher}); err != nil {
		l.t.Fatalf("add key: %v", err)
	}
	l.publishers = append(l.publishers, publisher)
	if _, err := l.pkgs.PutScope(l.t.Context(), &boardv1.PutScopeRequest{Name: l.scope, Publishers: l.publishers, Threshold: 1}); err != nil {
		l.t.Fatalf("put scope: %v", err)
	}
	return key, packages.KeyID(pub)
}

// publish builds name@version from a folder in t.TempDir(), signs it
// with the library's key, and with each of also, and publishes it.
func (l *library) publish(name, version, description string, also ...ed25519.PrivateKey) *boardv1.PackageVersion {
	l.t.Helper()
	dir := l.t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(libraryFlow), 0o644); err != nil {
		l.t.Fatal(err)
	}
	var archive bytes.Buffer
	m, err := packages.Build(dir, packages.Meta{Name: name, Version: version, Description: description}, &archive, packages.Limits{})
	if err != nil {
		l.t.Fatalf("build %s@%s: %v", name, version, err)
	}
	digest, err := m.Digest()
	if err != nil {
		l.t.Fatal(err)
	}
	env, err := packages.Sign(digest, l.key, l.keyID)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, k := range also {
		more, err := packages.Sign(digest, k, packages.KeyID(k.Public().(ed25519.PublicKey)))
		if err != nil {
			l.t.Fatal(err)
		}
		env.Signatures = append(env.Signatures, more.Signatures...)
	}
	envelope, err := json.Marshal(env)
	if err != nil {
		l.t.Fatal(err)
	}
	s, err := l.pkgs.Publish(l.t.Context())
	if err != nil {
		l.t.Fatalf("publish %s@%s: %v", name, version, err)
	}
	if err := s.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{
		Envelope: envelope, Size: int64(archive.Len()),
	}}}); err != nil {
		l.t.Fatalf("publish %s@%s: header: %v", name, version, err)
	}
	if err := s.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: archive.Bytes()}}); err != nil {
		l.t.Fatalf("publish %s@%s: chunk: %v", name, version, err)
	}
	res, err := s.CloseAndReceive()
	if err != nil {
		l.t.Fatalf("publish %s@%s: %v", name, version, err)
	}
	if res.GetVersion().GetDigest() != digest {
		l.t.Fatalf("publish %s@%s: digest %q, want %q", name, version, res.GetVersion().GetDigest(), digest)
	}
	return res.GetVersion()
}

// version is the stored record of name@version, as GetPackage says.
func (l *library) version(name, version string) *boardv1.PackageVersion {
	l.t.Helper()
	res, err := l.pkgs.GetPackage(l.t.Context(), &boardv1.GetPackageRequest{Name: name})
	if err != nil {
		l.t.Fatalf("get %s: %v", name, err)
	}
	for _, v := range res.GetVersions() {
		if v.GetVersion() == version {
			return v
		}
	}
	l.t.Fatalf("get %s: no version %s", name, version)
	return nil
}

// storeRunners puts n agents, "fleet-00000" and on, in the board's store
// as agents whose last hello said they run digest would be.
func storeRunners(t *testing.T, bt *boardtest.Board, n int, name, version, digest string) {
	t.Helper()
	now := time.Now()
	var rows []*ent.AgentCreate
	for i := range n {
		rows = append(rows, bt.Store.Agent.Create().
			SetName(fmt.Sprintf("fleet-%05d", i)).
			SetProtocol("2").
			SetFirstSeen(now).
			SetLastSeen(now).
			SetPackageName(name).
			SetPackageVersion(version).
			SetPackageDigest(digest))
	}
	if err := bt.Store.Agent.CreateBulk(rows...).Exec(t.Context()); err != nil {
		t.Fatalf("store agents: %v", err)
	}
}

// versionItem is the expression of the item of version on a package's
// page.
func versionItem(version string) string {
	return `document.querySelector('#versions li[data-version="` + version + `"]')`
}

// TestBrowserLibrary: the library's list and a package's page show what
// the board holds — versions newest first, signers by publisher, digests,
// a yanked version with who, when and why, the agents running each — and
// an admin yanks a version from the page, which shows it at once.
// Everything a publisher or an operator wrote is drawn as text.
func TestBrowserLibrary(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{OfflineGrace: 100 * time.Millisecond})
	lib := newLibrary(t, bt, "root", "acme", "acme-signer")
	const description = "Greets <b>bold</b> people"
	v1 := lib.publish("acme/hello", "1.0.0", description)
	lib.publish("acme/hello", "1.2.0", description)
	v2 := lib.publish("acme/hello", "2.0.0", description)
	// acme/other is signed by two publishers' keys, one revoked since.
	otherKey, otherID := lib.trust("beta-signer")
	lib.publish("acme/other", "0.1.0", "", otherKey)
	const revokedWhy = "laptop <u>lost</u>"
	if _, err := lib.pkgs.RevokeKey(t.Context(), &boardv1.RevokeKeyRequest{KeyId: otherID, Reason: revokedWhy}); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	const badReason = "broken <i>build</i>"
	if _, err := lib.pkgs.Yank(t.Context(), &boardv1.YankRequest{Name: "acme/hello", Version: "1.2.0", Reason: badReason}); err != nil {
		t.Fatalf("yank 1.2.0: %v", err)
	}
	// One agent runs 1.0.0, linked now; 101 that ran 2.0.0 are stored.
	openRawHello(t, bt, &boardv1.Hello{Name: "runner", Package: &boardv1.InstalledPackage{
		Name: "acme/hello", Version: "1.0.0", Digest: v1.GetDigest(),
	}})
	storeRunners(t, bt, 101, "acme/hello", "2.0.0", v2.GetDigest())

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("ada", identity.RoleAdmin), "library")

	// The list.
	b.Until("both packages listed", `() => document.querySelectorAll("#library-rows tr").length === 2`)
	row := `document.querySelector('#library-rows tr[data-package="acme/hello"]')`
	if got := b.Eval(`Array.from(` + row + `.cells).map((c) => c.textContent.trim()).slice(1, 4).join("|")`); got != "agent|2.0.0|3" {
		t.Errorf("acme/hello's row: kind|latest|versions = %q, want agent|2.0.0|3", got)
	}
	if got := b.Eval(row + `.querySelector(".description").textContent`); got != description {
		t.Errorf("acme/hello's description = %q, want %q as text", got, description)
	}
	if got := b.Eval(`String(document.querySelectorAll("#library b, #library i").length)`); got != "0" {
		t.Errorf("the library shows %s elements made of what a publisher wrote, want none", got)
	}
	if got := b.Eval(`String(document.querySelector('#library-rows tr[data-package="acme/other"] time') !== null)`); got != "true" {
		t.Errorf("acme/other's row has no update time")
	}

	// A package's page, opened from the list.
	b.Click("open acme/hello", `#library-rows tr[data-package="acme/hello"] a`)
	b.Until("the package page shows its versions", `() => !document.getElementById("package").hidden &&
		document.querySelectorAll("#versions li.version").length === 3`)
	if got := b.Eval(`location.hash`); got != "#package/acme%2Fhello" {
		t.Errorf("the package page's address = %q, want #package/acme%%2Fhello", got)
	}
	if got := b.Eval(`document.querySelector("#tab-library").getAttribute("aria-current")`); got != "page" {
		t.Errorf("the Library tab's aria-current on a package page = %q, want page", got)
	}
	if got := b.Eval(`Array.from(document.querySelectorAll("#versions li.version")).map((li) => li.dataset.version).join(",")`); got != "2.0.0,1.2.0,1.0.0" {
		t.Errorf("versions = %s, want newest first: 2.0.0,1.2.0,1.0.0", got)
	}

	// Its digest: shortened, whole on hover.
	digest := versionItem("1.0.0") + `.querySelector("code.digest")`
	if got := b.Eval(digest + `.title`); got != v1.GetDigest() {
		t.Errorf("1.0.0's digest on hover = %q, want %q", got, v1.GetDigest())
	}
	if got := b.Eval(digest + `.textContent`); got == v1.GetDigest() || !strings.HasPrefix(v1.GetDigest(), strings.TrimSuffix(got, "…")) {
		t.Errorf("1.0.0's digest on screen = %q, want the start of %q, shortened", got, v1.GetDigest())
	}
	// Its signers, by publisher and key id.
	signer := versionItem("1.0.0") + `.querySelector("li.signer")`
	if got := b.Eval(signer + `.querySelector(".publisher").textContent`); got != "acme-signer" {
		t.Errorf("1.0.0's signer = %q, want the publisher acme-signer", got)
	}
	if got := b.Eval(signer + `.querySelector(".key-id").title`); got != lib.keyID {
		t.Errorf("1.0.0's signer's key id on hover = %q, want %q", got, lib.keyID)
	}
	if got := b.Eval(signer + `.querySelector(".key-id").textContent`); !strings.HasPrefix(lib.keyID, strings.TrimSuffix(got, "…")) || got == lib.keyID {
		t.Errorf("1.0.0's signer's key id on screen = %q, want the start of %q", got, lib.keyID)
	}
	// Its requirements, published by whom, size and files.
	if got := b.Eval(versionItem("1.0.0") + `.querySelector('dd[data-requires="secrets"]').textContent`); got != "GREETER_TOKEN" {
		t.Errorf("1.0.0's secrets = %q, want GREETER_TOKEN", got)
	}
	if got := b.Eval(versionItem("1.0.0") + `.querySelector(".published-by").textContent`); got != "root" {
		t.Errorf("1.0.0 published by %q, want root", got)
	}
	if got := b.Eval(versionItem("1.0.0") + `.querySelector('dd[data-fact="files"]').textContent`); got != fmt.Sprint(v1.GetFiles()) {
		t.Errorf("1.0.0's files = %q, want %d", got, v1.GetFiles())
	}
	if got := b.Eval(versionItem("1.0.0") + `.querySelector('dd[data-fact="size"]').textContent.replaceAll(",", "")`); !strings.Contains(got, fmt.Sprint(v1.GetSize())+" bytes") {
		t.Errorf("1.0.0's size = %q, want %d bytes", got, v1.GetSize())
	}

	// The yanked one: marked, with who and why, as text; no Yank button.
	if got := b.Eval(versionItem("1.2.0") + `.dataset.yanked`); got != "true" {
		t.Errorf("1.2.0 yanked = %s, want true", got)
	}
	if got := b.Eval(versionItem("1.2.0") + `.querySelector(".yanked-reason").textContent`); got != badReason {
		t.Errorf("1.2.0's yank reason = %q, want %q as text", got, badReason)
	}
	if got := b.Eval(versionItem("1.2.0") + `.querySelector(".yanked-by").textContent`); got != "root" {
		t.Errorf("1.2.0 yanked by %q, want root", got)
	}
	if got := b.Eval(`String(document.querySelectorAll("#package b, #package i").length)`); got != "0" {
		t.Errorf("the package page shows %s elements made of what a publisher or an operator wrote, want none", got)
	}
	if got := b.Eval(`String(` + versionItem("1.2.0") + `.querySelector(".yank-button") === null && ` + versionItem("1.0.0") + `.querySelector(".yank-button") !== null)`); got != "true" {
		t.Errorf("Yank buttons: want one on 1.0.0 and none on the yanked 1.2.0")
	}

	// The agents running each: names linking to their pages, and how many
	// more past the first 100.
	b.Until("runner is listed as running 1.0.0", `() => {
		const a = `+versionItem("1.0.0")+`.querySelector("a.agent-link");
		return a !== null && a.textContent === "runner" && a.getAttribute("href") === "#agent/runner";
	}`)
	if got := b.Eval(versionItem("2.0.0") + `.querySelectorAll("a.agent-link").length + "|" + ` + versionItem("2.0.0") + `.querySelector(".more-agents").textContent`); got != "100|and 1 more" {
		t.Errorf("2.0.0's agents: links|more = %q, want 100|and 1 more", got)
	}

	// Copy copies the digest whole, or, where the page may not write the
	// clipboard, shows it whole and selected.
	b.Click("Copy 1.0.0's digest", `#versions li[data-version="1.0.0"] button.copy`)
	b.Until("the copy is said", `() => /digest of 1\.0\.0/.test(document.getElementById("package-status").textContent)`)

	// An empty reason is refused here, and nothing is sent.
	b.Click("Yank 1.0.0", `#versions li[data-version="1.0.0"] .yank-button`)
	b.Click("Yank it with no reason", `#versions li[data-version="1.0.0"] .yank-confirm`)
	b.UntilText("the reason is asked for", "#package-action-error", "the reason is required")
	if v := lib.version("acme/hello", "1.0.0"); v.GetYanked() != nil {
		t.Errorf("1.0.0 yanked with no reason: %v", v.GetYanked())
	}
	b.Click("Cancel", `#versions li[data-version="1.0.0"] .yank-cancel`)

	// An admin yanks 2.0.0 with a reason: the page shows it without a
	// reload, and the board has it.
	b.Eval(`window.notReloaded = true; "marked"`)
	b.Click("Yank 2.0.0", `#versions li[data-version="2.0.0"] .yank-button`)
	const reason = "leaks the <token> into logs"
	b.Do("write why", chromedp.SendKeys(`#versions li[data-version="2.0.0"] input.yank-reason`, reason))
	// An agent that starts running 2.0.0 meanwhile redraws the page: what is
	// being typed, and where, stays.
	openRawHello(t, bt, &boardv1.Hello{Name: "late-runner", Package: &boardv1.InstalledPackage{
		Name: "acme/hello", Version: "2.0.0", Digest: v2.GetDigest(),
	}})
	b.Until("the page redrawn with the agent that came", `() => {
		const more = `+versionItem("2.0.0")+`.querySelector(".more-agents");
		return more !== null && more.textContent === "and 2 more";
	}`)
	if got := b.Eval(`document.activeElement.matches('#versions li[data-version="2.0.0"] input.yank-reason') ? document.activeElement.value : "(focus lost)"`); got != reason {
		t.Errorf("after a redraw the reason being typed is %q, want %q, still focused", got, reason)
	}
	b.Click("confirm the yank", `#versions li[data-version="2.0.0"] .yank-confirm`)
	b.Until("2.0.0 shown yanked, with the reason", `(reason) => {
		const li = `+versionItem("2.0.0")+`;
		const why = li && li.querySelector(".yanked-reason");
		return li.dataset.yanked === "true" && why !== null && why.textContent === reason && li.querySelector(".yank-button") === null;
	}`, reason)
	if got := b.Eval(`String(window.notReloaded === true)`); got != "true" {
		t.Errorf("the page was reloaded to show the yank")
	}
	if got := b.Eval(versionItem("2.0.0") + `.querySelector(".yanked-by").textContent`); got != "ada" {
		t.Errorf("2.0.0 yanked by %q on the page, want ada", got)
	}
	if y := lib.version("acme/hello", "2.0.0").GetYanked(); y.GetReason() != reason || y.GetBy() != "ada" {
		t.Errorf("2.0.0 on the board: yanked %v, want by ada for %q", y, reason)
	}
	b.Until("the newest not yanked is 1.0.0", `() => document.querySelector('#package-facts dd[data-fact="latest"]').textContent === "1.0.0"`)

	// The agent's page and the agents table show the package it runs,
	// linking to the package's page.
	b.Click("open the agents", "#tab-agents")
	// The table shows 100 agents a page, and the fleet here is larger:
	// search for it.
	b.Do("search for runner", chromedp.SendKeys(chromedp.ID("agents-q"), "runner"))
	b.Until("runner's row names its package", `() => {
		const a = document.querySelector('#agent-rows tr[data-agent="runner"] a.package-ref');
		return a !== null && a.textContent === "acme/hello@1.0.0" && a.getAttribute("href") === "#package/acme%2Fhello";
	}`)
	b.Click("open runner", `#agent-rows tr[data-agent="runner"] a.name`)
	b.Until("runner's page names its package", `() => {
		const a = document.querySelector('#agent-facts dd[data-fact="package"] a');
		return a !== null && a.textContent === "acme/hello@1.0.0" && a.getAttribute("href") === "#package/acme%2Fhello";
	}`)
	b.Click("follow the package link", `#agent-facts dd[data-fact="package"] a`)
	b.Until("the package page again", `() => !document.getElementById("package").hidden &&
		document.querySelectorAll("#versions li.version").length === 3`)
	noEnumNames(t, b, "the package page")

	// A version signed by two publishers shows both, the revoked key marked,
	// with who revoked it and why on hover.
	b.Click("open the library", "#tab-library")
	b.Click("open acme/other", `#library-rows tr[data-package="acme/other"] a`)
	b.Until("acme/other's signers", `() => document.querySelectorAll('#versions li[data-version="0.1.0"] li.signer').length === 2`)
	signers := `Array.from(document.querySelectorAll('#versions li[data-version="0.1.0"] li.signer'))`
	if got := b.Eval(signers + `.map((li) => li.querySelector(".publisher").textContent + ":" + (li.dataset.revoked || "false")).sort().join(",")`); got != "acme-signer:false,beta-signer:true" {
		t.Errorf("acme/other's signers = %s, want acme-signer:false,beta-signer:true", got)
	}
	revoked := `document.querySelector('#versions li[data-version="0.1.0"] li.signer[data-key-id="` + otherID + `"] .badge.revoked')`
	if got := b.Eval(revoked + `.title`); !strings.Contains(got, "root") || !strings.Contains(got, revokedWhy) {
		t.Errorf("the revoked key's mark says %q, want who (root) and why (%q)", got, revokedWhy)
	}
	if got := b.Eval(`String(document.querySelectorAll("#package u").length)`); got != "0" {
		t.Errorf("a revocation's reason is drawn as markup")
	}
}

// TestBrowserLibraryViewer: a viewer reads the library but sees no Yank
// button, and the board refuses a yank from a viewer all the same.
func TestBrowserLibraryViewer(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	lib := newLibrary(t, bt, "root", "acme", "acme-signer")
	lib.publish("acme/hello", "1.0.0", "")

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vic", identity.RoleViewer), "library")
	b.Click("open acme/hello", `#library-rows tr[data-package="acme/hello"] a`)
	b.Until("the version shown", `() => document.querySelectorAll("#versions li.version").length === 1`)
	if got := b.Eval(`String(document.querySelectorAll("#package .yank-button, #package .yank-form").length)`); got != "0" {
		t.Errorf("a viewer sees %s Yank buttons or forms, want none", got)
	}
	if got := b.Eval(`String(!document.getElementById("package-readonly").hidden)`); got != "true" {
		t.Errorf("a viewer is not told that only admins may yank")
	}

	viewer := boardv1connect.NewPackageServiceClient(bt.Client(bt.OperatorToken("vic", identity.RoleViewer)))
	_, err := viewer.Yank(t.Context(), &boardv1.YankRequest{Name: "acme/hello", Version: "1.0.0", Reason: "because"})
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a viewer's yank: %v, want permission_denied", err)
	}
	if v := lib.version("acme/hello", "1.0.0"); v.GetYanked() != nil {
		t.Errorf("1.0.0 yanked by a viewer: %v", v.GetYanked())
	}
}
