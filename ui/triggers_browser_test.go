package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

// triggerPausesNext is the next TriggerPauses the board sends.
func (l *rawLink) triggerPausesNext() []string {
	l.t.Helper()
	for {
		if p := l.next().GetTriggerPauses(); p != nil {
			return p.GetPaused()
		}
	}
}

// TestBrowserTriggers: an agent's page lists the triggers it reports —
// the schedule in words with its zone, the webhook's method and path, the
// next run or "cannot tell", the last occurrence with its outcome, run and
// delivery — as text; an admin pauses one, which asks why and reaches the
// agent, and resumes it; a viewer sees no buttons. A run a trigger started
// shows the trigger on top of its page and a marker in the runs list.
func TestBrowserTriggers(t *testing.T) {
	bt := linkBoard(t)
	desk := openRawLink(t, bt, "desk", "triggers", "runs", "live-runs")
	if got := desk.triggerPausesNext(); len(got) != 0 {
		t.Fatalf("after the welcome: %q paused, want none", got)
	}
	const markup = `<img src=x onerror="window.injected='yes'">`
	occurred := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	desk.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Triggers{Triggers: &boardv1.TriggerReport{Triggers: []*boardv1.Trigger{
		{Id: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, Schedule: "30 9 * * 1-5", TimeZone: "Europe/Paris",
			Description: "Every weekday at 09:30", NextRunTime: timestamppb.New(time.Now().Add(3 * time.Hour)),
			Last: &boardv1.TriggerOccurrence{Time: timestamppb.New(occurred), RunId: "r-night", Ok: true,
				Duration: durationpb.New(4 * time.Second), Delivery: boardv1.DeliveryState_DELIVERY_STATE_DELIVERED}},
		{Id: "never", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, Schedule: "0 0 30 2 *", TimeZone: "UTC", Description: "0 0 30 2 *"},
		{Id: "ticket", Kind: boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK, Method: "POST", Path: "/hooks/" + markup, Signed: true,
			Last: &boardv1.TriggerOccurrence{Time: timestamppb.New(occurred), RunId: "r-hook", Ok: false, Error: markup + " crm down",
				Delivery: boardv1.DeliveryState_DELIVERY_STATE_FAILED}},
	}}}})
	desk.settle()
	desk.runStart("r-night", occurred, &boardv1.RunStart{StartedBy: "trigger", Trigger: &boardv1.RunTrigger{
		TriggerId: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE, OccurrenceTime: timestamppb.New(occurred),
		Delivery: boardv1.DeliveryState_DELIVERY_STATE_PENDING}})
	desk.runSummary(&boardv1.Run{Id: "r-night", StartedBy: "trigger", State: runFinished, StartTime: timestamppb.New(occurred),
		EndTime: timestamppb.New(occurred.Add(4 * time.Second)), Duration: durationpb.New(4 * time.Second),
		Trigger: &boardv1.RunTrigger{TriggerId: "nightly-report", Kind: boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE,
			OccurrenceTime: timestamppb.New(occurred), Delivery: boardv1.DeliveryState_DELIVERY_STATE_DELIVERED, DeliveryAttempts: 1}}, 0)
	desk.runStart("r-chat", occurred.Add(time.Minute), &boardv1.RunStart{StartedBy: "chat"})

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("root", identity.RoleAdmin), "agents")
	openAgentPage(t, b, "desk")
	b.Until("three triggers", `() => Array.from(document.querySelectorAll("#trigger-rows tr")).map((r) => r.dataset.trigger).join(",") === "never,nightly-report,ticket"`)
	rowText := func(id string) string {
		return b.Eval(`document.querySelector('#trigger-rows tr[data-trigger="` + id + `"]').textContent`)
	}
	night := rowText("nightly-report")
	for _, want := range []string{"schedule", "Every weekday at 09:30 (Europe/Paris)", "ok", "r-night", "result delivered", "no"} {
		if !strings.Contains(night, want) {
			t.Errorf("nightly-report's row = %q, want %q in it", night, want)
		}
	}
	if got := b.Eval(`document.querySelector('#trigger-rows tr[data-trigger="nightly-report"] a.trigger-run').getAttribute("href")`); got != "#run/desk/r-night" {
		t.Errorf("the last occurrence's run link = %q", got)
	}
	if got := rowText("never"); !strings.Contains(got, "cannot tell") {
		t.Errorf("never's row = %q, want its next run as cannot tell", got)
	}
	hook := rowText("ticket")
	for _, want := range []string{"webhook", "POST /hooks/" + markup, "failed", "delivery failed", "crm down"} {
		if !strings.Contains(hook, want) {
			t.Errorf("ticket's row = %q, want %q in it", hook, want)
		}
	}
	if got := b.Eval(`document.querySelector("#triggers img") === null && window.injected === undefined ? "text" : "markup"`); got != "text" {
		t.Errorf("a path and an error with markup: drawn as %s, want text", got)
	}

	noEnumNames(t, b, "the agent's page")

	// Pause asks why; without a reason nothing is sent.
	b.RecordFetches()
	b.Click("Pause on ticket", `#trigger-rows tr[data-trigger="ticket"] button.pause-trigger`)
	b.Until("the reason asked for", `() => document.querySelector("#trigger-rows input.trigger-reason") !== null`)
	b.Click("Pause without a reason", `#trigger-rows .trigger-pause-form button[type="submit"]`)
	b.UntilText("a reason wanted", "#triggers-error", "Say why you pause ticket")
	for _, path := range b.Fetched() {
		if strings.HasSuffix(path, "/PauseTrigger") {
			t.Errorf("a pause without a reason sent %s", path)
		}
	}
	b.Do("give a reason", chromedp.SetValue(chromedp.CSS(`#trigger-rows input.trigger-reason`), "spam <b>flood</b>"))
	b.Click("Pause with a reason", `#trigger-rows .trigger-pause-form button[type="submit"]`)
	if got := desk.triggerPausesNext(); strings.Join(got, ",") != "ticket" {
		t.Fatalf("the link got %q paused, want ticket", got)
	}
	b.Until("ticket paused", `() => {
		const r = document.querySelector('#trigger-rows tr[data-trigger="ticket"]');
		return r !== null && r.dataset.paused === "true" && r.textContent.includes("paused by root: spam <b>flood</b>") &&
			r.querySelector("button.resume-trigger") !== null;
	}`)
	b.UntilText("told now", "#triggers-status", "the agent was told now")
	if got := b.Eval(`document.querySelector("#triggers b") === null ? "text" : "markup"`); got != "text" {
		t.Errorf("a reason with <b>: drawn as %s, want text", got)
	}
	b.Click("Resume ticket", `#trigger-rows tr[data-trigger="ticket"] button.resume-trigger`)
	if got := desk.triggerPausesNext(); len(got) != 0 {
		t.Fatalf("after resume the link got %q paused, want none", got)
	}
	b.Until("ticket running again", `() => {
		const r = document.querySelector('#trigger-rows tr[data-trigger="ticket"]');
		return r !== null && r.dataset.paused === "false" && r.querySelector("button.pause-trigger") !== null;
	}`)

	// The runs list marks the triggered run, and only it.
	b.Until("the trigger marker", `() => {
		const m = document.querySelector('#run-rows tr[data-run="r-night"] .trigger-marker');
		return m !== null && m.textContent === "trigger nightly-report" &&
			document.querySelector('#run-rows tr[data-run="r-chat"]') !== null &&
			document.querySelector('#run-rows tr[data-run="r-chat"] .trigger-marker') === null;
	}`)
	// The run's page has the trigger on top.
	b.Click("the triggered run", `#run-rows tr[data-run="r-night"] a.run-link`)
	b.Until("the trigger on top of the run", `() => {
		const p = document.getElementById("run-trigger");
		return p !== null && !p.hidden && p.textContent.startsWith("Started by trigger nightly-report (schedule) at ") &&
			p.textContent.includes("result delivered") &&
			(p.compareDocumentPosition(document.getElementById("run-facts")) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
	}`)
	noEnumNames(t, b, "the run's page")

	// A viewer sees the triggers, and no button.
	v := browsertest.New(t)
	signInTo(t, v, bt, bt.OperatorToken("vera", identity.RoleViewer), "agents")
	openAgentPage(t, v, "desk")
	v.Until("the triggers, without buttons", `() => document.querySelectorAll("#trigger-rows tr").length === 3 &&
		document.querySelector("#trigger-rows button") === null &&
		document.getElementById("triggers-note").textContent.includes("Only admins may pause or resume a trigger.")`)
}
