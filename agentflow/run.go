package agentflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Limits of a run, whatever the workflow's limits block says
// (docs/limits.md).
const (
	// DefaultConcurrency is how many agent() calls may be in flight at
	// once when the workflow's limits do not say concurrency.
	DefaultConcurrency = 4
	// DefaultAgentRuns is how many agent() calls a run may make when the
	// workflow's limits do not say agent_runs.
	DefaultAgentRuns = 100
	// DefaultDuration bounds a run when its limits do not say duration.
	DefaultDuration = time.Hour
	// MaxMapItems is the most elements a parallel map goes over.
	MaxMapItems = 10_000
	// DefaultRetryBackoff is the wait before an agent() call's first retry,
	// doubled before each next one up to MaxRetryBackoff.
	DefaultRetryBackoff = 500 * time.Millisecond
	// MaxRetryBackoff is the longest wait between two tries.
	MaxRetryBackoff = 10 * time.Second
	// MaxRetryAttempts is the most extra tries retry's attempts may ask.
	MaxRetryAttempts = 10
)

// Config is what a run needs beyond the file and its input.
type Config struct {
	// Workflow names the workflow to run. Empty means the file's only
	// one; a file with several must name one.
	Workflow string
	// Context is the workflow's context value, held to its context type;
	// nil for a workflow without one (or to pass null).
	Context any
	// Model answers agent() calls whose target Agents does not answer.
	// Nil makes every such agent() call fail.
	Model Model
	// Agents, when set, resolves the workflow's use statements before the
	// run starts (after the file, the input and the context are checked,
	// before any stage): it is asked once for each use, in source order,
	// which Model answers the agent() calls whose target is that use's
	// alias. A nil Model leaves them to Model. An error refuses the run
	// before anything runs: a *RunError at the use statement, its Message
	// `use agent "R"`, wrapping the error.
	Agents func(context.Context, Resource) (Model, error)
	// Progress receives each emit progress payload, in the order they
	// are emitted. Nil discards them. Called from the run's goroutines,
	// one call at a time.
	Progress func(map[string]any)
	// Observe hears what the run does as it does it: each stage started
	// and finished, each agent() call made and ended, each emit progress
	// (Event). Nil hears nothing. Called from the run's goroutines, on
	// the context the step runs on; it must be safe for concurrent use
	// and must not block.
	Observe func(context.Context, Event)
	// RetryBackoff is the wait before an agent() call's first retry.
	// Zero means DefaultRetryBackoff; negative means none.
	RetryBackoff time.Duration
}

// Resource is a use statement of the workflow being run, as Config.Agents
// is asked to resolve it.
type Resource struct {
	// Kind is "agent" or "team".
	Kind string
	// ID is the resource string as written, "reviewer@1".
	ID string
	// Alias is the name the workflow calls it by.
	Alias string
	// Pos is the use statement's position.
	Pos Position
}

// CheckError is Run's refusal of a file with errors: the diagnostics of
// the parser or the checker, all of them (warnings and info too).
type CheckError struct {
	Diagnostics []Diagnostic
}

func (e *CheckError) Error() string {
	n := 0
	for _, d := range e.Diagnostics {
		if d.Severity == SeverityError {
			n++
		}
	}
	return fmt.Sprintf("agentflow: the file has %d errors and is not run", n)
}

// RunError is a run that failed at a place in the source: a require that
// did not hold, an agent() call that failed, a value of the wrong kind
// where the checker could not know it (a member of an any value).
type RunError struct {
	Pos     Position
	Message string
	Err     error // the cause, when another error is: an agent() call's
}

func (e *RunError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Pos, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Pos, e.Message)
}

func (e *RunError) Unwrap() error { return e.Err }

// Errors a run returns (wrapped) that a caller may branch on.
var (
	// ErrRequire: a require's condition was false; the RunError's
	// Message is the require's.
	ErrRequire = errors.New("agentflow: require failed")
	// ErrInput: the input does not fit the workflow's input type.
	ErrInput = errors.New("agentflow: the input does not fit")
	// ErrContext: the context does not fit the workflow's context type.
	ErrContext = errors.New("agentflow: the context does not fit")
	// ErrLimit: a limit of the workflow (agent_runs, duration) was reached.
	ErrLimit = errors.New("agentflow: limit reached")
)

