package agentlink

import (
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
)

// The bounds of an eval report, as the board takes it.
const (
	// MaxEvalSuites is the most suites a report carries.
	MaxEvalSuites = 16
	// MaxEvalBuilds is the most builds of one suite a report carries.
	MaxEvalBuilds = 20
	// MaxEvalCriteria is the most criteria of one build's score.
	MaxEvalCriteria = 32
	// EvalSpacing is the least time between two eval reports: a newer one
	// waits, and only the newest goes. The board drops a report within
	// 5 s of the last it had; the half second more covers the network's
	// jitter.
	EvalSpacing = 5500 * time.Millisecond
)

// EvalSuite is what the agent's eval journal says of one suite: the eval
// file's name beside the flow ("refund-desk.eval.json") and its builds'
// scores.
type EvalSuite struct {
	Suite  string
	Builds []EvalScore
}

// EvalScore is what one build scored in one suite: its latest run's
// summary. Never a case's input or output.
type EvalScore struct {
	// Build: "sha256:" and the flow's build hash, as the Hello says it.
	Build string
	// At: when its latest run was scored.
	At time.Time
	// Score: the mean score of the cases scored, 0 to 1.
	Score float64
	// Passed: the run met the suite's thresholds.
	Passed bool
	// Cases in the suite; Completed, those the agent answered; Scored,
	// those the judge scored; Times, the runs that scored this build (at
	// least 1).
	Cases, Completed, Scored, Times int
	// Criteria: the mean score per criterion, by name.
	Criteria map[string]float64
	// Threshold: the suite's threshold on the mean score; nil for none.
	Threshold *float64
}

// evalSlot is the newest eval report, its version (one more at every
// ReportEvals) and when a report last went.
type evalSlot struct {
	mu     sync.Mutex
	report *boardv1.EvalReport
	ver    uint64
	sentAt time.Time
}

// ReportEvals tells the board what the agent's eval journal says of its
// builds' scores: at once when a link is up, and again after every
// welcome, so a board that restarted knows them; never two reports within
// EvalSpacing (a newer one replaces one that waits). Call it whenever the
// journal changes. It never blocks. It fails for a Link that did not
// announce CapabilityEvals, and beyond the bounds: more than MaxEvalSuites
// suites, MaxEvalBuilds builds in a suite or MaxEvalCriteria criteria in a
// score. The board checks each field; a report it refuses is logged as a
// warning, and the link stays up.
func (l *Link) ReportEvals(suites []EvalSuite) error {
	if l == nil {
		return ErrNoLink
	}
	if !l.announces(CapabilityEvals) {
		return fmt.Errorf("agentlink: ReportEvals: the hello does not announce %q", CapabilityEvals)
	}
	if len(suites) > MaxEvalSuites {
		return fmt.Errorf("agentlink: ReportEvals: %d suites: at most %d", len(suites), MaxEvalSuites)
	}
	m := &boardv1.EvalReport{}
	for _, s := range suites {
		if len(s.Builds) > MaxEvalBuilds {
			return fmt.Errorf("agentlink: ReportEvals: suite %q: %d builds: at most %d", s.Suite, len(s.Builds), MaxEvalBuilds)
		}
		ms := &boardv1.EvalSuiteScores{Suite: s.Suite}
		for _, b := range s.Builds {
			if len(b.Criteria) > MaxEvalCriteria {
				return fmt.Errorf("agentlink: ReportEvals: suite %q, build %s: %d criteria: at most %d", s.Suite, b.Build, len(b.Criteria), MaxEvalCriteria)
			}
			ms.Builds = append(ms.Builds, evalScoreOf(b))
		}
		m.Suites = append(m.Suites, ms)
	}
	l.evals.mu.Lock()
	l.evals.report = m
	l.evals.ver++
	l.evals.mu.Unlock()
	l.poke()
	return nil
}

// evalsToSend returns the newest report when it is newer than the version
// sent, with its version; or how long to wait before it may go.
func (l *Link) evalsToSend(sent uint64, now time.Time) (*boardv1.EvalReport, uint64, time.Duration) {
	l.evals.mu.Lock()
	defer l.evals.mu.Unlock()
	if l.evals.report == nil || l.evals.ver <= sent {
		return nil, sent, 0
	}
	if wait := l.evals.sentAt.Add(EvalSpacing).Sub(now); wait > 0 {
		return nil, sent, wait
	}
	l.evals.sentAt = now
	return l.evals.report, l.evals.ver, 0
}

func evalScoreOf(s EvalScore) *boardv1.EvalScore {
	m := &boardv1.EvalScore{
		Build: s.Build, ScoreTime: timeOf(s.At), Score: s.Score, Passed: s.Passed,
		Cases: clampInt32(s.Cases), Completed: clampInt32(s.Completed), Scored: clampInt32(s.Scored), Times: clampInt32(s.Times),
	}
	if s.Threshold != nil {
		m.Threshold = proto.Float64(*s.Threshold)
	}
	if len(s.Criteria) > 0 {
		m.Criteria = make(map[string]float64, len(s.Criteria))
		for k, v := range s.Criteria {
			m.Criteria[k] = v
		}
	}
	return m
}

// clampInt32 is n within int32's range.
func clampInt32(n int) int32 { return int32(max(min(n, 1<<31-1), -1<<31)) }
