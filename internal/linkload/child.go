package linkload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"

	"github.com/symphonix/symphonix/agentlink"
)

// Child runs the agents of the plan in EnvPlan against the board at EnvURL:
// it links them all, writes an "up" Event, and then answers commands from
// stdin until stdin ends, when it lets every agent go.
func Child(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	url := os.Getenv(EnvURL)
	if url == "" {
		return fmt.Errorf("%s is not set", EnvURL)
	}
	raw, err := os.ReadFile(os.Getenv(EnvPlan))
	if err != nil {
		return fmt.Errorf("read plan: %w", err)
	}
	var plan Plan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return fmt.Errorf("read plan: %w", err)
	}
	if len(plan.Agents) == 0 || plan.Probes < 0 || plan.Probes > len(plan.Agents) || plan.DialRate <= 0 || plan.ProbeEvery <= 0 {
		return errors.New("plan: want agents, 0 <= probes <= agents, a dial rate and a probe interval")
	}
	tlsConf, err := clientTLS(plan.CA)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &events{enc: json.NewEncoder(stdout)}

	// Commands; the end of stdin (the parent closed it, or died) ends the child.
	cmds := make(chan string)
	go func() {
		defer cancel()
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			select {
			case cmds <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()

	var (
		up    atomic.Int64
		drops atomic.Int64
		rec   recorder
		wg    sync.WaitGroup
		back  = newComeback(len(plan.Agents))
		said  = &refusals{}
	)
	minBackoff, maxBackoff := 50*time.Millisecond, 2*time.Second
	if plan.AgentBackoff {
		minBackoff, maxBackoff = 0, 0 // agentlink's own
	}
	wg.Go(func() {
		dial(ctx, plan, func(i int, c Credential) {
			if i < plan.Probes {
				first, _, _ := strings.Cut(url, ",") // a probe dials one board
				p := &probe{url: first, tls: tlsConf, cred: c, every: plan.ProbeEvery, rec: &rec, up: &up}
				wg.Go(func() { p.run(ctx, &drops) })
				return
			}
			if plan.BareAgents {
				first, _, _ := strings.Cut(url, ",")
				p := &probe{url: first, tls: tlsConf, cred: c, every: plan.ProbeEvery, up: &up, bare: true, said: said,
					state: func(s bool) { back.state(i, s) }}
				wg.Go(func() { p.run(ctx, &drops) })
				return
			}
			var caps []string
			if plan.HealthEvery > 0 {
				caps = []string{agentlink.CapabilityHealth}
			}
			linked := make(chan struct{}) // closed when the link is first up
			var linkedOnce sync.Once
			var box *summaries
			if plan.RunEvery > 0 && !plan.RunsUnsent {
				caps = append(caps, agentlink.CapabilityRuns, agentlink.CapabilityLiveRuns)
				box = &summaries{}
			}
			link, err := agentlink.New(agentlink.Config{
				BoardURL:     url,
				TLS:          tlsConf,
				Token:        c.Token,
				Identity:     agentlink.Identity{Name: c.Name},
				Capabilities: caps,
				Summaries:    box.orNil(),
				MinBackoff:   minBackoff,
				MaxBackoff:   maxBackoff,
				Logger:       slog.New(said),
				OnState: func(s agentlink.State) {
					back.state(i, s.Up)
					if s.Up {
						linkedOnce.Do(func() { close(linked) })
						up.Add(1)
						return
					}
					up.Add(-1)
					if ctx.Err() == nil {
						drops.Add(1)
					}
				},
			})
			if err != nil {
				out.send(Event{Kind: "error", Error: err.Error()})
				cancel()
				return
			}
			wg.Go(func() { _ = link.Run(ctx) })
			if plan.HealthEvery > 0 {
				wg.Go(func() { reportHealth(ctx, link, plan.HealthEvery) })
			}
			if plan.RunEvery > 0 {
				wg.Go(func() {
					// An agent's runs start once it has linked, so that no
					// start is lost to a link not yet up.
					select {
					case <-ctx.Done():
						return
					case <-linked:
					}
					makeRuns(ctx, link, box, c.Name, plan.RunEvery)
				})
			}
		})
	})
	defer wg.Wait()

	// Up: every agent linked at once. Until then, progress on stderr every
	// few seconds, which the parent shows if it gives up.
	n := int64(len(plan.Agents))
	tick := time.NewTicker(20 * time.Millisecond)
	for i := 1; up.Load() != n; i++ {
		select {
		case <-ctx.Done():
			tick.Stop()
			return nil
		case <-tick.C:
		}
		if i%250 == 0 {
			fmt.Fprintf(os.Stderr, "linking: %d of %d up, %d dropped, %d refused, %d unavailable\n",
				up.Load(), n, drops.Load(), said.refused.Load(), said.unavailable.Load())
		}
	}
	tick.Stop()
	out.send(Event{Kind: "up", Up: int(up.Load()), Drops: drops.Load()})

	for {
		select {
		case <-ctx.Done():
			return nil
		case cmd := <-cmds:
			switch cmd {
			case cmdMark:
				if _, err := startProfile(os.Getenv(EnvAgentsProfile)); err != nil {
					out.send(Event{Kind: "error", Error: err.Error()})
					return err
				}
				back.mark()
				said.reset()
				out.send(Event{Kind: "marked", Up: int(up.Load())})
			case cmdMoved:
				moved := back.watchMoved()
				wg.Go(func() {
					select {
					case <-ctx.Done():
					case <-moved:
						down, at, p50, p90 := back.movedTimes()
						out.send(Event{
							Kind: "moved", Up: int(up.Load()), Down: down,
							At: at, AtP50: p50, AtP90: p90,
							Refused: said.refused.Load(), Unavailable: said.unavailable.Load(),
						})
					}
				})
			case cmdBack:
				wg.Go(func() {
					select {
					case <-ctx.Done():
					case <-back.done:
						pprof.StopCPUProfile()
						out.send(Event{
							Kind: "back", Up: int(up.Load()), Drops: drops.Load(),
							At: back.quantile(1), AtP50: back.quantile(0.5), AtP90: back.quantile(0.9),
							Refused: said.refused.Load(), Unavailable: said.unavailable.Load(),
						})
					}
				})
			case cmdMeasure:
				mem := Measure()
				rec.start()
				cpu, wall := cpuTime(), time.Now()
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(plan.Window):
				}
				rtt := Summarize(rec.stop())
				out.send(Event{
					Kind: "report", Up: int(up.Load()), Memory: &mem, RTT: &rtt, Drops: drops.Load(),
					CPU: cores(cpuTime()-cpu, time.Since(wall)),
				})
			default:
				out.send(Event{Kind: "error", Error: fmt.Sprintf("unknown command %q", cmd)})
			}
		}
	}
}