// Run checks f and runs one of its workflows with input (a value as
// encoding/json decodes one into an any), returning what the pipeline
// returns. A file with checker errors is not run: the error is a
// *CheckError. The input is held to the workflow's input type first
// (ErrInput, naming the field). Stages run in source order, each in a
// scope of the workflow's names and its declared dependencies; a require
// that fails ends the run with a *RunError wrapping ErrRequire. The
// workflow's limits hold for the whole run: concurrency (agent() calls in
// flight at once), agent_runs (agent() calls made) and duration (the
// whole run); without them, the defaults above.
func Run(ctx context.Context, f *File, input any, cfg Config) (any, error) {
	if f == nil {
		return nil, errors.New("agentflow: no file")
	}
	if diags := CheckFile(f); HasErrors(diags) {
		return nil, &CheckError{Diagnostics: diags}
	}
	w, err := choose(f, cfg.Workflow)
	if err != nil {
		return nil, err
	}
	d := declare(w, nil)
	if err := conform(input, d.resolve(w.Param.Type, true, nil), "input"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	r := &run{cfg: cfg, decls: d, concurrency: DefaultConcurrency, agentRuns: DefaultAgentRuns, duration: DefaultDuration}
	ws := newEnv(nil)
	ws.set("input", input)
	if w.Context != nil {
		if err := conform(cfg.Context, d.resolve(w.Context.Type, true, nil), "context"); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrContext, err)
		}
		ws.set("context", cfg.Context)
	}
	var pipeline *Pipeline
	for _, m := range w.Members {
		switch m := m.(type) {
		case *Use:
			if cfg.Agents != nil {
				am, err := cfg.Agents(ctx, Resource{Kind: m.Kind, ID: m.Resource.Value, Alias: m.Alias.Name, Pos: m.Pos()})
				if err != nil {
					return nil, &RunError{Pos: m.Pos(), Message: fmt.Sprintf("use %s %q", m.Kind, m.Resource.Value), Err: err}
				}
				if am != nil {
					if r.models == nil {
						r.models = map[string]Model{}
					}
					r.models[m.Alias.Name] = am
				}
			}
			if m.Kind == "agent" {
				ws.set(m.Alias.Name, target{alias: m.Alias.Name, resource: m.Resource.Value})
			} else {
				ws.set(m.Alias.Name, team{alias: m.Alias.Name, resource: m.Resource.Value})
			}
		case *Limits:
			r.limits(m)
		case *Pipeline:
			pipeline = m
		}
	}
	if err := r.checkTools(pipeline); err != nil {
		return nil, err
	}
	r.slots = make(chan struct{}, r.concurrency)
	ctx, cancel := context.WithTimeoutCause(ctx, r.duration, fmt.Errorf("%w: the run took longer than its duration of %s", ErrLimit, r.duration))
	defer cancel()
	out, err := r.pipeline(ctx, pipeline, ws)
	if err != nil {
		if c := context.Cause(ctx); c != nil && errors.Is(c, ErrLimit) {
			return nil, c
		}
		return nil, err
	}
	if err := conform(out, d.resolve(w.Output, true, nil), "the output"); err != nil {
		return nil, fmt.Errorf("agentflow: %v", err)
	}
	return out, nil
}

func choose(f *File, name string) (*Workflow, error) {
	if name == "" {
		if len(f.Workflows) != 1 {
			names := make([]string, len(f.Workflows))
			for i, w := range f.Workflows {
				names[i] = w.Name.Name
			}
			return nil, fmt.Errorf("agentflow: the file has %d workflows (%s): name the one to run", len(f.Workflows), strings.Join(names, ", "))
		}
		return f.Workflows[0], nil
	}
	for _, w := range f.Workflows {
		if w.Name.Name == name {
			return w, nil
		}
	}
	return nil, fmt.Errorf("agentflow: the file has no workflow %s", name)
}

// team is a use team alias's value.
type team struct{ alias, resource string }

// run is one run's state.
type run struct {
	cfg    Config
	decls  *decls
	models map[string]Model // by use alias, what Config.Agents resolved

	concurrency, agentRuns int
	duration               time.Duration
	slots                  chan struct{} // agent() calls in flight

	mu       sync.Mutex
	calls    int // agent() calls made
	emits    int // emit progress statements run
	progress sync.Mutex
}

func (r *run) limits(l *Limits) {
	for _, f := range l.Fields {
		switch v := f.Value.(type) {
		case *NumberLit:
			switch f.Name.Name {
			case "concurrency":
				r.concurrency = int(v.Value)
			case "agent_runs":
				r.agentRuns = int(v.Value)
			}
		case *DurationLit:
			r.duration = time.Duration(v.Millis) * time.Millisecond
		}
	}
}

