package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// recordNotifications has the page keep each Notification it makes in
// window.notified, still showing it through the browser's own.
const recordNotifications = `(() => {
	const Real = window.Notification;
	if (typeof Real !== "function") return;
	window.notified = [];
	const Recording = function (title, options) {
		const n = new Real(title, options);
		window.notified.push({ title, body: options && options.body, tag: options && options.tag, n });
		return n;
	};
	Object.defineProperty(Recording, "permission", { get: () => Real.permission });
	Recording.requestPermission = (...args) => Real.requestPermission(...args);
	window.Notification = Recording;
})();`

// TestBrowserNotifications: an approver who opts in is told by the
// browser of each approval raised that they can decide, once each, and the
// notification opens that approval's page; a viewer is not offered it.
func TestBrowserNotifications(t *testing.T) {
	bt, payer, _ := approvalBoard(t, `{"rule":{"agent":"*","node":"*","role":"ROLE_APPROVER","quorum":1}}`)
	b := browsertest.New(t)
	b.OnEveryPage(recordNotifications)
	b.Grant(bt.URL, "notifications")
	signInToApprovals(t, b, bt, bt.OperatorToken("ann", identity.RoleApprover))
	b.Until("the opt-in offered", `() => !document.getElementById("notify-box").hidden && !document.getElementById("notify-toggle").disabled`)
	raise(t, payer, "run-0", "Before opting in?", map[string]any{"n": 0}, "")
	b.Until("the first queued", `() => document.querySelectorAll("#queue li[data-approval]").length === 1`)
	b.Click("opt in", "#notify-toggle")
	b.UntilText("on", "#notify-status", "On:")
	if got := b.Eval(`String(localStorage.getItem("symphonix.notify"))`); got != "on" {
		t.Errorf("the choice kept as %q, want on", got)
	}

	id, _ := raise(t, payer, "run-1", "Refund order 77?", map[string]any{"order": "77"}, "")
	b.Until("a notification of it", `(id) => window.notified.length === 1 && window.notified[0].title === "Approval waits: Refund order 77?" &&
		window.notified[0].body.startsWith("Agent payer, node pay") && window.notified[0].tag === "symphonix-approval-" + id`, id)
	b.Eval(`window.notified[0].n.onclick(); "clicked"`)
	b.Until("its page opened", `(id) => location.hash === "#approval/" + id && !document.getElementById("approval-page").hidden`, id)

	b.Click("opt out", "#notify-toggle")
	raise(t, payer, "run-2", "Not told?", map[string]any{"n": 2}, "")
	b.Until("the third queued", `() => document.querySelectorAll("#queue li[data-approval]").length === 3`)
	if got := b.Eval(`String(window.notified.length)`); got != "1" {
		t.Errorf("%s notifications after opting out, want still 1", got)
	}

	v := browsertest.New(t)
	signInToApprovals(t, v, bt, bt.OperatorToken("vera", identity.RoleViewer))
	v.Do("wait for the view", chromedp.WaitVisible(chromedp.ID("approvals")))
	if got := v.Eval(`String(document.getElementById("notify-box").hidden)`); got != "true" {
		t.Errorf("a viewer is offered notifications (hidden = %s)", got)
	}
}
