package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/evals"
)

// evalPoll is how often a served agent looks at its folder's eval journal
// for a run it has not reported.
const evalPoll = 10 * time.Second

// A suite's criteria all fit in a report's score: this does not compile
// when evals allows more than the link carries.
var _ [agentlink.MaxEvalCriteria - evals.MaxCriteria]struct{}

// evalSuites are the eval suites beside the flow (DIR/*.eval.json), at
// most agentlink.MaxEvalSuites, the first by name; none when the folder
// cannot be listed. An agent with one announces "evals".
func evalSuites(dir string) []string {
	suites, err := evals.Suites(dir)
	if err != nil {
		return nil
	}
	return suites[:min(len(suites), agentlink.MaxEvalSuites)]
}

// evalReports are what the journal of each suite says of the builds it
// scored (evals.ScoresByBuild), as the link carries them. A suite whose
// journal cannot be read, or that has scored no build, is left out: the
// report never says a build scored nothing when it was not scored.
func evalReports(suites []string) []agentlink.EvalSuite {
	var out []agentlink.EvalSuite
	for _, path := range suites {
		builds, err := evals.ScoresByBuild(path, agentlink.MaxEvalBuilds)
		if err != nil || len(builds) == 0 {
			continue
		}
		s := agentlink.EvalSuite{Suite: filepath.Base(path)}
		for _, b := range builds {
			// A suite has at most evals.MaxCriteria criteria, as many as
			// a report's score may carry.
			s.Builds = append(s.Builds, agentlink.EvalScore{
				Build: b.Build, At: b.At, Score: b.Score, Passed: b.Passed,
				Cases: b.Cases, Completed: b.Completed, Scored: b.Scored, Times: max(b.Times, 1),
				Criteria: b.Criteria, Threshold: b.Threshold,
			})
		}
		out = append(out, s)
	}
	return out
}

// journalStamp says how each suite's kept runs stand: their folder's
// entries by name and time, so a new run (or one removed) changes it.
func journalStamp(suites []string) string {
	var stamp string
	for _, path := range suites {
		entries, err := os.ReadDir(evals.RunsDir(path))
		if err != nil {
			continue
		}
		stamp += path + "\x00" + fmt.Sprint(len(entries))
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				stamp += "\x00" + e.Name() + info.ModTime().String()
			}
		}
	}
	return stamp
}

// reportEvals tells the board what the folder's eval journal says, and,
// with watch, again whenever it changes (looked at every evalPoll) until
// ctx ends: an `agent eval` run beside a served agent reaches the board
// without a restart.
func (p *parts) reportEvals(ctx context.Context, l *agentlink.Link, watch bool) {
	suites := p.evals
	if len(suites) == 0 {
		return
	}
	last := journalStamp(suites)
	if err := l.ReportEvals(evalReports(suites)); err != nil {
		p.cfg.Logger.Warn("reporting the eval scores", "err", err)
	}
	if !watch {
		return
	}
	tick := time.NewTicker(evalPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if now := journalStamp(suites); now != last {
			last = now
			if err := l.ReportEvals(evalReports(suites)); err != nil {
				p.cfg.Logger.Warn("reporting the eval scores", "err", err)
			}
		}
	}
}
