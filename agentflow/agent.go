package agentflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Model answers the agent() calls of a run. The caller owns it: a
// provider's client behind a small adapter (cmd/agent uses the model
// `agent run` uses for a flow).
type Model interface {
	// Ask asks the agent q names to do q's task, and returns its answer:
	// JSON text that should match q.Schema. An error that wraps
	// ErrRateLimited or ErrTransient, or a time limit, may be retried
	// (retry's on).
	Ask(ctx context.Context, q Question) (string, error)
}

// Question is one try of an agent() call.
type Question struct {
	// Agent is the use alias of the target; Resource its resource id.
	Agent, Resource string
	// Member is "" for a use agent alias; for a team, "main" or the
	// member id of team.member(id).
	Member string
	// Task is the task text.
	Task string
	// Input is the input object; nil without input.
	Input map[string]any
	// Tools are the tools the call may use: nil when the call does not
	// say, empty for tools none.
	Tools []string
	// Write are the paths the call may write; nil without write.
	Write []string
	// Schema is the JSON Schema of the expect type: the answer's shape.
	Schema map[string]any
}

// Errors a Model returns (wrapped) to say which of retry's codes its
// failure is; a time limit (context.DeadlineExceeded of the call's
// timeout) is the code timeout.
var (
	ErrRateLimited = errors.New("agentflow: rate limited")
	ErrTransient   = errors.New("agentflow: transient failure")
)

// ErrAnswer: an agent's answer was not JSON of its expect type.
var ErrAnswer = errors.New("agentflow: the answer does not fit expect")

// errCode is retry's code for err, or "".
func errCode(err error, timedOut bool) string {
	switch {
	case timedOut || errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrRateLimited):
		return "rate_limit"
	case errors.Is(err, ErrTransient):
		return "transient"
	}
	return ""
}

// agent is agent(TARGET) { options }: the question asked, tried again
// on the codes retry names, the answer held to the expect type.
func (r *run) agent(ctx context.Context, x *AgentExpr, s *env) (any, error) {
	tv, err := r.target(ctx, x.Target, s)
	if err != nil {
		return nil, err
	}
	q := Question{Agent: tv.alias, Resource: tv.resource, Member: tv.member}
	var (
		expect  *Type
		timeout time.Duration
		retries int
		writeAt Position
		on      = map[string]bool{"transient": true}
	)
	for _, o := range x.Options {
		switch o := o.(type) {
		case *TaskOption:
			q.Task = o.Task.Value
		case *InputOption:
			v, err := r.eval(ctx, o.Payload, s)
			if err != nil {
				return nil, err
			}
			q.Input = v.(map[string]any)
		case *ToolsOption:
			q.Tools = []string{}
			for _, n := range o.Names {
				q.Tools = append(q.Tools, n.Name)
			}
		case *WriteOption:
			writeAt = o.Paths.Pos()
			v, err := r.eval(ctx, o.Paths, s)
			if err != nil {
				return nil, err
			}
			if err := conform(v, tPaths, "write"); err != nil {
				return nil, &RunError{Pos: o.Paths.Pos(), Message: err.Error()}
			}
			q.Write = []string{}
			for _, p := range v.([]any) {
				q.Write = append(q.Write, p.(string))
			}
		case *ExpectOption:
			expect = r.decls.resolve(o.Type, false, nil)
			sch, err := expect.JSONSchema()
			if err != nil {
				return nil, &RunError{Pos: o.Pos(), Message: "expect", Err: err}
			}
			q.Schema = sch
		case *TimeoutOption:
			timeout = time.Duration(o.Timeout.Millis) * time.Millisecond
		case *RetryOption:
			retries = int(o.Attempts.Value)
			if retries > MaxRetryAttempts {
				return nil, &RunError{Pos: o.Attempts.Pos(), Message: fmt.Sprintf("retry's attempts is at most %d, not %d", MaxRetryAttempts, retries)}
			}
			if o.On != nil {
				on = map[string]bool{}
				for _, c := range o.On {
					on[c.Name] = true
				}
			}
		}
	}
	what := "agent(" + tv.alias + ")"
	model := r.models[tv.alias]
	if model == nil {
		model = r.cfg.Model
	}
	if model == nil {
		return nil, &RunError{Pos: x.Pos(), Message: what + ": no model to ask"}
	}
	if wc, ok := model.(WriteChecker); ok {
		for _, p := range q.Write {
			if err := wc.CheckWrite(p); err != nil {
				return nil, &RunError{Pos: writeAt, Message: fmt.Sprintf("write %q of %s", p, what), Err: err}
			}
		}
	}
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	if n > r.agentRuns {
		return nil, &RunError{Pos: x.Pos(), Message: fmt.Sprintf("%s would be agent call %d of a run whose agent_runs is %d", what, n, r.agentRuns), Err: ErrLimit}
	}
	start := time.Now()
	r.tell(ctx, Event{Kind: EventAgentStarted, Name: tv.alias, Call: n, Pos: x.Pos(), At: start})
	v, tries, err := r.try(ctx, model, q, x, what, expect, timeout, retries, on)
	end := time.Now()
	r.tell(ctx, Event{Kind: EventAgentFinished, Name: tv.alias, Call: n, Pos: x.Pos(), At: end, Duration: end.Sub(start), Tries: tries, Err: err})
	return v, err
}

