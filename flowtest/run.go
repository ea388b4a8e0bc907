package flowtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
)

// Config configures Run.
type Config struct {
	// Timeout: how long one case may run, answers included; more fails
	// the case. 0: DefaultTimeout.
	Timeout time.Duration
	// Registry: the Go handlers, routers and reducers of a program
	// embedding the agent, as agent.Config.Registry. Empty: the folder's
	// executables and handlers.json provide them.
	Registry flow.Registry
	// Getenv: the environment the folder's handler executables are given,
	// as agent.Config.Getenv. nil: none. It never chooses a model.
	Getenv func(string) string
	// Run: when set, only the cases whose name it matches run.
	Run *regexp.Regexp

	children map[string]*flow.Flow // the folder's registered agents, once read
	read     bool                  // children was read
}

// Children reads the flows of the agents dir's agents.json registers, by
// name: those a case may mock as "<agent>/<node>". None when the folder
// has no registry, or one that cannot be loaded (opening the agent says
// why).
func Children(dir string) map[string]*flow.Flow {
	reg, err := agents.Load(filepath.Join(dir, agents.FileName))
	if err != nil {
		return nil
	}
	out := map[string]*flow.Flow{}
	for _, name := range reg.Names() {
		if a, ok := reg.Agent(name); ok {
			out[name] = a.Flow
		}
	}
	return out
}

// FileResult is what one test file came to.
type FileResult struct {
	// File is the test file's name, without its folder.
	File string `json:"file"`
	// Problems is everything wrong with the file (SpecProblems); a file
	// with problems runs no case.
	Problems []Problem `json:"problems"`
	// Cases is each case run, in the file's order.
	Cases []CaseResult `json:"cases"`
}

// CaseResult is what one case came to.
type CaseResult struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Failure is DescribeFailure's lines; empty when the case passed.
	Failure []string `json:"failure"`
	// Unused is the mocks the run never reached: reported, never a
	// failure.
	Unused Unused `json:"unused"`
	// Path is the nodes whose steps ended, in order.
	Path       []string `json:"path"`
	DurationMS int64    `json:"duration_ms"`
}

// Summary counts results: passed and failed cases, and test files with
// problems.
type Summary struct {
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Problems int `json:"files_with_problems"`
}

// Summarize counts rs.
func Summarize(rs []FileResult) Summary {
	var s Summary
	for _, r := range rs {
		if len(r.Problems) > 0 {
			s.Problems++
		}
		for _, c := range r.Cases {
			if c.Passed {
				s.Passed++
			} else {
				s.Failed++
			}
		}
	}
	return s
}

// OK reports that nothing failed and no file had a problem.
func (s Summary) OK() bool { return s.Failed == 0 && s.Problems == 0 }

// ErrNoTests is a folder with no test file beside its flow.
var ErrNoTests = errors.New("no *" + Suffix + " beside flow.json")

