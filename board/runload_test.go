package board_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/board"
	"github.com/symphonix/symphonix/internal/boardtest"
)

var (
	runLoadAgents = flag.Int("run-load-agents", 1000, "BenchmarkRunLoad: agents linked")
	runLoadEvery  = flag.Duration("run-load-every", 10*time.Second, "BenchmarkRunLoad: how often each agent finishes a run of 20 steps")
	runLoadWindow = flag.Duration("run-load-window", 30*time.Second, "BenchmarkRunLoad: how long to measure, with runs and without")
	runLoadSend   = flag.String("run-load-send", "all", "BenchmarkRunLoad: what each run sends: all, events (no summary) or summaries (no events)")
)

// BenchmarkRunLoad links -run-load-agents agents, each pinging every
// second, and measures the pings' round trips for -run-load-window: first
// with nothing else on the links, then with each agent finishing a run of
// 20 steps every -run-load-every (a start, 40 step events and a summary of
// 20 steps): at the defaults, 100 summaries and 2,000 step events a
// second. It fails when the ping p99 with runs is more than 1.5 times the
// one without, or a summary is not answered. docs/benchmarks.md has what
// it measured.
func BenchmarkRunLoad(b *testing.B) {
	bt := boardtest.Start(b, boardtest.Options{PingInterval: time.Minute, PingTimeout: time.Minute})
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	agents := make([]*loadAgent, *runLoadAgents)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range agents {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			agents[i] = linkLoadAgent(ctx, b, bt, fmt.Sprintf("load-%04d", i))
		})
	}
	wg.Wait()
	for b.Loop() {
		cpu0 := processCPU()
		base := measurePings(ctx, agents, *runLoadWindow, false)
		cpu1 := processCPU()
		withRuns := measurePings(ctx, agents, *runLoadWindow, true)
		cpu2 := processCPU()
		cores := func(d time.Duration) float64 { return d.Seconds() / runLoadWindow.Seconds() }
		p99, p99runs := quantile(base, 0.99), quantile(withRuns, 0.99)
		var sent, stored int64
		for _, a := range agents {
			sent += a.summaries.Load()
			stored += a.stored.Load()
		}
		b.ReportMetric(float64(p99.Microseconds())/1000, "ping-p99-ms")
		b.ReportMetric(float64(p99runs.Microseconds())/1000, "ping-p99-runs-ms")
		b.ReportMetric(float64(sent)/runLoadWindow.Seconds(), "summaries/s")
		b.ReportMetric(cores(cpu2-cpu1), "cores-runs")
		b.Logf("%d agents: ping p50 %s p99 %s without runs (%.2f cores); p50 %s p99 %s with %d summaries (%.0f/s), %d stored (%.2f cores); problems %v",
			len(agents), quantile(base, 0.5), p99, cores(cpu1-cpu0), quantile(withRuns, 0.5), p99runs, sent, float64(sent)/runLoadWindow.Seconds(), stored,
			cores(cpu2-cpu1), bt.Board.RunEventProblems())
		if float64(p99runs) > 1.5*float64(p99) {
			b.Errorf("ping p99 with runs %s, more than 1.5 times the %s without", p99runs, p99)
		}
		boardtest.Eventually(b, time.Minute, "every summary answered", func() bool {
			stored = 0
			for _, a := range agents {
				stored += a.stored.Load()
			}
			return stored == sent
		})
	}
}

// loadAgent is one agent of BenchmarkRunLoad: a raw link and what it
// measured.
type loadAgent struct {
	name      string
	s         boardv1connect.AgentLinkServiceLinkClientStream
	mu        sync.Mutex // sends
	pongs     chan uint64
	summaries atomic.Int64
	stored    atomic.Int64
	run       int
}

func linkLoadAgent(ctx context.Context, b *testing.B, bt *boardtest.Board, name string) *loadAgent {
	link := boardv1connect.NewAgentLinkServiceClient(bt.Client(bt.AgentToken(name)))
	s, err := link.Link(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Send(hello(&boardv1.Hello{Name: name, Protocol: board.Protocol, Capabilities: []string{"runs", "live-runs"}})); err != nil {
		b.Fatal(err)
	}
	if m, err := s.Receive(); err != nil || m.GetWelcome() == nil {
		b.Fatalf("hello: %v %v", m, err)
	}
	a := &loadAgent{name: name, s: s, pongs: make(chan uint64, 16)}
	go func() {
		for {
			m, err := s.Receive()
			if err != nil {
				return
			}
			switch {
			case m.GetPong() != nil:
				a.pongs <- m.GetPong().GetSeq()
			case m.GetRunStored() != nil:
				a.stored.Add(1)
			}
		}
	}()
	return a
}

func (a *loadAgent) send(m *boardv1.LinkRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.Send(m)
}

// measurePings has every agent ping once a second for window, and, with
// runs, take its runs, and returns every round trip.
func measurePings(ctx context.Context, agents []*loadAgent, window time.Duration, runs bool) []time.Duration {
	ctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	var mu sync.Mutex
	var rtts []time.Duration
	var wg sync.WaitGroup
	for i, a := range agents {
		offset := time.Duration(i) * time.Second / time.Duration(len(agents))
		wg.Go(func() {
			for len(a.pongs) > 0 {
				<-a.pongs // a pong of the last window
			}
			var seq uint64
			t := time.NewTimer(offset)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				seq++
				start := time.Now()
				if a.send(&boardv1.LinkRequest{Kind: &boardv1.LinkRequest_Ping{Ping: &boardv1.Ping{Seq: seq}}}) != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-a.pongs:
				}
				mu.Lock()
				rtts = append(rtts, time.Since(start))
				mu.Unlock()
				t.Reset(time.Second - time.Since(start)%time.Second)
			}
		})
		if runs {
			offset := time.Duration(i) * *runLoadEvery / time.Duration(len(agents))
			wg.Go(func() { a.runs(ctx, offset) })
		}
	}
	wg.Wait()
	return rtts
}

