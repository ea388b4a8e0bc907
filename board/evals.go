package board

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/evalscore"
	"github.com/symphonix/symphonix/store"
)

// capEvals is the capability an agent announces when it reports what its
// folder's eval journal says of its builds' scores (EvalReport).
const capEvals = "evals"

// Limits on eval scores: what a report or a publish may carry, how often,
// and what the board keeps (docs/limits.md, docs/evals-board.md).
const (
	maxEvalSuites        = 16
	maxEvalBuilds        = 20
	maxEvalCriteria      = 32
	maxEvalSuiteName     = 128
	maxEvalCriterionName = 64
	evalReportsEvery     = 5 * time.Second
	// evalPublishesPerAgent publishes in evalPublishWindow, per agent.
	evalPublishesPerAgent = 60
	evalPublishWindow     = time.Minute
	// evalSuiteSuffix ends every suite's name: the eval file beside the
	// flow.
	evalSuiteSuffix = ".eval.json"
)

var evalBuildShape = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// evalState is the board's part of eval scores that is not in the store.
type evalState struct {
	// locks serialises, per agent, the writes of its scores on this board.
	locks keyedLocks
	// publishRate holds each agent to its publishes a minute.
	publishRate *limiter
	// reportsDropped counts the reports dropped for coming within
	// evalReportsEvery of the link's last; suitesDropped the suites of
	// reports not kept because the agent held the most suites already.
	reportsDropped atomic.Int64
	suitesDropped  atomic.Int64
	// logged and loggedAt: what the last log line said of the two counts,
	// and when (the board's loop only).
	logged   [2]int64
	loggedAt time.Time
}

// logEvalDrops logs the counts of reports and suites dropped when either
// moved since the last line, at most once a minute. The board's loop
// calls it.
func (b *Board) logEvalDrops(now time.Time) {
	e := &b.evals
	n := [2]int64{e.reportsDropped.Load(), e.suitesDropped.Load()}
	if n == e.logged || now.Sub(e.loggedAt) < time.Minute {
		return
	}
	e.logged, e.loggedAt = n, now
	b.log.Warn("eval reports or suites dropped since the board started: a report within 5 s of the link's last, or a new suite beyond 16 per agent",
		"reports_dropped", n[0], "suites_dropped", n[1])
}

// EvalReportsDropped counts, since the board started, the eval reports it
// dropped for coming within 5 s of the link's last.
func (b *Board) EvalReportsDropped() int64 { return b.evals.reportsDropped.Load() }

// EvalSuitesDropped counts, since the board started, the suites of eval
// reports it did not keep because the agent held scores in 16 other suites.
func (b *Board) EvalSuitesDropped() int64 { return b.evals.suitesDropped.Load() }

// validEvalSuiteName checks a suite's name: 1 to 128 bytes of text ending
// in ".eval.json", without a slash.
func validEvalSuiteName(name string) error {
	if err := validText(name, maxEvalSuiteName, true); err != nil {
		return err
	}
	switch {
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%s: a file name, without a slash", quoted(name))
	case !strings.HasSuffix(name, evalSuiteSuffix) || name == evalSuiteSuffix:
		return fmt.Errorf("%s: want a name ending in %q", quoted(name), evalSuiteSuffix)
	}
	return nil
}

// unit reports whether v is a score: a number from 0 to 1.
func unit(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }

