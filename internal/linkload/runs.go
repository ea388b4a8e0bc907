package linkload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agentlink"
)

// makeRuns has link finish a run of RunSteps steps every period, starting
// at a random time within the first, until ctx ends: what an agent of the
// runs package sends for a run that goes straight through — a start, an
// entered and a finished event for each step, as they happen (a step
// every StepEvery), and the run's summary, kept in box until the board
// stores it. With box nil the runs are made but nothing of them is sent
// (Plan.RunsUnsent).
func makeRuns(ctx context.Context, link *agentlink.Link, box *summaries, agent string, every time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rand.N(every)):
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 1; ; n++ {
		id := fmt.Sprintf("%s-run-%d", agent, n)
		start := time.Now()
		seq := uint32(1)
		link.SendRunEvent(agentlink.RunEvent{RunID: id, Seq: seq, At: start, Kind: agentlink.RunEventStart,
			Thread: "load", StartedBy: "trigger", Build: "sha256:" + fmt.Sprintf("%064x", 1)})
		steps := make([]agentlink.RunStep, 0, RunSteps)
		for i := 1; i <= RunSteps; i++ {
			if i > 1 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(StepEvery):
				}
			}
			st := agentlink.RunStep{Seq: i, Node: fmt.Sprintf("node-%02d", i), Kind: "handler", Copy: -1, Start: time.Now()}
			seq++
			link.SendRunEvent(agentlink.RunEvent{RunID: id, Seq: seq, At: st.Start, Kind: agentlink.RunEventStep, Step: st})
			st.Duration, st.Outcome = time.Millisecond, "ok"
			if i%5 == 0 {
				st.Kind, st.Tokens = "llm", agentlink.Tokens{Input: 800, Output: 60, Cached: 512, Total: 860}
			}
			seq++
			link.SendRunEvent(agentlink.RunEvent{RunID: id, Seq: seq, At: time.Now(), Kind: agentlink.RunEventStep, Step: st})
			steps = append(steps, st)
		}
		seq++
		end := time.Now()
		if box != nil { // nil: the runs are not sent
			box.add(agentlink.RunSummary{Seq: seq, Run: agentlink.Run{
				ID: id, Thread: "load", StartedBy: "trigger", State: agentlink.RunFinished, Start: start, End: end,
				Duration: end.Sub(start), StepCount: RunSteps, Steps: steps,
				Tokens: agentlink.Tokens{Input: 3200, Output: 240, Cached: 2048, Total: 3440}, Withheld: []string{"input", "output"},
			}})
			link.SummaryAdded()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// summaries is a load agent's outbox, in memory: the summaries the board
// has yet to store, oldest first.
type summaries struct {
	mu   sync.Mutex
	held []agentlink.RunSummary
}

// orNil is s as a Config.Summaries: nil when there is none.
func (s *summaries) orNil() agentlink.Summaries {
	if s == nil {
		return nil
	}
	return s
}

func (s *summaries) add(sum agentlink.RunSummary) {
	s.mu.Lock()
	s.held = append(s.held, sum)
	s.mu.Unlock()
}

func (s *summaries) Next(skip func(run string, seq uint32) bool) (agentlink.RunSummary, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sum := range s.held {
		if !skip(sum.Run.ID, sum.Seq) {
			return sum, true
		}
	}
	return agentlink.RunSummary{}, false
}

func (s *summaries) Stored(run string, seq uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sum := range s.held {
		if sum.Run.ID == run && sum.Seq <= seq {
			s.held = append(s.held[:i], s.held[i+1:]...)
			return
		}
	}
}
