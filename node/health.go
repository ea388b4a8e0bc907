package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/health"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/secrets"
)

// How often a served agent runs its health checks: DefaultHealthInterval
// unless Config.HealthInterval says otherwise, from MinHealthInterval to
// MaxHealthInterval.
const (
	DefaultHealthInterval = health.DefaultInterval
	MinHealthInterval     = health.MinInterval
	MaxHealthInterval     = health.MaxInterval
)

// HealthCheck is a check a program embedding the agent adds to its built-in
// ones (Config.HealthChecks): Check returns nil when all is well,
// health.Unknownf when it cannot tell, and any other error when the agent
// cannot do that part of its job.
type HealthCheck struct {
	// Name: 1 to 64 bytes of printable UTF-8, unique among the agent's
	// checks (the built-in ones are mcp:<server>, model and waiting).
	Name  string
	Check func(ctx context.Context) error
}

// healthFile is the line that stands for a health.json the agent could
// not take its checks from.
const healthFile = "health.json"

// healthChecks runs a served agent's health checks in rounds, says each
// change of status, and reports the rounds on the link.
type healthChecks struct {
	c    *health.Checker
	name string
	out  io.Writer
	log  *slog.Logger

	mu   sync.Mutex
	link *agentlink.Link
	last health.Status // of the last round; "" before the first
}

// newHealthChecks registers the agent's checks: a's built-in ones (a may
// be nil: a flow that is only linked has none), the custom ones of the
// folder's health.json, and cfg.HealthChecks. It returns nil when the
// checks are turned off or there are none to run. A health.json that
// cannot be read does not stop the agent: its line, "health.json", fails
// every round, saying why. A check of cfg.HealthChecks that cannot be
// registered is an error naming it.
func newHealthChecks(cfg Config, name string, a *agent.Agent) (*healthChecks, error) {
	if cfg.NoHealthChecks {
		return nil, nil
	}
	safe := detailFilter(cfg)
	interval := cmp.Or(cfg.HealthInterval, DefaultHealthInterval)
	c, err := health.New(health.Options{Interval: interval, Timeout: min(health.DefaultTimeout, interval/2), Detail: safe.SafeDetail})
	if err != nil {
		return nil, fmt.Errorf("node: Config.HealthInterval: %w", err)
	}
	n := 0
	if a != nil {
		for _, k := range a.HealthChecks() {
			run := k.Run
			if k.Name == "model" {
				run = modelCheck(run)
			}
			if err := c.Register(k.Name, run); err != nil {
				return nil, fmt.Errorf("node: the built-in health check %s: %w", k.Name, err)
			}
			n++
		}
	}
	for i, k := range cfg.HealthChecks {
		if err := c.Register(k.Name, k.Check); err != nil {
			return nil, fmt.Errorf("node: Config.HealthChecks[%d]: %w", i, err)
		}
		n++
	}
	specs, err := health.Load(cfg.Dir)
	for _, s := range specs {
		if rerr := c.Register(s.Name, s.Check()); rerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: %w", healthFile, rerr))
		}
		n++
	}
	if err != nil {
		bad := err
		if rerr := c.Register(healthFile, func(context.Context) error { return bad }); rerr != nil {
			return nil, fmt.Errorf("node: %w (and it cannot be said: %w)", bad, rerr)
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	return &healthChecks{c: c, name: name, out: cfg.Stdout, log: cfg.Logger}, nil
}

// checkHealthChecks refuses a check of Config.HealthChecks without a
// function, or whose name health refuses (empty, too long, given twice).
func checkHealthChecks(checks []HealthCheck) error {
	if len(checks) == 0 {
		return nil
	}
	c, err := health.New(health.Options{})
	if err != nil {
		return err
	}
	for i, k := range checks {
		if k.Check == nil {
			return fmt.Errorf("node: Config.HealthChecks[%d] (%q): Check is nil", i, k.Name)
		}
		if err := c.Register(k.Name, k.Check); err != nil {
			return fmt.Errorf("node: Config.HealthChecks[%d]: %w", i, err)
		}
	}
	return nil
}

// detailFilter is what a check's detail passes through before it leaves
// the process: the values of the process's environment, and of the
// variables the agent is known to be given (which may come from elsewhere
// than the process's environment: cfg.Getenv), and whatever is shaped like
// a credential (secrets.SafeDetail).
func detailFilter(cfg Config) *secrets.Set {
	list := secrets.In(os.Environ())
	named, err := namedSecrets(cfg)
	if err != nil {
		getenv := cfg.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		named = secrets.Named(llm.SecretEnv(), getenv) // the env files cannot be read: the model's, at least
	}
	set := secrets.NewSet(append(list, named...))
	cfg.follow.add(set)
	return set
}

// modelCheck reads a provider that is rate limiting (429) as unknown: the
// key and the endpoint work, and whether a call would be answered now
// cannot be told.
func modelCheck(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		err := run(ctx)
		var pe *llm.ProviderError
		if errors.As(err, &pe) && pe.StatusCode == http.StatusTooManyRequests {
			return health.Unknownf("%w", err)
		}
		return err
	}
}

// use reports every round on l from now on.
func (h *healthChecks) use(l *agentlink.Link) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.link = l
}

// run runs a round at once and then one every interval, until ctx ends.
func (h *healthChecks) run(ctx context.Context) {
	h.c.Run(ctx, h.report)
}

// report says a round whose status differs from the last one's, and hands
// every round to the link, which tells the board when it should.
func (h *healthChecks) report(r health.Round) {
	h.mu.Lock()
	changed := r.Status != h.last
	h.last = r.Status
	link := h.link
	h.mu.Unlock()
	if changed {
		line := healthLine(h.name, r)
		fmt.Fprintln(h.out, line)
		level := slog.LevelInfo
		if r.Status != health.OK {
			level = slog.LevelWarn
		}
		h.log.Log(context.Background(), level, "health", "status", string(r.Status), "round", line)
	}
	if link == nil {
		return
	}
	if err := link.ReportHealth(healthOf(r)); err != nil {
		h.log.Warn("a health round not reported to the board", "err", err)
	}
}

// healthLine says a round: "agent NAME: health ok (3 checks)", or its
// status and each line that is not ok, with its detail.
func healthLine(name string, r health.Round) string {
	if r.Status == health.OK {
		return fmt.Sprintf("agent %s: health ok (%d checks)", name, len(r.Lines))
	}
	var bad []string
	for _, l := range r.Lines {
		if l.Status != health.OK {
			bad = append(bad, fmt.Sprintf("%s %s: %s", l.Name, l.Status, l.Detail))
		}
	}
	return fmt.Sprintf("agent %s: health %s: %s", name, r.Status, strings.Join(bad, "; "))
}

// healthOf is r as the link reports it.
func healthOf(r health.Round) agentlink.Health {
	h := agentlink.Health{Status: string(r.Status), Start: r.Start, Checks: make([]agentlink.HealthCheck, len(r.Lines))}
	for i, l := range r.Lines {
		h.Checks[i] = agentlink.HealthCheck{Name: l.Name, Status: string(l.Status), Took: l.Duration, Detail: l.Detail}
	}
	return h
}