// validEvalScore checks one build's score, naming the field under at.
// times says whether its times is the sender's to say (a report) or the
// board's (a publish, which ignores it).
func validEvalScore(at string, s *boardv1.EvalScore, now time.Time, times bool) error {
	if s == nil {
		return badRequest("%s: required", at)
	}
	if !evalBuildShape.MatchString(s.GetBuild()) {
		if s.GetBuild() == "" {
			return badRequest("%s.build: required", at)
		}
		return badRequest("%s.build: %s, want \"sha256:\" and 64 lowercase hex digits", at, quoted(s.GetBuild()))
	}
	if err := validRunTime(s.GetScoreTime(), now); err != nil {
		return badRequest("%s.score_time: %v", at, err)
	}
	if !unit(s.GetScore()) {
		return badRequest("%s.score: %v, want 0 to 1", at, s.GetScore())
	}
	cases, completed, scored := s.GetCases(), s.GetCompleted(), s.GetScored()
	switch {
	case cases < 0:
		return badRequest("%s.cases: %d, want 0 or more", at, cases)
	case completed < 0 || completed > cases:
		return badRequest("%s.completed: %d, want 0 to cases (%d)", at, completed, cases)
	case scored < 0 || scored > completed:
		return badRequest("%s.scored: %d, want 0 to completed (%d)", at, scored, completed)
	case times && s.GetTimes() < 1:
		return badRequest("%s.times: %d, want 1 or more", at, s.GetTimes())
	}
	if n := len(s.GetCriteria()); n > maxEvalCriteria {
		return badRequest("%s.criteria: %d, at most %d", at, n, maxEvalCriteria)
	}
	for _, name := range sortedKeys(s.GetCriteria()) {
		if err := validText(name, maxEvalCriterionName, true); err != nil {
			return badRequest("%s.criteria: name %s: %v", at, quoted(name), err)
		}
		if v := s.GetCriteria()[name]; !unit(v) {
			return badRequest("%s.criteria[%s]: %v, want 0 to 1", at, quoted(name), v)
		}
	}
	if s.Threshold != nil && !unit(s.GetThreshold()) {
		return badRequest("%s.threshold: %v, want 0 to 1", at, s.GetThreshold())
	}
	return nil
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// validEvalReport checks a report, naming the field at fault.
func validEvalReport(r *boardv1.EvalReport, now time.Time) error {
	suites := r.GetSuites()
	if n := len(suites); n > maxEvalSuites {
		return badRequest("evals.suites: %d, at most %d", n, maxEvalSuites)
	}
	seen := make(map[string]bool, len(suites))
	for i, s := range suites {
		at := fmt.Sprintf("evals.suites[%d]", i)
		if s == nil {
			return badRequest("%s: required", at)
		}
		if err := validEvalSuiteName(s.GetSuite()); err != nil {
			return badRequest("%s.suite: %v", at, err)
		}
		if seen[s.GetSuite()] {
			return badRequest("%s.suite: %s twice", at, quoted(s.GetSuite()))
		}
		seen[s.GetSuite()] = true
		if n := len(s.GetBuilds()); n > maxEvalBuilds {
			return badRequest("%s.builds: %d, at most %d", at, n, maxEvalBuilds)
		}
		builds := make(map[string]bool, len(s.GetBuilds()))
		for j, sc := range s.GetBuilds() {
			bat := fmt.Sprintf("%s.builds[%d]", at, j)
			if err := validEvalScore(bat, sc, now, true); err != nil {
				return err
			}
			if builds[sc.GetBuild()] {
				return badRequest("%s.build: %s twice", bat, quoted(sc.GetBuild()))
			}
			builds[sc.GetBuild()] = true
		}
	}
	return nil
}

// evalReport keeps the scores an agent reports, or refuses the report in
// a LinkError that names the field; either way the link stays up. A
// report within 5 s of the last this link sent, kept or refused, is
// dropped and counted (EvalReportsDropped).
func (l linkService) evalReport(ctx context.Context, s *session, r *boardv1.EvalReport) error {
	b := l.b
	if !slices.Contains(s.caps, capEvals) {
		return l.answerError(ctx, s, "", "evals", &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: "evals: this agent did not announce the evals capability in its hello"})
	}
	now := b.now()
	if !s.lastEvals.IsZero() && now.Sub(s.lastEvals) < evalReportsEvery {
		b.evals.reportsDropped.Add(1)
		return nil
	}
	s.lastEvals = now // a refused report counts too: refusing costs the board as well
	if err := validEvalReport(r, now); err != nil {
		return l.answerError(ctx, s, "", "evals", err)
	}
	dropped, err := b.keepEvals(ctx, s.name, r.GetSuites(), evalscore.SourceReported, false, now)
	if err != nil {
		return l.answerError(ctx, s, "", "evals", err)
	}
	b.evals.suitesDropped.Add(int64(dropped))
	return nil
}

// errEvalSuites refuses a publish to a new suite of an agent that holds
// the most suites already.
func errEvalSuites(agentName, suite string) error {
	return connect.NewError(connect.CodeResourceExhausted, fmt.Sprintf(
		"suite: %s: agent %s holds scores in %d suites already, the most the board keeps; a new suite is refused",
		quoted(suite), quoted(agentName), maxEvalSuites))
}

