package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// chromium finds Chromium or Chrome, as the ui package's browser tests do.
// Without one the test is skipped, except in CI, where a missing browser
// is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium, chromium-browser or google-chrome on PATH; CI must have one (apt-get install chromium)")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH (outside CI): install one (apt-get install chromium) to run the browser test")
	return ""
}

// page is a tab in a headless Chromium of its own, for one test.
type page struct {
	t   *testing.T
	ctx context.Context
}

// newPage starts Chromium; everything the test does in it must end within
// limit.
func newPage(t *testing.T, limit time.Duration) *page {
	t.Helper()
	exe := chromium(t)
	parent, cancelAll := context.WithTimeout(t.Context(), limit)
	t.Cleanup(cancelAll)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	t.Cleanup(cancelAlloc) // waits for the browser to exit, before the TempDir goes
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	return &page{t: t, ctx: ctx}
}

// do runs steps, failing the test with what when one fails.
func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression whose value is a string.
func (p *page) eval(expr string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return s
}

// within waits until predicate, a JavaScript function of args, returns true.
func (p *page) within(d time.Duration, what, predicate string, args ...any) {
	p.t.Helper()
	_, err := chromedp.Run(p.ctx, chromedp.PollFunction[bool](predicate,
		chromedp.WithPollingInterval(20*time.Millisecond),
		chromedp.WithPollingTimeout(d),
		chromedp.WithPollingArgs(args...)))
	if errors.Is(err, chromedp.ErrPollingTimeout) {
		p.t.Fatalf("%s: not within %s", what, d)
	}
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// TestBrowserApprovesRefundDesk: the refund desk, served and governed by a
// board process, waits at its refund; an approver signs in to the web board
// the board process serves, with a token minted on the command line, sees
// the refund in the queue and approves it with a reason by click; the
// agent's run goes on by itself and the orders server makes the refund.
func TestBrowserApprovesRefundDesk(t *testing.T) {
	t.Parallel()
	g := startGovernance(t)
	desk := governedDesk(t)
	agent, api := g.serveDesk(t, desk)
	thread := threadName(t)
	turn := askForRefund(t, api, thread, g.rule)
	id := g.approvalOf(t, thread).GetId()

	b := newPage(t, 25*time.Second)
	b.do("sign in and open the approvals",
		chromedp.Navigate(g.url),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), g.operatorToken(t, "grace", "approver")),
		chromedp.Click(chromedp.ID("sign-in-button")),
		chromedp.WaitVisible(chromedp.ID("tab-approvals")),
		chromedp.Click(chromedp.ID("tab-approvals")),
		chromedp.WaitVisible(chromedp.ID("approvals")),
	)
	card := `#queue li[data-approval="` + id + `"]`
	b.within(5*time.Second, "the refund queued", `(sel) => document.querySelector(sel) !== null`, card)
	text := b.eval(`document.querySelector(` + jsQuote(card) + `).textContent`)
	for _, want := range []string{"refund-desk", "pay", "Refund 49.9 EUR on order A-1001 to Ada Lovelace?", "Ada Lovelace", "49.9", "approver"} {
		if !strings.Contains(text, want) {
			t.Errorf("card = %q, want it to contain %q", text, want)
		}
	}
	if refunds := refundsMade(t, desk); len(refunds) != 0 {
		t.Fatalf("refunds made before the approval = %v, want none", refunds)
	}

	const reason = "the customer sent a photo of the broken mug"
	b.do("approve with a reason",
		chromedp.SetValue(chromedp.CSS(card+" textarea.reason"), reason),
		chromedp.Click(chromedp.CSS(card+" button.approve")),
	)
	agent.waitLine(t, regexp.MustCompile(`^thread `+regexp.QuoteMeta(thread)+`: the board decided; the run finished$`), 10*time.Second)
	b.within(5*time.Second, "the refund approved, in the history", `(id) => {
		const row = document.querySelector('#history-rows tr[data-approval="' + id + '"]');
		return row !== null && row.dataset.state === "approved";
	}`, id)

	checkFinishedByTheBoard(t, api, thread)
	checkRefundedOnce(t, desk)
	got, err := g.approver.GetApproval(t.Context(), &boardv1.GetApprovalRequest{Id: id})
	d := got.GetApproval().GetDecision()
	if err != nil || got.GetApproval().GetState() != "approved" || d.GetSay() != "yes" || d.GetReason() != reason ||
		strings.Join(d.GetWho(), ",") != "grace" || d.GetDigest() != turn.Pending.Digest {
		t.Errorf("approval = %v, %v; want approved by grace with the reason, for digest %s", got, err, turn.Pending.Digest)
	}
}

// jsQuote quotes s as a JavaScript string literal.
func jsQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