// reportHealth gives link a round of three checks every period, starting
// at a random time within the first, until ctx ends. Every round differs
// from the one before it (a line's detail counts them), so the link sends
// each one: the most a fleet of agents reporting at this period can make
// the board keep.
func reportHealth(ctx context.Context, link *agentlink.Link, every time.Duration) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rand.N(every)):
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 1; ; n++ {
		h := agentlink.Health{
			Status: agentlink.HealthOK,
			Start:  time.Now(),
			Checks: []agentlink.HealthCheck{
				{Name: "mcp:orders", Status: agentlink.CheckOK, Took: 3 * time.Millisecond},
				{Name: "model", Status: agentlink.CheckOK, Took: 180 * time.Millisecond, Detail: fmt.Sprintf("round %d", n)},
				{Name: "waiting", Status: agentlink.CheckOK, Took: time.Millisecond},
			},
		}
		_ = link.ReportHealth(h)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// cores is how many cores cpu time used over wall time.
func cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// dial calls start for every agent of the plan, probes first, at the plan's
// dial rate, so that thousands of agents do not dial in one instant.
func dial(ctx context.Context, plan Plan, start func(int, Credential)) {
	const step = 10 * time.Millisecond
	perStep := max(1, plan.DialRate*int(step)/int(time.Second))
	tick := time.NewTicker(step)
	defer tick.Stop()
	for i := 0; i < len(plan.Agents); i += perStep {
		for j := i; j < min(i+perStep, len(plan.Agents)); j++ {
			start(j, plan.Agents[j])
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// comeback follows which agents went down and came back since a mark.
type comeback struct {
	mu     sync.Mutex
	marked bool
	down   []bool // went down since the mark
	nDown  int    // how many did
	back   []bool // and came back since
	// moved, when watched, is closed once at least one went down and
	// every one that did is back.
	moved chan struct{}
	times []time.Time // when each came back, in order
	done  chan struct{}
}

func newComeback(n int) *comeback {
	return &comeback{down: make([]bool, n), back: make([]bool, n), done: make(chan struct{})}
}

// mark starts counting.
func (c *comeback) mark() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.marked = true
	clear(c.down)
	clear(c.back)
	c.nDown = 0
	c.moved = nil
	c.times = c.times[:0]
	c.done = make(chan struct{})
}

// state is agent i's link going up or down.
func (c *comeback) state(i int, up bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.marked:
	case !up:
		if !c.down[i] {
			c.nDown++
		}
		c.down[i] = true
	case c.down[i] && !c.back[i]:
		c.back[i] = true
		c.times = append(c.times, time.Now())
		if len(c.times) == len(c.back) {
			close(c.done)
		}
		c.checkMoved()
	}
}

// watchMoved returns a channel closed once at least one agent went down
// since the mark and every one that did is back.
func (c *comeback) watchMoved() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	c.moved = ch
	c.checkMoved()
	return ch
}

// checkMoved closes moved if it is due. c.mu is held.
func (c *comeback) checkMoved() {
	if c.moved != nil && c.nDown > 0 && len(c.times) == c.nDown {
		close(c.moved)
		c.moved = nil
	}
}

// movedTimes is how many went down since the mark and when all, half and
// nine tenths of them were back, in Unix nanoseconds.
func (c *comeback) movedTimes() (down int, at, p50, p90 int64) {
	n := c.quantile(1)
	c.mu.Lock()
	down = c.nDown
	c.mu.Unlock()
	return down, n, c.quantile(0.5), c.quantile(0.9)
}

// quantile is when the fraction q of the agents had come back, in Unix
// nanoseconds; call it once done is closed.
func (c *comeback) quantile(q float64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := min(len(c.times)-1, int(q*float64(len(c.times))))
	return c.times[i].UnixNano()
}

// refusals counts what agentlink logs about dials that failed: the board
// refusing the link, and the board answering unavailable (not a dial that
// found nobody listening). It logs nothing.
type refusals struct {
	refused, unavailable atomic.Int64
}

func (r *refusals) reset() {
	r.refused.Store(0)
	r.unavailable.Store(0)
}

// count counts err, the end of a bare agent's link, as agentlink's log
// would have.
func (r *refusals) count(err error) {
	var ce *connect.Error
	if !errors.As(err, &ce) || !ce.IsRemote() {
		return
	}
	switch ce.Code() {
	case connect.CodeUnavailable:
		r.unavailable.Add(1)
	case connect.CodeFailedPrecondition, connect.CodeInvalidArgument, connect.CodeUnauthenticated, connect.CodePermissionDenied:
		r.refused.Add(1)
	}
}

func (r *refusals) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *refusals) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *refusals) WithGroup(string) slog.Handler                { return r }
func (r *refusals) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message == "board refused the link" {
		r.refused.Add(1)
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "err" {
			return true
		}
		var ce *connect.Error
		if err, ok := a.Value.Any().(error); ok && errors.As(err, &ce) && ce.IsRemote() && ce.Code() == connect.CodeUnavailable {
			r.unavailable.Add(1) // the board's answer, not a dial that failed
		}
		return false
	})
	return nil
}

// events writes Events, one JSON object a line.
type events struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (e *events) send(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.enc.Encode(ev)
}
