package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// addPerson adds a person named name with role, who has set password
// through their setup link.
func addPerson(t *testing.T, bt *boardtest.Board, email, name string, role identity.Role, password string) {
	t.Helper()
	_, link, err := bt.Board.Users().Add(t.Context(), identity.AddUser{Email: email, Name: name, Role: role, Actor: "test"})
	if err != nil {
		t.Fatalf("add %s: %v", email, err)
	}
	if _, err := bt.Board.Users().Setup(t.Context(), identity.Setup{Token: link.Token, Password: password}); err != nil {
		t.Fatalf("set the password of %s: %v", email, err)
	}
}

// signInWithPassword opens the board and signs in with an email and a
// password, and waits until the page says who is signed in.
func signInWithPassword(t *testing.T, b *browsertest.Tab, bt *boardtest.Board, email, password string) {
	t.Helper()
	b.Do("sign in as "+email,
		chromedp.Navigate(bt.URL),
		chromedp.WaitVisible(chromedp.ID("email")),
	)
	typePassword(t, b, email, password)
	b.UntilText("signed in as "+email, "#who", "signed in as ")
}

// typePassword fills the sign-in form and submits it.
func typePassword(t *testing.T, b *browsertest.Tab, email, password string) {
	t.Helper()
	b.Do("type "+email+" and a password",
		chromedp.SetValue(chromedp.ID("email"), email),
		chromedp.SetValue(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("password-button")),
	)
}

// open shows view.
func open(t *testing.T, b *browsertest.Tab, view string) {
	t.Helper()
	b.Do("open the "+view,
		chromedp.Click(chromedp.ID("tab-"+view)),
		chromedp.WaitVisible(chromedp.ID(view)),
	)
}

// cookies are the browser's cookies for the page.
func cookies(t *testing.T, b *browsertest.Tab) []*network.Cookie {
	t.Helper()
	return browsertest.Run(b, "read the cookies", func(ctx context.Context, tgt *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, tgt, network.GetCookies, network.GetCookiesParams{})
		return res.Cookies, err
	})
}

// signedOut is a predicate: the page shows the sign-in and nothing else.
const signedOut = `() => !document.getElementById("sign-in").hidden && document.getElementById("views").hidden &&
	document.getElementById("session").hidden && document.getElementById("approvals").hidden`

func TestBrowserPasswordSignIn(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	const email, password = "ada@example.com", "correct horse battery"
	addPerson(t, bt, email, "Ada <b>Lovelace</b>", identity.RoleApprover, password)
	b := browsertest.New(t)

	// A wrong password is refused, and says no more than that.
	b.Do("open the board", chromedp.Navigate(bt.URL), chromedp.WaitVisible(chromedp.ID("email")))
	typePassword(t, b, email, "not the password")
	b.Until("the refusal shown", `() => {
		const e = document.getElementById("sign-in-error");
		return !e.hidden && e.textContent === "Wrong email or password.";
	}`)

	typePassword(t, b, "Ada@Example.com", password)
	b.Until("signed in", `() => !document.getElementById("views").hidden`)
	if got, want := b.Eval(`document.getElementById("who").textContent`), "signed in as Ada <b>Lovelace</b> (approver)"; got != want {
		t.Errorf("who = %q, want %q", got, want)
	}
	if got := b.Eval(`document.querySelector("#who b") === null ? "text" : "markup"`); got != "text" {
		t.Errorf("the name: %s, want text", got)
	}
	if got := b.Eval(`(document.getElementById("tab-people").hidden ? "no people" : "people") + ", " + (document.getElementById("tab-me").hidden ? "no me" : "me")`); got != "no people, me" {
		t.Errorf("an approver's tabs: %s, want no people, me", got)
	}

	// The session is in an HttpOnly cookie the script cannot read; only the
	// CSRF token is readable, and nothing is kept in storage.
	if got := b.Eval(`document.cookie`); strings.Contains(got, board.SessionCookie) || !strings.Contains(got, board.CSRFCookie+"=") {
		t.Errorf("document.cookie = %q, want %s and not %s", got, board.CSRFCookie, board.SessionCookie)
	}
	if got := b.Eval(`String(localStorage.length + sessionStorage.length)`); got != "0" {
		t.Errorf("storage: %s entries, want none", got)
	}
	var session *network.Cookie
	for _, c := range cookies(t, b) {
		if c.Name == board.SessionCookie {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict {
		t.Errorf("session cookie = %+v, want HttpOnly and SameSite=Strict", session)
	}

	// A reload stays signed in: the CSRF token comes back from its cookie.
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("views")))
	b.UntilText("signed in after the reload", "#who", "(approver)")

	// Signing out ends the session on the board; a reload stays signed out.
	b.Do("sign out", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("email")))
	b.Until("signed out", signedOut)
	if got := b.Eval(`document.cookie`); strings.Contains(got, board.CSRFCookie) {
		t.Errorf("after sign-out: document.cookie = %q, want no %s", got, board.CSRFCookie)
	}
	// The page signs in again on a load only with a token or a session it
	// kept, by asking the board who it is: having asked the board nothing
	// once it has loaded, it will not sign in.
	b.RecordFetches()
	b.Do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("email")))
	b.Until("the page loaded", `() => document.readyState === "complete"`)
	if got := b.Fetched(); len(got) != 0 {
		t.Errorf("after sign-out and a reload, the page asked the board %v, want nothing", got)
	}
	if got := b.Eval(`document.getElementById("views").hidden && document.getElementById("who").textContent === "" ? "signed out" : "signed in"`); got != "signed out" {
		t.Errorf("after sign-out and a reload: %s, want signed out", got)
	}
}