// keepEvals keeps the builds of suites for agentName, valid already: each
// build whose score_time is the held one's or newer replaces it, a build
// not held is added, and a build left out is kept. Then only the newest
// maxEvalBuilds builds of each suite are kept. A suite the agent does not
// hold yet, when it holds maxEvalSuites, is dropped and counted in the
// result; with refuseNew it refuses the whole write instead.
// A published build's times is one more than the held one's, when the
// publish is newer.
func (b *Board) keepEvals(ctx context.Context, agentName string, suites []*boardv1.EvalSuiteScores,
	source evalscore.Source, refuseNew bool, now time.Time) (int, error) {
	unlock := b.evals.locks.lock(agentName)
	defer unlock()
	var dropped int
	write := func() error {
		return store.InTx(ctx, b.db, func(tx *ent.Tx) error {
			dropped = 0
			held, err := tx.EvalScore.Query().Where(evalscore.Agent(agentName)).
				GroupBy(evalscore.FieldSuite).Strings(ctx)
			if err != nil {
				return err
			}
			for _, s := range suites {
				if !slices.Contains(held, s.GetSuite()) {
					if len(held) >= maxEvalSuites {
						if refuseNew {
							return errEvalSuites(agentName, s.GetSuite())
						}
						dropped++
						continue
					}
					held = append(held, s.GetSuite())
				}
				if err := keepEvalSuite(ctx, tx, agentName, s, source, now); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := write()
	if ent.IsConstraintError(err) {
		// Another board on the database added one of the builds between
		// the read and the write: read again.
		err = write()
	}
	return dropped, err
}

// keepEvalSuite writes one suite's builds and drops the oldest beyond
// maxEvalBuilds.
func keepEvalSuite(ctx context.Context, tx *ent.Tx, agentName string, s *boardv1.EvalSuiteScores,
	source evalscore.Source, now time.Time) error {
	builds := make([]string, len(s.GetBuilds()))
	for i, sc := range s.GetBuilds() {
		builds[i] = sc.GetBuild()
	}
	rows, err := tx.EvalScore.Query().Where(evalscore.Agent(agentName), evalscore.Suite(s.GetSuite()),
		evalscore.BuildIn(builds...), store.ForUpdate).All(ctx)
	if err != nil {
		return err
	}
	byBuild := make(map[string]*ent.EvalScore, len(rows))
	for _, r := range rows {
		byBuild[r.Build] = r
	}
	for _, sc := range s.GetBuilds() {
		at := storedTime(sc.GetScoreTime().AsTime())
		times := int(sc.GetTimes())
		old := byBuild[sc.GetBuild()]
		if source == evalscore.SourcePublished {
			times = 1
			if old != nil {
				times = old.Times
				if at.After(old.ScoreTime) {
					times++
				}
			}
		}
		if old != nil {
			if old.ScoreTime.After(at) {
				continue // what the board holds is newer
			}
			u := old.Update().SetScoreTime(at).SetScore(sc.GetScore()).SetPassed(sc.GetPassed()).
				SetCases(int(sc.GetCases())).SetCompleted(int(sc.GetCompleted())).SetScored(int(sc.GetScored())).
				SetTimes(times).SetCriteria(criteriaOf(sc)).SetSource(source).SetReceived(storedTime(now))
			if sc.Threshold != nil {
				u.SetThreshold(sc.GetThreshold())
			} else {
				u.ClearThreshold()
			}
			if err := u.Exec(ctx); err != nil {
				return err
			}
			continue
		}
		err := tx.EvalScore.Create().SetAgent(agentName).SetSuite(s.GetSuite()).SetBuild(sc.GetBuild()).
			SetScoreTime(at).SetScore(sc.GetScore()).SetPassed(sc.GetPassed()).
			SetCases(int(sc.GetCases())).SetCompleted(int(sc.GetCompleted())).SetScored(int(sc.GetScored())).
			SetTimes(times).SetCriteria(criteriaOf(sc)).SetNillableThreshold(sc.Threshold).
			SetSource(source).SetReceived(storedTime(now)).Exec(ctx)
		if err != nil {
			return err
		}
	}
	beyond, err := tx.EvalScore.Query().Where(evalscore.Agent(agentName), evalscore.Suite(s.GetSuite())).
		Order(ent.Desc(evalscore.FieldScoreTime), ent.Asc(evalscore.FieldBuild)).
		Offset(maxEvalBuilds).IDs(ctx)
	if err != nil || len(beyond) == 0 {
		return err
	}
	_, err = tx.EvalScore.Delete().Where(evalscore.IDIn(beyond...)).Exec(ctx)
	return err
}

func criteriaOf(s *boardv1.EvalScore) map[string]float64 {
	if len(s.GetCriteria()) == 0 {
		return nil
	}
	return s.GetCriteria()
}

// evalScoreProto is one stored build's score as the API shows it.
func evalScoreProto(r *ent.EvalScore, deployed string) *boardv1.EvalScore {
	s := &boardv1.EvalScore{
		Build: r.Build, ScoreTime: timestamppb.New(r.ScoreTime), Score: r.Score, Passed: r.Passed,
		Cases: int32(r.Cases), Completed: int32(r.Completed), Scored: int32(r.Scored), Times: int32(r.Times),
		Criteria: r.Criteria, Threshold: r.Threshold, Deployed: r.Build == deployed,
		Source: boardv1.EvalSource_EVAL_SOURCE_REPORTED,
	}
	if r.Source == evalscore.SourcePublished {
		s.Source = boardv1.EvalSource_EVAL_SOURCE_PUBLISHED
	}
	return s
}

// agentEvalSuite is one suite of one agent from its stored rows, newest
// first, flagged for the deployed build.
func agentEvalSuite(agentName, suite, deployed string, rows []*ent.EvalScore) *boardv1.AgentEvalSuite {
	slices.SortFunc(rows, func(a, b *ent.EvalScore) int {
		if c := b.ScoreTime.Compare(a.ScoreTime); c != 0 {
			return c
		}
		return strings.Compare(a.Build, b.Build)
	})
	out := &boardv1.AgentEvalSuite{Agent: agentName, Suite: suite, DeployedBuild: deployed}
	for _, r := range rows {
		out.Builds = append(out.Builds, evalScoreProto(r, deployed))
	}
	out.Flags, out.Reasons = evalFlags(out.Builds, deployed)
	return out
}

// shortBuild is how a reason names a build: its first 12 hex digits.
func shortBuild(build string) string {
	h := strings.TrimPrefix(build, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

func evalDay(t *timestamppb.Timestamp) string { return t.AsTime().UTC().Format(time.DateOnly) }

// evalFlags is what to look at about the deployed build of a suite whose
// builds are newest first, with each flag in words. An agent that never
// said what it runs has none.
//   - REGRESSED: a build scored before the deployed one (by score_time)
//     scored higher; the reason names the highest.
//   - BELOW_THRESHOLD: the deployed build did not pass, or scored below its
//     threshold.
//   - NOT_SCORED: builds are scored, but not the deployed one.
func evalFlags(builds []*boardv1.EvalScore, deployed string) ([]boardv1.EvalFlag, []string) {
	if deployed == "" || len(builds) == 0 {
		return nil, nil
	}
	var d *boardv1.EvalScore
	for _, b := range builds {
		if b.GetBuild() == deployed {
			d = b
		}
	}
	if d == nil {
		newest := builds[0]
		return []boardv1.EvalFlag{boardv1.EvalFlag_EVAL_FLAG_NOT_SCORED}, []string{fmt.Sprintf(
			"the deployed build %s has no score in this suite; the newest scored is %s, %.2f on %s",
			shortBuild(deployed), shortBuild(newest.GetBuild()), newest.GetScore(), evalDay(newest.GetScoreTime()))}
	}
	var flags []boardv1.EvalFlag
	var reasons []string
	var best *boardv1.EvalScore
	for _, b := range builds { // newest first: on a tie the newest stays
		if b.GetScoreTime().AsTime().Before(d.GetScoreTime().AsTime()) && b.GetScore() > d.GetScore() &&
			(best == nil || b.GetScore() > best.GetScore()) {
			best = b
		}
	}
	if best != nil {
		flags = append(flags, boardv1.EvalFlag_EVAL_FLAG_REGRESSED)
		reasons = append(reasons, fmt.Sprintf("the deployed build %s scored %.2f on %s, below the %.2f of %s scored %s",
			shortBuild(deployed), d.GetScore(), evalDay(d.GetScoreTime()), best.GetScore(), shortBuild(best.GetBuild()), evalDay(best.GetScoreTime())))
	}
	switch {
	case d.Threshold != nil && d.GetScore() < d.GetThreshold():
		flags = append(flags, boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD)
		reasons = append(reasons, fmt.Sprintf("the deployed build %s scored %.2f on %s, below the suite's threshold of %.2f",
			shortBuild(deployed), d.GetScore(), evalDay(d.GetScoreTime()), d.GetThreshold()))
	case !d.GetPassed():
		flags = append(flags, boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD)
		reasons = append(reasons, fmt.Sprintf("the deployed build %s did not meet the suite's thresholds on %s (scored %.2f, %d of %d cases scored)",
			shortBuild(deployed), evalDay(d.GetScoreTime()), d.GetScore(), d.GetScored(), d.GetCases()))
	}
	return flags, reasons
}