// env is a frame of values: the run-time twin of the checker's scope.
// A frame is written only by the goroutine that made it, before any
// other reads it.
type env struct {
	parent *env
	vals   map[string]any
}

func newEnv(parent *env) *env { return &env{parent: parent} }

func (e *env) set(name string, v any) {
	if e.vals == nil {
		e.vals = make(map[string]any, 4)
	}
	e.vals[name] = v
}

func (e *env) get(name string) (any, bool) {
	for ; e != nil; e = e.parent {
		if v, ok := e.vals[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// returned is a return statement's value on its way out of a block.
type returned struct{ v any }

// pipeline runs the pipeline's statements in source order.
func (r *run) pipeline(ctx context.Context, p *Pipeline, ws *env) (any, error) {
	ps := newEnv(ws)
	ret, err := r.block(ctx, p.Body, ps, ws, "")
	if err != nil {
		return nil, err
	}
	if ret == nil {
		return nil, &RunError{Pos: p.End(), Message: "the pipeline ended without return"}
	}
	return ret.v, nil
}

// block runs statements in s; ws is the workflow's frame, a stage's
// parent. It stops at the first return, with its value.
func (r *run) block(ctx context.Context, body []Stmt, s, ws *env, stage string) (*returned, error) {
	for _, st := range body {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch st := st.(type) {
		case *Stage:
			v, err := r.stage(ctx, st, s, ws)
			if err != nil {
				return nil, err
			}
			s.set(st.Name.Name, v)
		case *Let:
			v, err := r.eval(ctx, st.Value, s)
			if err != nil {
				return nil, err
			}
			s.set(st.Name.Name, v)
		case *Require:
			ok, err := r.cond(ctx, st.Cond, s, "require")
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &RunError{Pos: st.Pos(), Message: st.Message.Value, Err: ErrRequire}
			}
		case *Emit:
			v, err := r.eval(ctx, st.Payload, s)
			if err != nil {
				return nil, err
			}
			r.progress.Lock()
			if r.cfg.Progress != nil {
				r.cfg.Progress(v.(map[string]any))
			}
			r.emits++
			r.tell(ctx, Event{Kind: EventProgress, Name: stage, Call: r.emits, Pos: st.Pos(), Payload: v.(map[string]any)})
			r.progress.Unlock()
		case *Return:
			v, err := r.eval(ctx, st.Value, s)
			if err != nil {
				return nil, err
			}
			return &returned{v}, nil
		case *If:
			ok, err := r.cond(ctx, st.Cond, s, "if")
			if err != nil {
				return nil, err
			}
			body := st.Else
			if ok {
				body = st.Then
			}
			if ret, err := r.block(ctx, body, newEnv(s), ws, stage); err != nil || ret != nil {
				return ret, err
			}
		}
	}
	return nil, nil
}

// stage runs a stage's body in a frame of the workflow's names and its
// dependencies' results, and holds its result to its declared type.
func (r *run) stage(ctx context.Context, st *Stage, ps, ws *env) (v any, err error) {
	start := time.Now()
	r.tell(ctx, Event{Kind: EventStageStarted, Name: st.Name.Name, Pos: st.Pos(), At: start})
	defer func() {
		end := time.Now()
		r.tell(ctx, Event{Kind: EventStageFinished, Name: st.Name.Name, Pos: st.Pos(), At: end, Duration: end.Sub(start), Err: err})
	}()
	ss := newEnv(ws)
	for _, dep := range st.After {
		v, _ := ps.get(dep.Name)
		ss.set(dep.Name, v)
	}
	ret, err := r.block(ctx, st.Body, ss, ws, st.Name.Name)
	if err != nil {
		return nil, err
	}
	if ret == nil {
		return nil, &RunError{Pos: st.End(), Message: fmt.Sprintf("stage %s ended without return", st.Name.Name)}
	}
	if err := conform(ret.v, r.decls.resolve(st.Result, false, nil), "the result of stage "+st.Name.Name); err != nil {
		return nil, &RunError{Pos: st.Pos(), Message: err.Error()}
	}
	return ret.v, nil
}

// cond evaluates a condition, which must be a bool.
func (r *run) cond(ctx context.Context, x Expr, s *env, what string) (bool, error) {
	v, err := r.eval(ctx, x, s)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, &RunError{Pos: x.Pos(), Message: fmt.Sprintf("%s's condition is %s, not bool", what, typeName(v))}
	}
	return b, nil
}