// TestBrowserSessionApproves decides an approval through a cookie
// session: the page sends the CSRF header, and the board takes the signed-in
// person's role and email.
func TestBrowserSessionApproves(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	const email, password = "ada@example.com", "correct horse battery"
	addPerson(t, bt, email, "Ada", identity.RoleApprover, password)
	b := browsertest.New(t)
	signInWithPassword(t, b, bt, email, password)

	// An approval is decided through the cookie session.
	open(t, b, "approvals")
	id, digest := raise(t, payer, "run-1", "Pay order A-17?", map[string]any{"amount": 5000}, "")
	b.Until("the approval queued", queued, id)
	b.Do("approve", chromedp.Click(chromedp.CSS(`#queue li[data-approval="`+id+`"] button.approve`)))
	b.Until("decided or refused", `(id, state) => {
		const e = document.querySelector('#queue li[data-approval="' + id + '"] .card-error');
		return (e !== null && !e.hidden) || (`+inHistory+`)(id, state);
	}`, id, "approved")
	if got := b.Eval(card(id) + ` === null ? "" : ` + card(id) + `.querySelector(".card-error").textContent`); got != "" {
		t.Fatalf("the board refused the decision made through the session: %s", got)
	}
	d := waitDecision(t, decisions, id)
	if d.Say != "yes" || d.Digest != digest || strings.Join(d.Who, ",") != email {
		t.Errorf("decision = %+v, want say yes, digest %s, who %s", d, digest, email)
	}
	b.Until("gone from the queue", gone, id)
}

