package board_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// evalBuild is a build hash made from a word, so each test's builds differ.
func evalBuild(word string) string {
	s := sha256.Sum256([]byte(word))
	return "sha256:" + hex.EncodeToString(s[:])
}

// short is how the board's reasons name a build.
func short(build string) string { return build[7:19] }

// evalDay is a time on a day of the past, at hour.
func evalDay(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }

func evalScore(build string, at time.Time, score float64, passed bool) *boardv1.EvalScore {
	return &boardv1.EvalScore{Build: build, ScoreTime: timestamppb.New(at), Score: score, Passed: passed,
		Cases: 10, Completed: 9, Scored: 8, Times: 1, Criteria: map[string]float64{"helpful": score, "polite": 1}}
}

func withThreshold(s *boardv1.EvalScore, th float64) *boardv1.EvalScore {
	s.Threshold = proto.Float64(th)
	return s
}

func evalReport(suites ...*boardv1.EvalSuiteScores) *boardv1.LinkRequest {
	return &boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Evals{Evals: &boardv1.EvalReport{Suites: suites}}}
}

func evalSuite(name string, builds ...*boardv1.EvalScore) *boardv1.EvalSuiteScores {
	return &boardv1.EvalSuiteScores{Suite: name, Builds: builds}
}

// evalsLink opens a link for name, running build, announcing evals.
func evalsLink(t *testing.T, bt *boardtest.Board, name, build string) *rawLink {
	t.Helper()
	l, _ := openLinkWith(t, bt, &boardv1.Hello{Name: name, Protocol: board.Protocol, Build: build, Capabilities: []string{"evals"}})
	return l
}

func evalsClient(bt *boardtest.Board, token string) boardv1connect.EvalServiceClient {
	return boardv1connect.NewEvalServiceClient(bt.Client(token))
}

func listEvals(t *testing.T, c boardv1connect.EvalServiceClient, agentName string) []*boardv1.AgentEvalSuite {
	t.Helper()
	res, err := c.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{Agent: agentName})
	if err != nil {
		t.Fatalf("ListEvalScores(%q): %v", agentName, err)
	}
	return res.GetSuites()
}

// buildsOf is a suite's builds as "<12 hex> <score>[ deployed]", newest
// first.
func buildsOf(s *boardv1.AgentEvalSuite) []string {
	var out []string
	for _, b := range s.GetBuilds() {
		w := fmt.Sprintf("%s %.2f", short(b.GetBuild()), b.GetScore())
		if b.GetDeployed() {
			w += " deployed"
		}
		out = append(out, w)
	}
	return out
}

// TestEvalReportKept: a report is kept per build and listed newest first,
// with the build the agent runs marked, where each score came from, and
// the flags of a deployed build that scored worse; a later report without
// a build keeps it, and an older score of a build never replaces a newer.
func TestEvalReportKept(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	old, now := evalBuild("kept-old"), evalBuild("kept-now")
	l := evalsLink(t, bt, "desk", now)
	l.send(evalReport(evalSuite("refund.eval.json",
		evalScore(old, evalDay(28, 9), 0.81, true),
		withThreshold(evalScore(now, evalDay(30, 9), 0.62, true), 0.7))))
	l.ping(1)
	got := listEvals(t, viewer, "desk")
	if len(got) != 1 {
		t.Fatalf("listed %v, want one suite", got)
	}
	s := got[0]
	if s.GetAgent() != "desk" || s.GetSuite() != "refund.eval.json" || s.GetDeployedBuild() != now {
		t.Errorf("suite = %s/%s deployed %s, want desk/refund.eval.json deployed %s", s.GetAgent(), s.GetSuite(), s.GetDeployedBuild(), now)
	}
	if diff := cmp.Diff([]string{short(now) + " 0.62 deployed", short(old) + " 0.81"}, buildsOf(s)); diff != "" {
		t.Errorf("builds (-want +got):\n%s", diff)
	}
	b := s.GetBuilds()[0]
	if b.GetSource() != boardv1.EvalSource_EVAL_SOURCE_REPORTED || b.GetCases() != 10 || b.GetCompleted() != 9 || b.GetScored() != 8 ||
		b.GetTimes() != 1 || b.GetCriteria()["helpful"] != 0.62 || b.GetThreshold() != 0.7 || !b.GetScoreTime().AsTime().Equal(evalDay(30, 9)) {
		t.Errorf("the deployed build as kept: %v", b)
	}
	if s.GetBuilds()[1].Threshold != nil {
		t.Errorf("the old build's threshold = %v, want none", s.GetBuilds()[1].GetThreshold())
	}
	wantFlags := []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_REGRESSED, boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD}
	if !slices.Equal(s.GetFlags(), wantFlags) {
		t.Errorf("flags = %v, want %v", s.GetFlags(), wantFlags)
	}

	// A later report holds the deployed build alone, scored again: the
	// old build stays; then an older score of it changes nothing.
	clock.add(5 * time.Second)
	l.send(evalReport(evalSuite("refund.eval.json", withThreshold(evalScore(now, evalDay(30, 12), 0.9, true), 0.7))))
	l.ping(2)
	clock.add(5 * time.Second)
	l.send(evalReport(evalSuite("refund.eval.json", evalScore(now, evalDay(29, 12), 0.1, false))))
	l.ping(3)
	s = listEvals(t, viewer, "desk")[0]
	if diff := cmp.Diff([]string{short(now) + " 0.90 deployed", short(old) + " 0.81"}, buildsOf(s)); diff != "" {
		t.Errorf("after later reports, builds (-want +got):\n%s", diff)
	}
	if len(s.GetFlags()) != 0 || len(s.GetReasons()) != 0 {
		t.Errorf("flags = %v %q, want none: the deployed build scored best and passed", s.GetFlags(), s.GetReasons())
	}
}