// Run runs every test file in dir (Files), in name order, each case with
// the folder as package agent opens it: its handler executables,
// handlers.json and agents.json, with cfg.Registry, but the case's mocks
// for the model and the tools and the runs kept in memory. The error is a
// folder whose flow cannot be loaded or opened, or that has no test file.
func Run(ctx context.Context, dir string, cfg Config) ([]FileResult, error) {
	f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		return nil, err
	}
	if err := flow.Check(f); err != nil {
		return nil, err
	}
	paths, err := Files(dir)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoTests)
	}
	var out []FileResult
	for _, p := range paths {
		r, err := RunFile(ctx, dir, f, p, cfg)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RunFile runs the test file at path against the flow f of dir. The error
// is a folder the agent cannot be opened from (the first case says it).
func RunFile(ctx context.Context, dir string, f *flow.Flow, path string, cfg Config) (FileResult, error) {
	r := FileResult{File: filepath.Base(path), Problems: []Problem{}, Cases: []CaseResult{}}
	data, err := Read(path)
	if err != nil {
		r.Problems = append(r.Problems, Problem{Code: CodeTooLarge, Message: err.Error()})
		return r, nil
	}
	if !cfg.read {
		cfg.children, cfg.read = Children(dir), true
	}
	if ps := SpecProblemsWith(f, cfg.children, data); len(ps) > 0 {
		r.Problems = ps
		return r, nil
	}
	tf, err := Parse(data)
	if err != nil {
		r.Problems = append(r.Problems, Problem{Code: CodeInvalidJSON, Message: err.Error()})
		return r, nil
	}
	for _, c := range tf.Cases {
		if cfg.Run != nil && !cfg.Run.MatchString(c.Name) {
			continue
		}
		cr, err := RunCase(ctx, dir, f, c, cfg)
		if err != nil {
			return r, err
		}
		r.Cases = append(r.Cases, cr)
	}
	return r, nil
}

// thread is the one thread a case runs on.
const thread = "test"

// Driven is what Drive made of a run.
type Driven struct {
	// State is the last state the run had.
	State map[string]any
	// Steps counts the steps of every Invoke and Resume.
	Steps int
	// Err is why the run failed; nil when it finished or stopped for
	// want of an answer.
	Err error
	// Problems say where the answers and the run's stops disagreed: a stop
	// with no answer left, answers never asked for.
	Problems []string
}

// Drive invokes g on thread with input and answers the asks and approvals
// it stops at with answers, in order, as a case's answers do.
func Drive(ctx context.Context, g *flow.Graph, thread string, input map[string]any, answers []any) Driven {
	var d Driven
	res, err := g.Invoke(ctx, thread, input)
	d.Steps += res.Steps
	for err == nil && res.Pending != nil {
		if len(answers) == 0 {
			p := res.Pending
			d.Problems = append(d.Problems, fmt.Sprintf("the run stopped at node %s for an %s (%q) and the case has no answer left", p.Node, p.Kind, p.Question))
			break
		}
		res, err = g.Resume(ctx, thread, answers[0])
		d.Steps += res.Steps
		answers = answers[1:]
	}
	if err == nil && len(answers) > 0 {
		d.Problems = append(d.Problems, fmt.Sprintf("the case gives %d answers the run never asked for", len(answers)))
	}
	d.State, d.Err = res.State, err
	return d
}

// RunCase runs one case. The error is a folder the agent cannot be opened
// from; everything a run does is in the result.
func RunCase(ctx context.Context, dir string, f *flow.Flow, c Case, cfg Config) (CaseResult, error) {
	start := time.Now()
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if !cfg.read {
		cfg.children = Children(dir)
	}
	m := newMocks(c.Mock, f, cfg.children)
	var mu sync.Mutex
	path := []string{}
	watch := func(_ context.Context, e flow.Event) {
		// A child's nodes (a delegation) run on threads of their own.
		if e.Thread != thread || e.Kind != flow.EventNodeFinished {
			return
		}
		if e.Outcome == flow.OutcomeOK || e.Outcome == flow.OutcomeFailed {
			mu.Lock()
			path = append(path, e.Node)
			mu.Unlock()
		}
	}
	a, err := agent.Open(ctx, dir, agent.Config{
		Getenv:   cfg.Getenv,
		Registry: cfg.Registry,
		Model:    m,
		Tools:    m.Call,
		InMemory: true,
		Watch:    watch,
	})
	if err != nil {
		return CaseResult{}, err
	}
	defer a.Close()

	var o Outcome
	d := Drive(ctx, a.Graph, thread, c.Input, c.Answers)
	o.State, o.Err, o.Problems = d.State, d.Err, d.Problems
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		o.Problems = append(o.Problems, fmt.Sprintf("the case did not end within its time limit, %s (--timeout)", timeout))
	}
	calls, unprovided := m.snapshot()
	mu.Lock()
	o.Path = path
	mu.Unlock()

	e := c.Expect
	if len(unprovided) > 0 || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The case is not written for the run it got, or the run never
		// ended: what it expected of the rest says nothing more.
		o.Problems, o.Err, e = append(unprovided, o.Problems...), nil, Expect{}
	}
	failure := DescribeFailure(e, o)
	if failure == nil {
		failure = []string{}
	}
	return CaseResult{
		Name:       c.Name,
		Passed:     len(failure) == 0,
		Failure:    failure,
		Unused:     UnusedMocks(c.Mock, calls),
		Path:       o.Path,
		DurationMS: time.Since(start).Milliseconds(),
	}, nil
}