func TestBrowserPeople(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	addPerson(t, bt, "root@example.com", "Root", identity.RoleAdmin, "admin password 1")
	admin := browsertest.New(t)
	signInWithPassword(t, admin, bt, "root@example.com", "admin password 1")
	open(t, admin, "people")
	admin.Until("the admin listed", `() => document.querySelector('#people-rows tr[data-email="root@example.com"]') !== null`)

	// The admin adds Bea and is given her setup link.
	admin.Do("add bea",
		chromedp.SetValue(chromedp.ID("add-email"), "Bea@Example.com"),
		chromedp.SetValue(chromedp.ID("add-name"), "Bea"),
		chromedp.SetValue(chromedp.ID("add-role"), "approver"),
		chromedp.Click(chromedp.ID("add-button")),
		chromedp.WaitVisible(chromedp.ID("setup-link-box")),
	)
	link := admin.Eval(`document.getElementById("setup-link").value`)
	if !strings.HasPrefix(link, bt.URL+"/setup#token=") {
		t.Fatalf("setup link = %q, want %s/setup#token=…", link, bt.URL)
	}
	admin.Until("bea listed, without a password", `() => {
		const row = document.querySelector('#people-rows tr[data-email="bea@example.com"]');
		return row !== null && row.dataset.role === "approver" && row.textContent.includes("not set: the setup link was not used");
	}`)

	// Bea opens the link in a browser of her own, sets a password, and
	// signs in with it.
	bea := browsertest.New(t)
	bea.Do("open the setup link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("setup-form")))
	bea.Do("two different passwords",
		chromedp.SetValue(chromedp.ID("setup-name"), "Bea Beaumont"),
		chromedp.SetValue(chromedp.ID("setup-password"), "bea's own password"),
		chromedp.SetValue(chromedp.ID("setup-again"), "bea's other password"),
		chromedp.Click(chromedp.ID("setup-button")),
		chromedp.WaitVisible(chromedp.ID("setup-error")),
	)
	bea.Do("set the password",
		chromedp.SetValue(chromedp.ID("setup-again"), "bea's own password"),
		chromedp.Click(chromedp.ID("setup-button")),
		chromedp.WaitVisible(chromedp.ID("email")),
	)
	if got := bea.Eval(`document.getElementById("email").value + " | " + document.getElementById("sign-in-note").textContent + " | " + location.href`); got != "bea@example.com | Your password is set for bea@example.com. Sign in with it. | "+bt.URL+"/" {
		t.Errorf("after setup: %q, want the email filled in, a note, and the token gone from the address", got)
	}
	bea.Do("sign in",
		chromedp.SetValue(chromedp.ID("password"), "bea's own password"),
		chromedp.Click(chromedp.ID("password-button")),
	)
	bea.Until("bea signed in", `() => document.getElementById("who").textContent === "signed in as Bea Beaumont (approver)"`)
	if got := bea.Eval(`document.getElementById("tab-people").hidden ? "hidden" : "shown"`); got != "hidden" {
		t.Errorf("people tab for an approver: %s, want hidden", got)
	}

	// The admin makes her a viewer; the board says so.
	admin.Do("show the list again", chromedp.Click(chromedp.ID("tab-agents")))
	open(t, admin, "people")
	admin.Until("bea has a password", `() => {
		const row = document.querySelector('#people-rows tr[data-email="bea@example.com"]');
		return row !== null && row.cells[4].textContent === "set" && row.cells[1].textContent === "Bea Beaumont";
	}`)
	admin.Eval(`(() => {
		const sel = document.querySelector('#people-rows tr[data-email="bea@example.com"] select.role');
		sel.value = "viewer";
		sel.dispatchEvent(new Event("change"));
		return "changed";
	})()`)
	admin.Until("bea a viewer", `() => {
		const row = document.querySelector('#people-rows tr[data-email="bea@example.com"]');
		return row !== null && row.dataset.role === "viewer" && document.getElementById("people-status").textContent.includes("now viewer");
	}`)
	users, err := bt.Users(bt.OperatorToken("ops", identity.RoleAdmin)).ListUsers(t.Context(), &boardv1.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users.GetUsers() {
		if u.GetEmail() == "bea@example.com" && u.GetRole() != boardv1.Role_ROLE_VIEWER {
			t.Errorf("bea's role on the board = %s, want viewer", u.GetRole())
		}
	}

	// Disabling asks first, then ends her session.
	const beaRow = `#people-rows tr[data-email="bea@example.com"] `
	admin.Do("disable bea", chromedp.Click(chromedp.CSS(beaRow+"button.disable")), chromedp.WaitVisible(chromedp.CSS(beaRow+"button.confirm")))
	if got := admin.Eval(`document.querySelector('` + beaRow + `').dataset.disabled`); got != "false" {
		t.Errorf("before the confirmation: disabled = %s, want false", got)
	}
	admin.Do("confirm", chromedp.Click(chromedp.CSS(beaRow+"button.confirm")))
	admin.Until("bea disabled", `() => {
		const row = document.querySelector('#people-rows tr[data-email="bea@example.com"]');
		return row !== null && row.dataset.disabled === "true" &&
			document.getElementById("people-status").textContent.includes("1 session ended");
	}`)

	// Her page shows her signed out without her doing anything: the
	// approvals it watches were a stream of her session's, and the board
	// ends it with the session.
	bea.Until("bea signed out", signedOut)
	if got := bea.Eval(`document.getElementById("sign-in-error").textContent`); !strings.Contains(got, "Your session has ended") {
		t.Errorf("bea's page says %q, want that her session has ended", got)
	}
	typePassword(t, bea, "bea@example.com", "bea's own password")
	bea.Until("bea refused", `() => document.getElementById("sign-in-error").textContent === "Wrong email or password."`)

	// Enabling asks first too; then she signs in again.
	admin.Do("enable bea", chromedp.Click(chromedp.CSS(beaRow+"button.enable")), chromedp.WaitVisible(chromedp.CSS(beaRow+"button.confirm")))
	admin.Do("confirm", chromedp.Click(chromedp.CSS(beaRow+"button.confirm")))
	admin.Until("bea enabled", `() => {
		const row = document.querySelector('#people-rows tr[data-email="bea@example.com"]');
		return row !== null && row.dataset.disabled === "false" &&
			document.getElementById("people-status").textContent === "bea@example.com is enabled again.";
	}`)
	typePassword(t, bea, "bea@example.com", "bea's own password")
	bea.Until("bea signed in again", `() => document.getElementById("who").textContent === "signed in as Bea Beaumont (viewer)"`)

	// The door is chosen by its word, and the board keeps the door.
	admin.Do("choose verify",
		chromedp.SetValue(chromedp.ID("door"), "verify"),
		chromedp.Click(chromedp.ID("door-button")),
	)
	admin.UntilText("the door saved", "#door-status", "Agents are now told to use the door verify.")
	door, err := bt.Users(bt.OperatorToken("ops", identity.RoleAdmin)).GetIdentify(t.Context(), &boardv1.GetIdentifyRequest{})
	if err != nil || door.GetDoor() != boardv1.Door_DOOR_VERIFY {
		t.Errorf("GetIdentify() = %v, %v; want DOOR_VERIFY", door, err)
	}
	noEnumNames(t, admin, "people")
}

func TestBrowserPairingCode(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	addPerson(t, bt, "cy@example.com", "Cy", identity.RoleViewer, "cy's password!")
	paired := make(chan agentlink.Paired, 4)
	a := linkAgent(t, bt, agentlink.Config{
		Identity: agentlink.Identity{Name: "concierge"},
		OnPaired: func(p agentlink.Paired) { paired <- p },
	})
	code, _, err := a.link.Pair(t.Context(), "thread-7")
	if err != nil {
		t.Fatalf("Pair: %v", err)
	}
	typed := strings.ToLower(code[:4]) + "-" + strings.ToLower(code[4:])

	b := browsertest.New(t)
	signInWithPassword(t, b, bt, "cy@example.com", "cy's password!")
	open(t, b, "me")
	b.Until("who and the door shown", `() => {
		const f = (name) => (document.querySelector('#me-facts dd[data-fact="' + name + '"]') || {}).textContent;
		return f("email") === "cy@example.com" && f("role") === "viewer" && f("agents identify people by") === "pairing";
	}`)
	noEnumNames(t, b, "you")

	// A wrong code is refused, and says so.
	b.Do("a wrong code", chromedp.SetValue(chromedp.ID("pair-code"), "zzzz zzzz"), chromedp.Click(chromedp.ID("pair-button")))
	b.Until("the refusal shown", `() => {
		const e = document.getElementById("pair-error");
		return !e.hidden && e.textContent.includes("not accepted") && e.textContent.includes("invalid or expired code");
	}`)

	b.Do("the code, as typed", chromedp.SetValue(chromedp.ID("pair-code"), " "+typed+" "), chromedp.Click(chromedp.ID("pair-button")))
	b.Until("linked", `() => {
		const r = document.getElementById("pair-result");
		return !r.hidden && r.dataset.agent === "concierge" && r.dataset.thread === "thread-7" && document.getElementById("pair-error").hidden;
	}`)
	select {
	case p := <-paired:
		if p.Thread != "thread-7" || p.Who != "cy@example.com" || p.Name != "Cy" {
			t.Errorf("OnPaired(%+v), want thread-7, cy@example.com, Cy", p)
		}
	case <-time.After(browsertest.Ceiling):
		t.Fatalf("OnPaired: not called within %s", browsertest.Ceiling)
	}

	// The verify secret: too short is refused here; set, then removed.
	b.Do("a short secret",
		chromedp.SetValue(chromedp.ID("verify-secret"), "too short"),
		chromedp.SetValue(chromedp.ID("verify-again"), "too short"),
		chromedp.Click(chromedp.ID("verify-button")),
		chromedp.WaitVisible(chromedp.ID("verify-error")),
	)
	b.Do("a secret",
		chromedp.SetValue(chromedp.ID("verify-secret"), "a secret of mine"),
		chromedp.SetValue(chromedp.ID("verify-again"), "a secret of mine"),
		chromedp.Click(chromedp.ID("verify-button")),
	)
	const secretIs = `(state) => (document.querySelector('#me-facts dd[data-fact="verify secret"]') || {}).textContent === state`
	b.Until("the secret set", secretIs, "set")
	b.Do("remove it", chromedp.Click(chromedp.ID("verify-remove")))
	b.Until("the secret removed", secretIs, "not set")
}

func TestBrowserViewerCannotDecide(t *testing.T) {
	bt, payer, decisions := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	addPerson(t, bt, "vic@example.com", "Vic", identity.RoleViewer, "vic's password!")
	first, _ := raise(t, payer, "run-1", "Pay order A-17?", map[string]any{"amount": 5000}, "")
	second, digest := raise(t, payer, "run-2", "Pay order B-2?", map[string]any{"amount": 70}, "")

	b := browsertest.New(t)
	signInWithPassword(t, b, bt, "vic@example.com", "vic's password!")
	open(t, b, "approvals")
	b.Until("both queued", `(a, b) => document.querySelectorAll("#queue li").length === 2 &&
		document.querySelector('#queue li[data-approval="' + a + '"]') !== null &&
		document.querySelector('#queue li[data-approval="' + b + '"]') !== null`, first, second)
	if got := b.Eval(`String(Array.from(document.querySelectorAll("#queue button.approve, #queue button.reject")).filter((b) => !b.disabled).length)`); got != "0" {
		t.Errorf("enabled approve or reject buttons for a viewer: %s, want 0", got)
	}
	if got := b.Eval(`document.getElementById("approvals-readonly").hidden ? "hidden" : "shown"`); got != "shown" {
		t.Errorf("read-only notice: %s, want shown", got)
	}
	if got := b.Eval(`(document.getElementById("tab-people").hidden ? "" : "people ") + document.getElementById("who").textContent`); got != "signed in as Vic (viewer)" {
		t.Errorf("header = %q, want signed in as Vic (viewer), and no people tab", got)
	}
	b.Do("a by keyboard", chromedp.KeyEvent("a"))
	b.Until("refused on the page", `(id) => {
		const e = document.querySelector('#queue li[data-approval="' + id + '"] .card-error');
		return e !== null && !e.hidden && e.textContent.includes("may not decide");
	}`, first)
	approver := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("ann", identity.RoleApprover)))
	if res, err := approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: first}); err != nil || res.GetApproval().GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		t.Errorf("after the viewer's a: GetApproval(%s) = %v, %v; want pending", first, res, err)
	}
	// The board pushes decisions to the agent in the order it makes them:
	// had the viewer's page decided, that would reach the agent before
	// an approver's decision made now.
	if _, err := approver.Decide(t.Context(), &boardv1.DecideRequest{Id: second, Say: boardv1.Say_SAY_NO, Digest: digest}); err != nil {
		t.Fatalf("Decide(%s): %v", second, err)
	}
	select {
	case d := <-decisions:
		if d.ApprovalID != second {
			t.Errorf("the agent was first told %+v, want the approver's decision on %s: the viewer's page decided", d, second)
		}
	case <-time.After(browsertest.Ceiling):
		t.Fatalf("the approver's decision on %s: not received within %s", second, browsertest.Ceiling)
	}
}

