package ui_test

import (
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/chromedp/chromedp"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// TestBrowserForgetAgent: an admin forgets an offline agent from its page,
// giving a reason; the page goes back to the agents, whose list no longer
// has it, and the board does not know it any more. An online agent's page
// offers no such thing, nor does a viewer's.
func TestBrowserForgetAgent(t *testing.T) {
	bt := boardtest.Start(t, boardtest.Options{
		OfflineGrace: -1, ForgetAfter: time.Millisecond, PingInterval: 10 * time.Minute,
		Limits: board.Limits{HealthEvery: time.Nanosecond},
	})
	old := openRawLink(t, bt, "old-desk")
	old.settle()
	live := openRawLink(t, bt, "live-desk")
	live.settle()
	_ = old.s.CloseSend()
	admin := bt.Agents(bt.OperatorToken("ops", identity.RoleAdmin))
	boardtest.Eventually(t, time.Minute, "old-desk offline", func() bool {
		res, err := admin.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "old-desk"})
		return err == nil && res.GetAgent().GetState() == boardv1.AgentState_AGENT_STATE_OFFLINE
	})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vera", identity.RoleViewer), "agents")
	openAgentPage(t, b, "old-desk")
	if got := b.Eval(`document.getElementById("forget").hidden + ""`); got != "true" {
		t.Errorf("a viewer sees the forget form (hidden = %s)", got)
	}

	a := browsertest.New(t)
	signInTo(t, a, bt, bt.OperatorToken("ops", identity.RoleAdmin), "agents")
	openAgentPage(t, a, "live-desk")
	if got := a.Eval(`document.getElementById("forget").hidden + ""`); got != "true" {
		t.Errorf("an online agent's page offers to forget it (hidden = %s)", got)
	}
	a.Click("the agents tab", "#tab-agents")
	openAgentPage(t, a, "old-desk")
	a.Until("the forget form", `() => !document.getElementById("forget").hidden`)
	a.Click("forget without a reason", "#forget-button")
	a.Until("the reason asked for", `() => document.getElementById("forget-reason").getAttribute("aria-invalid") === "true" &&
		!document.getElementById("forget-error").hidden`)
	a.Do("type a reason", chromedp.SetValue(chromedp.ID("forget-reason"), "the old desk is retired"))
	a.Click("forget", "#forget-button")
	a.Until("back on the agents, without old-desk", `() => location.hash === "#agents" &&
		document.querySelector('tr[data-agent="live-desk"]') !== null && document.querySelector('tr[data-agent="old-desk"]') === null`)
	if _, err := admin.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "old-desk"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("GetAgent after forgetting: %v, want not_found", err)
	}
	// The viewer's list, live, drops it too.
	b.Click("the agents tab", "#tab-agents")
	b.Until("the viewer's list without old-desk", `() => document.querySelector('tr[data-agent="live-desk"]') !== null &&
		document.querySelector('tr[data-agent="old-desk"]') === null`)
}