// TestEvalFlags: the flags and their words, for each way a deployed build
// stands against the others.
func TestEvalFlags(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	a, b, c := evalBuild("flags-a"), evalBuild("flags-b"), evalBuild("flags-c")
	cases := []struct {
		name     string
		deployed string
		builds   []*boardv1.EvalScore
		flags    []boardv1.EvalFlag
		reasons  []string
	}{
		{
			name: "regressed", deployed: c,
			builds: []*boardv1.EvalScore{evalScore(a, evalDay(20, 9), 0.81, true), evalScore(b, evalDay(21, 9), 0.75, true), evalScore(c, evalDay(22, 9), 0.62, true)},
			flags:  []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_REGRESSED},
			reasons: []string{fmt.Sprintf("the deployed build %s scored 0.62 on 2026-11-22, below the 0.81 of %s scored 2026-11-20",
				short(c), short(a))},
		},
		{
			name: "below its threshold", deployed: b,
			builds: []*boardv1.EvalScore{evalScore(a, evalDay(20, 9), 0.5, true), withThreshold(evalScore(b, evalDay(21, 9), 0.6, false), 0.7)},
			flags:  []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD},
			reasons: []string{fmt.Sprintf("the deployed build %s scored 0.60 on 2026-11-21, below the suite's threshold of 0.70",
				short(b))},
		},
		{
			name: "did not pass", deployed: a,
			builds: []*boardv1.EvalScore{evalScore(a, evalDay(20, 9), 0.9, false)},
			flags:  []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD},
			reasons: []string{fmt.Sprintf("the deployed build %s did not meet the suite's thresholds on 2026-11-20 (scored 0.90, 8 of 10 cases scored)",
				short(a))},
		},
		{
			name: "not scored", deployed: c,
			builds: []*boardv1.EvalScore{evalScore(a, evalDay(20, 9), 0.9, true), evalScore(b, evalDay(21, 9), 0.7, true)},
			flags:  []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_NOT_SCORED},
			reasons: []string{fmt.Sprintf("the deployed build %s has no score in this suite; the newest scored is %s, 0.70 on 2026-11-21",
				short(c), short(b))},
		},
		{
			// A build scored later and higher is no regression of the
			// deployed one; nor is an equal score before it.
			name: "none", deployed: b,
			builds: []*boardv1.EvalScore{evalScore(a, evalDay(20, 9), 0.7, true), evalScore(b, evalDay(21, 9), 0.7, true), evalScore(c, evalDay(22, 9), 0.95, true)},
		},
	}
	for i, tc := range cases {
		name := fmt.Sprintf("flags-%d", i)
		l := evalsLink(t, bt, name, tc.deployed)
		l.send(evalReport(evalSuite("support.eval.json", tc.builds...)))
		l.ping(1)
		got := listEvals(t, viewer, name)
		if len(got) != 1 {
			t.Fatalf("%s: listed %v, want one suite", tc.name, got)
		}
		if !slices.Equal(got[0].GetFlags(), tc.flags) {
			t.Errorf("%s: flags = %v, want %v", tc.name, got[0].GetFlags(), tc.flags)
		}
		if diff := cmp.Diff(tc.reasons, got[0].GetReasons()); diff != "" {
			t.Errorf("%s: reasons (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestEvalReportRefused: a report out of bounds or with a bad field is
// refused in a LinkError naming the field, nothing of it is kept, and the
// link stays up; an agent that did not announce evals is refused too.
func TestEvalReportRefused(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	l := evalsLink(t, bt, "desk", evalBuild("refused"))
	ok := func() *boardv1.EvalScore { return evalScore(evalBuild("refused"), evalDay(20, 9), 0.5, true) }
	with := func(f func(s *boardv1.EvalScore)) *boardv1.LinkRequest {
		s := ok()
		f(s)
		return evalReport(evalSuite("a.eval.json", s))
	}
	var tooManySuites, tooManyBuilds []*boardv1.EvalSuiteScores
	for i := range 17 {
		tooManySuites = append(tooManySuites, evalSuite(fmt.Sprintf("s%d.eval.json", i), ok()))
	}
	var builds []*boardv1.EvalScore
	for i := range 21 {
		builds = append(builds, evalScore(evalBuild(fmt.Sprint(i)), evalDay(20, 9), 0.5, true))
	}
	tooManyBuilds = append(tooManyBuilds, evalSuite("a.eval.json", builds...))
	criteria := map[string]float64{}
	for i := range 33 {
		criteria[fmt.Sprint("c", i)] = 0.5
	}
	cases := []struct {
		name string
		r    *boardv1.LinkRequest
		says string
	}{
		{"17 suites", evalReport(tooManySuites...), "evals.suites: 17, at most 16"},
		{"21 builds", evalReport(tooManyBuilds...), "evals.suites[0].builds: 21, at most 20"},
		{"no suite name", evalReport(evalSuite("", ok())), "evals.suites[0].suite: required"},
		{"a suite not an eval file", evalReport(evalSuite("a.json", ok())), "evals.suites[0].suite: \"a.json\": want a name ending in \".eval.json\""},
		{"a suite with a slash", evalReport(evalSuite("x/a.eval.json", ok())), "evals.suites[0].suite: \"x/a.eval.json\": a file name, without a slash"},
		{"a suite too long", evalReport(evalSuite(strings.Repeat("a", 120)+".eval.json", ok())), "evals.suites[0].suite: 130 bytes, at most 128"},
		{"a suite twice", evalReport(evalSuite("a.eval.json", ok()), evalSuite("a.eval.json", ok())), "evals.suites[1].suite: \"a.eval.json\" twice"},
		{"a build twice", evalReport(evalSuite("a.eval.json", ok(), ok())), "evals.suites[0].builds[1].build: "},
		{"an upper-case build", with(func(s *boardv1.EvalScore) { s.Build = strings.ToUpper(s.Build) }), "evals.suites[0].builds[0].build: "},
		{"a build without sha256:", with(func(s *boardv1.EvalScore) { s.Build = s.Build[7:] }), "evals.suites[0].builds[0].build: "},
		{"no score time", with(func(s *boardv1.EvalScore) { s.ScoreTime = nil }), "evals.suites[0].builds[0].score_time: required"},
		{"a score above 1", with(func(s *boardv1.EvalScore) { s.Score = 1.5 }), "evals.suites[0].builds[0].score: 1.5, want 0 to 1"},
		{"a negative score", with(func(s *boardv1.EvalScore) { s.Score = -0.1 }), "evals.suites[0].builds[0].score: "},
		{"negative cases", with(func(s *boardv1.EvalScore) { s.Cases, s.Completed, s.Scored = -1, 0, 0 }), "evals.suites[0].builds[0].cases: -1, want 0 or more"},
		{"completed beyond cases", with(func(s *boardv1.EvalScore) { s.Completed = 11 }), "evals.suites[0].builds[0].completed: 11, want 0 to cases (10)"},
		{"scored beyond completed", with(func(s *boardv1.EvalScore) { s.Scored = 10 }), "evals.suites[0].builds[0].scored: 10, want 0 to completed (9)"},
		{"times 0", with(func(s *boardv1.EvalScore) { s.Times = 0 }), "evals.suites[0].builds[0].times: 0, want 1 or more"},
		{"33 criteria", with(func(s *boardv1.EvalScore) { s.Criteria = criteria }), "evals.suites[0].builds[0].criteria: 33, at most 32"},
		{"a criterion above 1", with(func(s *boardv1.EvalScore) { s.Criteria = map[string]float64{"tone": 2} }), "evals.suites[0].builds[0].criteria[\"tone\"]: 2, want 0 to 1"},
		{"a criterion unnamed", with(func(s *boardv1.EvalScore) { s.Criteria = map[string]float64{"": 1} }), "evals.suites[0].builds[0].criteria: name \"\": required"},
		{"a criterion's name too long", with(func(s *boardv1.EvalScore) { s.Criteria = map[string]float64{strings.Repeat("c", 65): 1} }), "evals.suites[0].builds[0].criteria: name"},
		{"a threshold above 1", with(func(s *boardv1.EvalScore) { s.Threshold = proto.Float64(1.01) }), "evals.suites[0].builds[0].threshold: 1.01, want 0 to 1"},
	}
	for i, tc := range cases {
		clock.add(6 * time.Second) // past the spacing
		l.send(tc.r)
		m := l.next()
		if e := m.GetError(); e.GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_INVALID_ARGUMENT || e.GetRequestId() != "" ||
			!strings.HasPrefix(e.GetMessage(), tc.says) {
			t.Errorf("%s: %v, want invalid_argument saying %q", tc.name, m, tc.says)
		}
		l.ping(uint64(i + 1)) // the link is up
	}
	if got := listEvals(t, viewer, "desk"); len(got) != 0 {
		t.Errorf("after refusals: %v, want nothing kept", got)
	}

	plain, _ := openLinkWith(t, bt, &boardv1.Hello{Name: "plain", Protocol: board.Protocol, Capabilities: []string{"runs"}})
	plain.send(evalReport(evalSuite("a.eval.json", ok())))
	if m := plain.next(); m.GetError().GetCode() != boardv1.LinkErrorCode_LINK_ERROR_CODE_FAILED_PRECONDITION ||
		!strings.Contains(m.GetError().GetMessage(), "evals capability") {
		t.Errorf("from an agent without evals: %v, want failed_precondition", m)
	}
	plain.ping(1)
	if got := listEvals(t, viewer, "plain"); len(got) != 0 {
		t.Errorf("from an agent without evals: %v kept, want nothing", got)
	}
}

// TestEvalReportRate: a report within 5 s of the link's last, kept or
// refused, is dropped without a word and counted; one 5 s later is kept.
func TestEvalReportRate(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	build := evalBuild("rate")
	l := evalsLink(t, bt, "desk", build)
	l.send(evalReport(evalSuite("a.eval.json", evalScore(build, evalDay(20, 9), 0.5, true))))
	clock.add(4 * time.Second)
	l.send(evalReport(evalSuite("b.eval.json", evalScore(build, evalDay(20, 9), 0.5, true))))
	l.ping(1) // nothing but the pong: a dropped report is not answered
	suites := func() []string {
		var out []string
		for _, s := range listEvals(t, viewer, "desk") {
			out = append(out, s.GetSuite())
		}
		return out
	}
	if got := suites(); !slices.Equal(got, []string{"a.eval.json"}) {
		t.Errorf("after a report too soon: %q, want the first alone", got)
	}
	if n := bt.Board.EvalReportsDropped(); n != 1 {
		t.Errorf("dropped = %d, want 1", n)
	}
	clock.add(5 * time.Second)
	l.send(evalReport(evalSuite("b.eval.json", evalScore(build, evalDay(20, 9), 0.5, true))))
	l.ping(2)
	if got := suites(); !slices.Equal(got, []string{"a.eval.json", "b.eval.json"}) {
		t.Errorf("5 s later: %q, want both suites", got)
	}
}

// TestEvalBounds: the board keeps the newest 20 builds of a suite and 16
// suites of an agent; a report's suites beyond are dropped and counted, a
// publish to a 17th suite is refused.
func TestEvalBounds(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	build := evalBuild("bounds")
	l := evalsLink(t, bt, "desk", build)
	var builds []*boardv1.EvalScore
	for i := range 20 {
		builds = append(builds, evalScore(evalBuild(fmt.Sprint("b", i)), evalDay(1, i), 0.5, true))
	}
	var suites []*boardv1.EvalSuiteScores
	for i := range 16 {
		suites = append(suites, evalSuite(fmt.Sprintf("s%02d.eval.json", i), evalScore(build, evalDay(20, 9), 0.5, true)))
	}
	suites[0].Builds = builds
	l.send(evalReport(suites...))
	l.ping(1)
	clock.add(5 * time.Second)
	l.send(evalReport(evalSuite("s00.eval.json", evalScore(build, evalDay(20, 9), 0.5, true)),
		evalSuite("t1.eval.json", evalScore(build, evalDay(20, 9), 0.5, true)),
		evalSuite("t2.eval.json", evalScore(build, evalDay(20, 9), 0.5, true))))
	l.ping(2)
	got := listEvals(t, viewer, "desk")
	if len(got) != 16 || got[15].GetSuite() != "s15.eval.json" {
		t.Fatalf("listed %d suites, the last %s; want the 16 first", len(got), got[len(got)-1].GetSuite())
	}
	if n := bt.Board.EvalSuitesDropped(); n != 2 {
		t.Errorf("suites dropped = %d, want 2", n)
	}
	first := got[0].GetBuilds()
	if len(first) != 20 || first[0].GetBuild() != build || first[19].GetBuild() != evalBuild("b1") {
		t.Errorf("s00 holds %d builds, newest %s, oldest %s: want 20, the deployed newest, b0 dropped",
			len(first), short(first[0].GetBuild()), short(first[len(first)-1].GetBuild()))
	}

	publisher := evalsClient(bt, bt.AgentToken("desk"))
	_, err := publisher.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "t1.eval.json", Score: evalScore(build, evalDay(20, 9), 0.5, true)})
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "holds scores in 16 suites") {
		t.Errorf("a publish to a 17th suite: %v, want resource_exhausted", err)
	}
	if _, err := publisher.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "s01.eval.json", Score: evalScore(build, evalDay(21, 9), 0.5, true)}); err != nil {
		t.Errorf("a publish to a suite held: %v", err)
	}
}