// runs takes a run of 20 steps every runLoadEvery, its steps spread over
// it, starting after offset.
func (a *loadAgent) runs(ctx context.Context, offset time.Duration) {
	const steps = 20
	gap := *runLoadEvery / (steps + 1)
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	wait := func(d time.Duration) bool {
		t.Reset(d)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	if !wait(offset) {
		return
	}
	for {
		a.run++
		id := fmt.Sprintf("run-%d", a.run)
		start := time.Now()
		events, summaries := *runLoadSend != "summaries", *runLoadSend != "events"
		var seq uint32 = 1
		if events && a.send(startOf(id, seq, "")) != nil {
			return
		}
		r := &boardv1.Run{Id: id, StartedBy: "chat", State: boardv1.RunState_RUN_STATE_FINISHED, StartTime: timestamppb.New(start), StepCount: steps}
		for i := range steps {
			if !wait(gap) {
				return
			}
			seq += 2
			if events {
				_ = a.send(stepOf(id, seq-1, int32(i+1), fmt.Sprintf("node-%d", i+1), boardv1.StepOutcome_STEP_OUTCOME_UNSPECIFIED))
				_ = a.send(stepOf(id, seq, int32(i+1), fmt.Sprintf("node-%d", i+1), boardv1.StepOutcome_STEP_OUTCOME_OK))
			}
			r.Steps = append(r.Steps, &boardv1.RunStep{Seq: int32(i + 1), Node: fmt.Sprintf("node-%d", i+1), Kind: "llm", Copy: -1,
				StartTime: timestamppb.Now(), Duration: durationpb.New(time.Millisecond), Outcome: boardv1.StepOutcome_STEP_OUTCOME_OK,
				Tokens: &boardv1.Tokens{Input: 100, Output: 20, Total: 120}})
		}
		r.EndTime, r.Duration = timestamppb.Now(), durationpb.New(time.Since(start))
		seq++
		if summaries {
			if a.send(summaryOf(r, seq, 0)) != nil {
				return
			}
			a.summaries.Add(1)
		}
		if !wait(gap) {
			return
		}
	}
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

var runWritesBatch = flag.Int("run-writes-batch", 10, "BenchmarkRunWrites: starts and summaries in each batch")

// BenchmarkRunWrites measures the store's side of runs alone: each op is
// one batch of the run writer holding -run-writes-batch starts of new
// runs and as many summaries of 20 steps, of the runs the op before
// started.
func BenchmarkRunWrites(b *testing.B) {
	bt := boardtest.Start(b, boardtest.Options{})
	n := *runWritesBatch
	now := time.Now()
	var prev []string
	op := 0
	cpu := processCPU()
	for b.Loop() {
		op++
		ws := make([]board.RunWriteForTest, 0, 2*n)
		var started []string
		for i := range n {
			id := fmt.Sprintf("run-%d-%d", op, i)
			started = append(started, id)
			ws = append(ws, board.RunWriteForTest{Agent: fmt.Sprintf("load-%04d", i), Seq: 1, Start: true, Run: &boardv1.Run{
				Id: id, StartedBy: "chat", State: boardv1.RunState_RUN_STATE_RUNNING, StartTime: timestamppb.New(now)}})
		}
		for i, id := range prev {
			r := &boardv1.Run{Id: id, StartedBy: "chat", State: boardv1.RunState_RUN_STATE_FINISHED, StartTime: timestamppb.New(now),
				EndTime: timestamppb.New(now.Add(10 * time.Second)), Duration: durationpb.New(10 * time.Second), StepCount: 20}
			for s := range 20 {
				r.Steps = append(r.Steps, &boardv1.RunStep{Seq: int32(s + 1), Node: fmt.Sprintf("node-%d", s+1), Kind: "llm", Copy: -1,
					StartTime: timestamppb.New(now), Duration: durationpb.New(time.Millisecond), Outcome: boardv1.StepOutcome_STEP_OUTCOME_OK,
					Tokens: &boardv1.Tokens{Input: 100, Output: 20, Total: 120}})
			}
			ws = append(ws, board.RunWriteForTest{Agent: fmt.Sprintf("load-%04d", i), Seq: 42, Summary: true, Run: r})
		}
		if err := bt.Board.WriteRunBatchForTest(ws); err != nil {
			b.Fatal(err)
		}
		prev = started
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