// TestBrowserFirstRun creates the first admin through the first-run link,
// the one setup link that asks for an email.
func TestBrowserFirstRun(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{})
	link, ok, err := bt.Board.Users().FirstRun(t.Context())
	if err != nil || !ok {
		t.Fatalf("FirstRun() = %v, %v, want a link", ok, err)
	}
	b := browsertest.New(t)
	b.Do("create the first admin",
		chromedp.Navigate(bt.URL+link.Path()),
		chromedp.WaitVisible(chromedp.ID("setup-form")),
		chromedp.SetValue(chromedp.ID("setup-name"), "Grace"),
		chromedp.SetValue(chromedp.ID("setup-email"), "grace@example.com"),
		chromedp.SetValue(chromedp.ID("setup-password"), "the first admin"),
		chromedp.SetValue(chromedp.ID("setup-again"), "the first admin"),
		chromedp.Click(chromedp.ID("setup-button")),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SetValue(chromedp.ID("password"), "the first admin"),
		chromedp.Click(chromedp.ID("password-button")),
	)
	b.Until("signed in as the admin", `() => document.getElementById("who").textContent === "signed in as Grace (admin)" &&
		!document.getElementById("tab-people").hidden`)

	// The link worked once.
	b.Do("the link again", chromedp.Navigate(bt.URL+link.Path()), chromedp.WaitVisible(chromedp.ID("setup-form")))
	b.Do("set a password again",
		chromedp.SetValue(chromedp.ID("setup-email"), "eve@example.com"),
		chromedp.SetValue(chromedp.ID("setup-password"), "another password"),
		chromedp.SetValue(chromedp.ID("setup-again"), "another password"),
		chromedp.Click(chromedp.ID("setup-button")),
	)
	b.Until("refused", `() => {
		const e = document.getElementById("setup-error");
		return !e.hidden && e.textContent.includes("setup link not valid");
	}`)
}
