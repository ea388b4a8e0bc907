package ui_test

import (
	"bytes"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/symphonix/symphonix/agentlink"
	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

var actionLink = regexp.MustCompile(`http://\S+/#act/[A-Za-z0-9_-]+`)

// emailedLink waits for the board's email to person and returns the action
// link it carries.
func emailedLink(t *testing.T, srv *boardtest.SMTPServer, person string) string {
	t.Helper()
	var link string
	boardtest.Eventually(t, browsertest.Ceiling, "an email to "+person, func() bool {
		for _, m := range srv.Messages() {
			if len(m.To) != 1 || m.To[0] != person {
				continue
			}
			msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
			if err != nil {
				t.Fatal(err)
			}
			link = actionLink.FindString(string(body))
			if link == "" {
				t.Fatalf("no action link in the email to %s:\n%s", person, body)
			}
			return true
		}
		return false
	})
	return link
}

// TestBrowserActionLink: the link an approver is emailed opens the board,
// which asks them to sign in, shows the approval and decides nothing until
// they choose and confirm; the agent then has the decision. The link works
// once, and only for them.
func TestBrowserActionLink(t *testing.T) {
	srv := boardtest.StartSMTP(t)
	bt := boardtest.Start(t, boardtest.Options{NotifySMTP: srv.URL("", ""), NotifyFrom: "board@example.com"})
	var rule boardv1.PutRuleRequest
	if err := protojson.Unmarshal([]byte(`{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`), &rule); err != nil {
		t.Fatal(err)
	}
	if _, err := boardv1connect.NewApprovalServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin))).PutRule(t.Context(), &rule); err != nil {
		t.Fatal(err)
	}
	const password = "a long enough password"
	bt.AddUser("ann@example.com", identity.RoleApprover, password)
	bt.AddUser("bob@example.com", identity.RoleApprover, password)
	decisions := make(chan agentlink.Decision, 4)
	payer := linkAgent(t, bt, agentlink.Config{
		Identity:   agentlink.Identity{Name: "payer"},
		OnDecision: func(d agentlink.Decision) { decisions <- d },
	})
	id, _ := raise(t, payer, "run-1", "Refund order 1042?", map[string]any{"order": "1042", "amount": 5000}, "The parcel arrived broken.")
	link := emailedLink(t, srv, "ann@example.com")

	b := browsertest.New(t)
	b.Do("open ann's link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("email")))
	typePassword(t, b, "ann@example.com", password)
	b.Until("the approval the link is for", `(id) => !document.getElementById("act").hidden &&
		document.getElementById("act-ask").textContent === "Refund order 1042?" &&
		document.querySelector('#act-facts dd[data-fact="agent"]').textContent === "payer" &&
		document.querySelector("#act-shown .show") !== null && !document.getElementById("act-card").hidden`, id)
	for _, v := range browsertest.Serious(b.Axe()) {
		t.Errorf("the action link's page: %s", v)
	}
	b.Click("approve", "#act-approve")
	b.Until("a confirmation asked, nothing decided", `() => !document.getElementById("act-confirm").hidden &&
		document.getElementById("act-confirm-text").textContent.startsWith("Approve")`)
	select {
	case d := <-decisions:
		t.Fatalf("decided before the confirmation: %v", d)
	default:
	}
	b.Click("confirm", "#act-confirm-button")
	b.UntilText("approved", "#act-status", "Approved.")
	if d := waitDecision(t, decisions, id); d.Say != "yes" {
		t.Fatalf("the agent's decision: %+v, want yes", d)
	}
	if got := b.Eval(`location.hash`); got != "#approval/"+id {
		t.Errorf("the address after deciding: %q, want the approval's", got)
	}

	// Used: opening it again says so.
	b.Do("open the link again", chromedp.Navigate(link))
	b.UntilText("used already", "#act-error", "used already")

	// Bob, signed in, cannot use Ann's link.
	c := browsertest.New(t)
	c.Do("bob opens ann's link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("email")))
	typePassword(t, c, "bob@example.com", password)
	c.UntilText("not his", "#act-error", "not yours")
	if got := c.Eval(`document.getElementById("act-card").hidden + ""`); got != "true" {
		t.Errorf("bob is shown the approval through ann's link (card hidden = %s)", got)
	}
}
