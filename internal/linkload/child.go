package linkload

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

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
	)
	wg.Go(func() {
		dial(ctx, plan, func(i int, c Credential) {
			if i < plan.Probes {
				p := &probe{url: url, tls: tlsConf, cred: c, every: plan.ProbeEvery, rec: &rec, up: &up}
				wg.Go(func() { p.run(ctx, &drops) })
				return
			}
			link, err := agentlink.New(agentlink.Config{
				BoardURL:   url,
				TLS:        tlsConf,
				Token:      c.Token,
				Identity:   agentlink.Identity{Name: c.Name},
				MinBackoff: 50 * time.Millisecond,
				MaxBackoff: 2 * time.Second,
				OnState: func(s agentlink.State) {
					if s.Up {
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
		})
	})
	defer wg.Wait()

	// Up: every agent linked at once.
	n := int64(len(plan.Agents))
	tick := time.NewTicker(20 * time.Millisecond)
	for up.Load() != n {
		select {
		case <-ctx.Done():
			tick.Stop()
			return nil
		case <-tick.C:
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
