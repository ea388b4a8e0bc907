package evals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/flowtest"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/secrets"
)

// Config configures Run.
type Config struct {
	// Getenv: the model settings of the agent (OPENAI_*) and of the judge
	// (JUDGE_*), and the environment of the folder's handlers. nil: none,
	// so the stand-in answers both.
	Getenv func(string) string
	// Registry: the Go handlers of a program embedding the agent, as
	// agent.Config.Registry.
	Registry flow.Registry
	// Timeout: how long one case's run may take, answers included, and
	// then its judge as long again; more ends the case as an agent (or
	// judge) error. 0: DefaultTimeout.
	Timeout time.Duration
	// Run: when set, only the cases whose name it matches run.
	Run *regexp.Regexp
	// Journal: keep the run's record beside the suite (journal.go). false:
	// nothing is written. Never kept for a suite given in memory.
	Journal bool
	// Now: the clock of the record; nil: time.Now.
	Now func() time.Time
}

// The statuses of a case.
const (
	StatusScored     = "scored"
	StatusAgentError = "agent_error"
	StatusJudgeError = "judge_error"
)

// CaseResult is what one case came to.
type CaseResult struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Status is StatusScored, StatusAgentError or StatusJudgeError.
	Status string `json:"status"`
	// Score is the weighted mean of the criteria's scores; nil unless
	// scored.
	Score    *float64         `json:"score,omitempty"`
	Criteria map[string]Score `json:"criteria,omitempty"`
	Metrics  Metrics          `json:"metrics"`
	Checks   []Check          `json:"checks"`
	// Output is the judged channels, each as JSON cut at MaxOutputBytes.
	Output map[string]string `json:"output"`
	Usage  CaseUsage         `json:"usage"`
	Events []Event           `json:"events"`
	// EventsDropped counts the events past MaxEvents.
	EventsDropped int `json:"events_dropped,omitempty"`
	// UnusedMocks are the tools the case mocks that the run never called.
	UnusedMocks []string `json:"unused_mocks,omitempty"`
	// Error says why the case is an agent or a judge error.
	Error string `json:"error,omitempty"`
}

// Metrics are what a case's run took.
type Metrics struct {
	LatencyMS  int64 `json:"latency_ms"`
	Steps      int   `json:"steps"`
	ModelCalls int   `json:"model_calls"`
	ToolCalls  int   `json:"tool_calls"`
}

// Check is one of a case's expectations, met or not.
type Check struct {
	Check  string `json:"check"` // state, path or error
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
}

// CaseUsage keeps the agent's tokens and the judge's apart.
type CaseUsage struct {
	Agent Usage `json:"agent"`
	Judge Usage `json:"judge"`
}