// TestPublishEvalScores: an agent token publishes a score of its own
// agent's build, kept with source PUBLISHED and counted in times; a token
// of one kind never works as another; a bad field is named; publishes are
// held to 60 a minute per agent.
func TestPublishEvalScores(t *testing.T) {
	t.Parallel()
	clock := &testClock{t: time.Now().Add(time.Minute)}
	bt := boardtest.Start(t, boardtest.Options{Now: clock.now})
	deployed, next := evalBuild("pub-deployed"), evalBuild("pub-next")
	l := evalsLink(t, bt, "desk", deployed)
	l.send(evalReport(evalSuite("a.eval.json", evalScore(deployed, evalDay(20, 9), 0.7, true))))
	l.ping(1)
	agentClient := evalsClient(bt, bt.AgentToken("desk"))
	res, err := agentClient.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json",
		Score: &boardv1.EvalScore{Build: next, ScoreTime: timestamppb.New(evalDay(21, 9)), Score: 0.9, Passed: true, Cases: 4, Completed: 4, Scored: 4,
			Times: 7, Source: boardv1.EvalSource_EVAL_SOURCE_REPORTED, Deployed: true}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.GetSuite()
	if s.GetAgent() != "desk" || s.GetDeployedBuild() != deployed || len(s.GetBuilds()) != 2 {
		t.Fatalf("published: %v, want desk's suite with both builds", s)
	}
	p := s.GetBuilds()[0]
	if p.GetBuild() != next || p.GetSource() != boardv1.EvalSource_EVAL_SOURCE_PUBLISHED || p.GetTimes() != 1 || p.GetDeployed() {
		t.Errorf("the published build: %v, want source published, times 1, not deployed", p)
	}
	// A later run of the same build counts as a second time.
	res, err = agentClient.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json",
		Score: &boardv1.EvalScore{Build: next, ScoreTime: timestamppb.New(evalDay(22, 9)), Score: 0.8, Passed: true, Cases: 4, Completed: 4, Scored: 4}})
	if err != nil || res.GetSuite().GetBuilds()[0].GetTimes() != 2 || res.GetSuite().GetBuilds()[0].GetScore() != 0.8 {
		t.Errorf("a second publish: %v %v, want times 2, score 0.8", res, err)
	}
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	if got := listEvals(t, viewer, "desk"); len(got) != 1 || got[0].GetBuilds()[0].GetSource() != boardv1.EvalSource_EVAL_SOURCE_PUBLISHED {
		t.Errorf("listed: %v, want the published build first", got)
	}

	// A token of one kind never works as another.
	admin := evalsClient(bt, bt.OperatorToken("root", identity.RoleAdmin))
	if _, err := admin.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json", Score: evalScore(next, evalDay(23, 9), 0.5, true)}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("an operator token publishing: %v, want unauthenticated", err)
	}
	if _, err := agentClient.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("an agent token listing: %v, want unauthenticated", err)
	}

	bad := []struct {
		name string
		req  *boardv1.PublishEvalScoresRequest
		says string
	}{
		{"no suite", &boardv1.PublishEvalScoresRequest{Score: evalScore(next, evalDay(23, 9), 0.5, true)}, "suite: required"},
		{"a suite not an eval file", &boardv1.PublishEvalScoresRequest{Suite: "a.yaml", Score: evalScore(next, evalDay(23, 9), 0.5, true)}, "suite: \"a.yaml\": want a name ending in \".eval.json\""},
		{"no score", &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json"}, "score: required"},
		{"a bad build", &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json", Score: evalScore("sha256:abc", evalDay(23, 9), 0.5, true)}, "score.build: \"sha256:abc\""},
		{"a score above 1", &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json", Score: evalScore(next, evalDay(23, 9), 3, true)}, "score.score: 3, want 0 to 1"},
		{"a time far ahead", &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json", Score: evalScore(next, clock.now().Add(2*time.Hour), 0.5, true)}, "score.score_time: "},
	}
	for _, tc := range bad {
		_, err := agentClient.PublishEvalScores(t.Context(), tc.req)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), tc.says) {
			t.Errorf("%s: %v, want invalid_argument saying %q", tc.name, err, tc.says)
		}
	}

	// 60 a minute: the board's clock stands still, so two were taken
	// above and 58 more go; the next is refused; a minute on, one goes.
	for i := range 58 {
		if _, err := agentClient.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json",
			Score: evalScore(next, evalDay(23, 9).Add(time.Duration(i)*time.Minute), 0.5, true)}); err != nil {
			t.Fatalf("publish %d: %v", i+3, err)
		}
	}
	_, err = agentClient.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json", Score: evalScore(next, evalDay(24, 9), 0.5, true)})
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("publish 61: %v, want resource_exhausted", err)
	}
	clock.add(time.Minute)
	if _, err := agentClient.PublishEvalScores(t.Context(), &boardv1.PublishEvalScoresRequest{Suite: "a.eval.json", Score: evalScore(next, evalDay(24, 9), 0.5, true)}); err != nil {
		t.Errorf("a minute later: %v", err)
	}
}