// try asks q until it is answered, or a try fails with a code retry does
// not name, or the tries run out; it returns the answer and how many
// tries it took.
func (r *run) try(ctx context.Context, model Model, q Question, x *AgentExpr, what string, expect *Type, timeout time.Duration, retries int, on map[string]bool) (any, int, error) {
	backoff := r.cfg.RetryBackoff
	if backoff == 0 {
		backoff = DefaultRetryBackoff
	}
	for try := 0; ; try++ {
		text, err := r.ask(ctx, model, q, timeout)
		if err == nil {
			v, err := answer(text, expect, what, x)
			return v, try + 1, err
		}
		code := errCode(err, false)
		if ctx.Err() != nil || try >= retries || !on[code] {
			msg := what + " failed"
			if try > 0 {
				msg = fmt.Sprintf("%s failed after %d tries", what, try+1)
			}
			return nil, try + 1, &RunError{Pos: x.Pos(), Message: msg, Err: err}
		}
		if backoff > 0 {
			wait := min(backoff<<try, MaxRetryBackoff)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, try + 1, &RunError{Pos: x.Pos(), Message: what + " failed", Err: err}
			}
		}
	}
}

// ask is one try: a slot of the run's concurrency held for it, bounded by
// the call's timeout.
func (r *run) ask(ctx context.Context, model Model, q Question, timeout time.Duration) (string, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-r.slots }()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no answer within the timeout of %s: %w", timeout, context.DeadlineExceeded))
		defer cancel()
		text, err := model.Ask(ctx, q)
		if err != nil && ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		return text, err
	}
	return model.Ask(ctx, q)
}

// answer reads an agent's answer: JSON of the expect type.
func answer(text string, expect *Type, what string, x *AgentExpr) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, &RunError{Pos: x.Pos(), Message: fmt.Sprintf("the answer of %s is not JSON: %v", what, err), Err: ErrAnswer}
	}
	if err := conform(v, expect, "the answer of "+what); err != nil {
		return nil, &RunError{Pos: x.Pos(), Message: err.Error(), Err: ErrAnswer}
	}
	return v, nil
}

// target is agent()'s target's value.
func (r *run) target(ctx context.Context, x Expr, s *env) (target, error) {
	if c, ok := x.(*CallExpr); ok {
		if m, ok := c.Fun.(*MemberExpr); ok && m.Name.Name == "member" {
			tv, err := r.eval(ctx, m.X, s)
			if err != nil {
				return target{}, err
			}
			tm, ok := tv.(team)
			if !ok {
				return target{}, &RunError{Pos: m.X.Pos(), Message: "member(...) is a team's, not " + typeName(tv)}
			}
			id, err := r.eval(ctx, c.Args[0], s)
			if err != nil {
				return target{}, err
			}
			ids, ok := id.(string)
			if !ok || ids == "" {
				return target{}, &RunError{Pos: c.Args[0].Pos(), Message: fmt.Sprintf("%s.member takes a member id, not %s", tm.alias, typeName(id))}
			}
			return target{alias: tm.alias, resource: tm.resource, member: ids}, nil
		}
	}
	v, err := r.eval(ctx, x, s)
	if err != nil {
		return target{}, err
	}
	t, ok := v.(target)
	if !ok {
		return target{}, &RunError{Pos: x.Pos(), Message: "agent()'s target is " + typeName(v)}
	}
	return t, nil
}
