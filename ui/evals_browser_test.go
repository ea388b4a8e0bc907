package ui_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/browsertest"
)

func buildOf(word string) string {
	s := sha256.Sum256([]byte(word))
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestBrowserEvals: an agent's page shows its eval suites: the builds
// newest first, with score, passed, when and where each score came from,
// the build the agent runs now marked, and a deployed build that scored
// worse than an earlier one flagged in words; a score published with the
// agent's token is shown as published. Everything the agent sent is shown
// as text. An agent with no scores shows no Evals section.
func TestBrowserEvals(t *testing.T) {
	bt := linkBoard(t)
	older, deployed, next := buildOf("older"), buildOf("deployed"), buildOf("next")
	desk := openRawHello(t, bt, &boardv1.Hello{Name: "desk", Build: deployed, Capabilities: []string{"evals"}})
	const suite = `<img src=x onerror="window.injected='yes'">.eval.json`
	day := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	desk.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Evals{Evals: &boardv1.EvalReport{Suites: []*boardv1.EvalSuiteScores{{
		Suite: suite, Builds: []*boardv1.EvalScore{
			{Build: older, ScoreTime: timestamppb.New(day), Score: 0.81, Passed: true, Cases: 10, Completed: 10, Scored: 10, Times: 1},
			{Build: deployed, ScoreTime: timestamppb.New(day.Add(time.Hour)), Score: 0.62, Passed: true, Cases: 10, Completed: 10, Scored: 9, Times: 1},
		}}}}}})
	desk.settle()
	res, err := boardv1connect.NewEvalServiceClient(bt.Client(bt.AgentToken("desk"))).PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{
		Suite: suite, Score: &boardv1.EvalScore{Build: next, ScoreTime: timestamppb.New(day.Add(2 * time.Hour)), Score: 0.9, Passed: true, Cases: 10, Completed: 10, Scored: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.GetSuite().GetBuilds()); n != 3 {
		t.Fatalf("after the publish the suite holds %d builds, want 3", n)
	}
	other := openRawLink(t, bt, "quiet", "evals")
	other.settle()

	b := browsertest.New(t)
	signInTo(t, b, bt, bt.OperatorToken("vera", identity.RoleViewer), "agents")
	openAgentPage(t, b, "desk")
	b.Until("three builds, newest first", `(want) => Array.from(document.querySelectorAll("#eval-suites tr.eval-build")).map((r) => r.dataset.build).join(",") === want`,
		strings.Join([]string{next, deployed, older}, ","))
	rowText := func(build string) string {
		return b.Eval(`document.querySelector('#eval-suites tr[data-build="` + build + `"]').textContent`)
	}
	d := rowText(deployed)
	for _, want := range []string{deployed[7:19], "deployed", "0.62", "passed", "9 of 10", "reported"} {
		if !strings.Contains(d, want) {
			t.Errorf("the deployed build's row = %q, want %q in it", d, want)
		}
	}
	if got := b.Eval(`document.querySelectorAll('#eval-suites tr[data-deployed="true"]').length + ""`); got != "1" {
		t.Errorf("%s builds marked deployed, want 1", got)
	}
	if p := rowText(next); !strings.Contains(p, "published") || !strings.Contains(p, "0.90") || strings.Contains(p, "deployed") {
		t.Errorf("the published build's row = %q, want published, 0.90, not deployed", p)
	}
	flag := b.Eval(`document.querySelector('#eval-suites li.eval-flag[data-flag="regressed"]').textContent`)
	want := "regressed the deployed build " + deployed[7:19] + " scored 0.62 on " + day.Add(time.Hour).Format(time.DateOnly) +
		", below the 0.81 of " + older[7:19] + " scored " + day.Format(time.DateOnly)
	if flag != want {
		t.Errorf("the flag = %q, want %q", flag, want)
	}
	if got := b.Eval(`document.querySelector("#eval-suites .eval-suite-name").textContent`); got != suite {
		t.Errorf("the suite's name = %q, want %q", got, suite)
	}
	if got := b.Eval(`document.querySelector("#evals img") === null && window.injected === undefined ? "text" : "markup"`); got != "text" {
		t.Errorf("a suite name with markup: drawn as %s, want text", got)
	}
	noEnumNames(t, b, "the agent's page")

	// An agent with no scores: no Evals section.
	b.Click("the agents tab", "#tab-agents")
	openAgentPage(t, b, "quiet")
	b.Until("quiet's page without evals", `() => document.getElementById("evals").hidden && document.querySelectorAll("#eval-suites tr").length === 0`)
}