// TestListEvalScoresPaging: suites by agent then suite, a page at a time;
// a page token works only with the filters it was made for; a bad filter
// is named.
func TestListEvalScoresPaging(t *testing.T) {
	t.Parallel()
	bt := boardtest.Start(t, boardtest.Options{})
	viewer := evalsClient(bt, bt.OperatorToken("v", identity.RoleViewer))
	for _, name := range []string{"zed", "alpha"} {
		build := evalBuild(name)
		l := evalsLink(t, bt, name, build)
		l.send(evalReport(evalSuite("b.eval.json", evalScore(build, evalDay(20, 9), 0.5, true)),
			evalSuite("a.eval.json", evalScore(build, evalDay(20, 9), 0.5, true))))
		l.ping(1)
	}
	var got []string
	token := ""
	for range 10 {
		res, err := viewer.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.GetSuites() {
			got = append(got, s.GetAgent()+"/"+s.GetSuite())
		}
		if token = res.GetNextPageToken(); token == "" {
			break
		}
		if _, err := viewer.ListEvalScores(t.Context(), &boardv1.ListEvalScoresRequest{Agent: "zed", PageToken: token}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("a token with another filter: %v, want invalid_argument", err)
		}
	}
	want := []string{"alpha/a.eval.json", "alpha/b.eval.json", "zed/a.eval.json", "zed/b.eval.json"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if got := listEvals(t, viewer, "zed"); len(got) != 2 || got[0].GetAgent() != "zed" {
		t.Errorf("zed's: %v, want its two suites", got)
	}
	for _, tc := range []struct {
		req  *boardv1.ListEvalScoresRequest
		says string
	}{
		{&boardv1.ListEvalScoresRequest{Agent: " desk"}, "agent: name: leading or trailing space"},
		{&boardv1.ListEvalScoresRequest{PageSize: -1}, "page_size: -1"},
		{&boardv1.ListEvalScoresRequest{PageToken: "nonsense"}, "page_token: "},
	} {
		_, err := viewer.ListEvalScores(t.Context(), tc.req)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.HasPrefix(ce.Message(), tc.says) {
			t.Errorf("ListEvalScores(%v): %v, want invalid_argument saying %q", tc.req, err, tc.says)
		}
	}
}