// Event is one thing a case's run did.
type Event struct {
	AtMS    int64  `json:"at_ms"` // since the case began
	Kind    string `json:"kind"`
	Node    string `json:"node,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Result is one run of a suite.
type Result struct {
	// File is the suite's name; Flow the flow's name; Build its digest,
	// as the agent announces it to the board.
	File  string    `json:"file"`
	Flow  string    `json:"flow"`
	Build string    `json:"build"`
	At    time.Time `json:"at"`
	// Model says which model the agent asked; Judge is the judge's model
	// name, or StandInJudge.
	Model      string      `json:"model"`
	Judge      string      `json:"judge"`
	Total      int         `json:"total"`
	Completed  int         `json:"completed"`
	Summary    Summary     `json:"summary"`
	Thresholds *Thresholds `json:"thresholds,omitempty"`
	// Passed: the thresholds met, no agent or judge error, every check
	// passed.
	Passed bool         `json:"passed"`
	Evals  []CaseResult `json:"evals"`
	// Recorded is where the record was written; "" when none was.
	Recorded string   `json:"recorded"`
	Warnings []string `json:"warnings,omitempty"`
}

// Summary is a run's numbers.
type Summary struct {
	// Score is the mean score of the scored cases; nil when none was.
	Score *float64 `json:"score"`
	// Criteria is each criterion's mean over the scored cases.
	Criteria         map[string]float64 `json:"criteria"`
	AverageLatencyMS int64              `json:"average_latency_ms"`
	Usage            CaseUsage          `json:"usage"`
	Scored           int                `json:"scored"`
	AgentErrors      int                `json:"agent_errors"`
	JudgeErrors      int                `json:"judge_errors"`
	ChecksFailed     int                `json:"checks_failed"`
}

// Run runs the suite at path of the flow folder dir: it is prepared (every
// problem an *EvalFileError before any model is built), then each case
// runs the flow for real and the judge scores its answer. With
// cfg.Journal, the result is kept beside the suite (Recorded).
func Run(ctx context.Context, dir, path string, cfg Config) (*Result, error) {
	data, err := read(path, MaxFileBytes)
	if err != nil {
		return nil, &EvalFileError{File: filepath.Base(path), Problems: []Problem{{Code: CodeTooLarge, Message: err.Error()}}}
	}
	p, err := prepare(dir, path, filepath.Base(path), data, cfg.Run)
	if err != nil {
		return nil, err
	}
	return run(ctx, p, cfg)
}

// RunSuite runs a suite given in memory as if it were the file named file
// in dir (its dataset is read from dir). Nothing is kept.
func RunSuite(ctx context.Context, dir, file string, s *Suite, cfg Config) (*Result, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	p, err := prepare(dir, "", file, data, cfg.Run)
	if err != nil {
		return nil, err
	}
	cfg.Journal = false
	return run(ctx, p, cfg)
}

func run(ctx context.Context, p *plan, cfg Config) (*Result, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	m, name, line, err := judgeModel(cfg.Getenv, p.suite.Judge.Model)
	if err != nil {
		return nil, err
	}
	j, err := newJudge(p.suite, m, name, line)
	if err != nil {
		return nil, err
	}
	_, agentModel := llm.FromEnv(cfg.Getenv)
	r := &Result{
		File: p.file, Flow: p.flow.Name, Build: p.build, At: now().UTC(), Model: agentModel, Judge: j.name,
		Total: len(p.cases), Thresholds: p.suite.Thresholds, Evals: []CaseResult{},
	}
	// What the judge is shown never holds a named secret: the models'
	// keys, the flow's requires.env, the folder's env files.
	names := append(llm.SecretEnv(), JudgeSecretEnv()...)
	if p.flow.Requires != nil {
		names = append(names, p.flow.Requires.Env...)
	}
	if more, err := secrets.NamesIn(p.dir); err == nil {
		names = append(names, more...)
	}
	hide := secrets.NewSet(secrets.Named(names, cfg.Getenv))
	err = p.each(func(c Case, source string, _ map[string]any) error {
		if p.filter != nil && !p.filter.MatchString(c.Name) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		cr := runCase(ctx, p, c, source, cfg, j, hide)
		r.Evals = append(r.Evals, cr)
		return nil
	}, false)
	if err != nil && len(r.Evals) == 0 {
		return nil, err
	}
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the run stopped after %d cases: %v", len(r.Evals), err))
	}
	summarize(r, p.suite)
	if cfg.Journal && p.path != "" {
		rec, werr := record(p.path, r)
		if werr != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the run's record was not kept: %v", werr))
		}
		r.Recorded = rec
	}
	return r, nil
}

// evalThread is the one thread a case runs on.
const evalThread = "eval"

func runCase(ctx context.Context, p *plan, c Case, source string, cfg Config, j *judge, hide *secrets.Set) CaseResult {
	cr := CaseResult{Name: c.Name, Source: source, Checks: []Check{}, Events: []Event{}, Output: map[string]string{}}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	model := &usageModel{}
	var tools *flowtest.ToolMocks
	var mu sync.Mutex
	path := []string{}
	watch := func(_ context.Context, e flow.Event) {
		if e.Thread != evalThread {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == flow.EventNodeFinished && (e.Outcome == flow.OutcomeOK || e.Outcome == flow.OutcomeFailed) {
			path = append(path, e.Node)
		}
		if len(cr.Events) >= MaxEvents {
			cr.EventsDropped++
			return
		}
		ev := Event{AtMS: time.Since(start).Milliseconds(), Kind: e.Kind.String(), Node: e.Node, Outcome: e.Outcome}
		if e.Err != nil {
			ev.Error = hide.Without(e.Err.Error())
		}
		cr.Events = append(cr.Events, ev)
	}
	acfg := agent.Config{
		Getenv:    cfg.Getenv,
		Registry:  cfg.Registry,
		InMemory:  true,
		Watch:     watch,
		WrapModel: func(m flow.Model) flow.Model { model.next = m; return model },
	}
	mock := flowtest.Mock{Tools: c.Mock.Tools}
	if mocksEvery(p.flow, c.Mock) {
		// Every tool the flow declares is mocked: no MCP server is
		// started for a case that would call none of them.
		tools = flowtest.NewToolMocks(mock, p.flow, nil)
		acfg.Tools = tools.Call
	} else {
		acfg.WrapTools = func(call flow.ToolCaller) flow.ToolCaller {
			tools = flowtest.NewToolMocks(mock, p.flow, call)
			return tools.Call
		}
	}
	a, err := agent.Open(cctx, p.dir, acfg)
	if err != nil {
		cr.Status, cr.Error = StatusAgentError, "the agent could not be opened: "+hide.Without(err.Error())
		cr.Metrics.LatencyMS = time.Since(start).Milliseconds()
		return cr
	}
	d := flowtest.Drive(cctx, a.Graph, evalThread, c.Input, c.Answers)
	a.Close()
	cr.Metrics.LatencyMS = time.Since(start).Milliseconds()
	cr.Metrics.Steps = d.Steps
	cr.Metrics.ModelCalls, cr.Usage.Agent = model.take()
	if tools != nil {
		calls := tools.Calls()
		for _, k := range calls.Tools {
			cr.Metrics.ToolCalls += k
		}
		cr.UnusedMocks = flowtest.UnusedMocks(mock, calls).Tools
		d.Problems = append(tools.Unprovided(), d.Problems...)
	} else if len(c.Mock.Tools) > 0 {
		cr.UnusedMocks = slices.Sorted(maps.Keys(c.Mock.Tools))
	}
	mu.Lock()
	o := flowtest.Outcome{State: d.State, Path: slices.Clone(path), Err: d.Err}
	mu.Unlock()

	var problems []string
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		problems = append(problems, fmt.Sprintf("the case did not end within its time limit, %s (--timeout)", cfg.Timeout))
	case len(d.Problems) > 0:
		problems = d.Problems
	case d.Err != nil && (c.Expect.Error == "" || !containsErr(d.Err, c.Expect.Error)):
		problems = append(problems, "the run failed: "+d.Err.Error())
	}
	if len(problems) == 0 {
		cr.Checks = checks(c.Expect, o)
	}
	cr.Output = judged(p, o)
	if len(problems) > 0 {
		cr.Status, cr.Error = StatusAgentError, hide.Without(joinLines(problems))
		return cr
	}
	answer := maps.Clone(cr.Output)
	if d.Err != nil {
		answer["(the run failed)"] = d.Err.Error()
	}
	prompt := hide.Without(judgePrompt(p.suite, c, answer))
	jctx, jcancel := context.WithTimeout(ctx, cfg.Timeout)
	defer jcancel()
	scores, err := j.score(jctx, prompt)
	_, cr.Usage.Judge = j.usage.take()
	if err != nil {
		cr.Status, cr.Error = StatusJudgeError, hide.Without(err.Error())
		return cr
	}
	for k, s := range scores {
		s.Reason = hide.Without(s.Reason)
		scores[k] = s
	}
	cr.Status, cr.Criteria = StatusScored, scores
	var sum, weights float64
	for _, crit := range p.suite.Criteria {
		sum += scores[crit.Name].Score * crit.weight()
		weights += crit.weight()
	}
	score := sum / weights
	cr.Score = &score
	return cr
}

func containsErr(err error, text string) bool {
	return err != nil && len(text) > 0 && contains(err.Error(), text)
}

// checks compares what the case expects with what the run did, one check
// each for state, path and error, in flowtest.DescribeFailure's words.
func checks(e flowtest.Expect, o flowtest.Outcome) []Check {
	var out []Check
	one := func(name string, part flowtest.Expect) {
		lines := flowtest.DescribeFailure(part, o)
		out = append(out, Check{Check: name, Passed: len(lines) == 0, Detail: joinLines(lines)})
	}
	if e.State != nil {
		one("state", flowtest.Expect{State: e.State})
	}
	if e.Path != nil {
		one("path", flowtest.Expect{Path: e.Path})
	}
	if e.Error != "" {
		one("error", flowtest.Expect{Error: e.Error})
	}
	if out == nil {
		out = []Check{}
	}
	return out
}

// judged is the channels the judge reads of the run's state, each as JSON
// cut at MaxOutputBytes: the suite's output, else every channel written.
func judged(p *plan, o flowtest.Outcome) map[string]string {
	out := map[string]string{}
	names := p.output
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(o.State))
	}
	for _, ch := range names {
		v, ok := o.State[ch]
		if !ok || ch == flow.ErrorChannel {
			continue
		}
		if s, ok := v.(string); ok {
			out[ch] = cut(s)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		out[ch] = cut(string(b))
	}
	return out
}

// mocksEvery reports whether m mocks every tool f declares (and f
// declares some).
func mocksEvery(f *flow.Flow, m Mock) bool {
	declared := flowtest.DeclaredTools(f)
	if len(declared) == 0 {
		return false
	}
	covered := map[string]bool{}
	for k := range m.Tools {
		if full, err := flowtest.ResolveTool(declared, k); err == nil {
			covered[full] = true
		}
	}
	for name := range declared {
		if !covered[name] {
			return false
		}
	}
	return true
}

// summarize counts r's cases and decides whether it passed.
func summarize(r *Result, s *Suite) {
	sm := Summary{Criteria: map[string]float64{}}
	var total float64
	var latency int64
	for _, c := range r.Evals {
		latency += c.Metrics.LatencyMS
		sm.Usage.Agent.add(c.Usage.Agent)
		sm.Usage.Judge.add(c.Usage.Judge)
		for _, ch := range c.Checks {
			if !ch.Passed {
				sm.ChecksFailed++
			}
		}
		switch c.Status {
		case StatusScored:
			sm.Scored++
			total += *c.Score
			for k, v := range c.Criteria {
				sm.Criteria[k] += v.Score
			}
		case StatusAgentError:
			sm.AgentErrors++
		case StatusJudgeError:
			sm.JudgeErrors++
		}
	}
	r.Completed = len(r.Evals) - sm.AgentErrors
	if len(r.Evals) > 0 {
		sm.AverageLatencyMS = latency / int64(len(r.Evals))
	}
	if sm.Scored > 0 {
		mean := total / float64(sm.Scored)
		sm.Score = &mean
		for k := range sm.Criteria {
			sm.Criteria[k] /= float64(sm.Scored)
		}
	}
	r.Summary = sm
	passed := sm.AgentErrors == 0 && sm.JudgeErrors == 0 && sm.ChecksFailed == 0 && len(r.Evals) == r.Total
	if t := s.Thresholds; t != nil && passed {
		if t.Score != nil && (sm.Score == nil || *sm.Score < *t.Score) {
			passed = false
		}
		for k, want := range t.Criteria {
			if got, ok := sm.Criteria[k]; !ok || got < want {
				passed = false
			}
		}
	}
	r.Passed = passed
}
