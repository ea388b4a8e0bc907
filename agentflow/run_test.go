package agentflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// runSrc parses src, runs it with the input JSON and returns the output
// as JSON.
func runSrc(t *testing.T, src, input string, cfg Config) (string, error) {
	t.Helper()
	f, diags := Parse([]byte(src))
	if HasErrors(diags) {
		t.Fatalf("Parse: %v", diags)
	}
	var in any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		t.Fatalf("input %s: %v", input, err)
	}
	out, err := Run(t.Context(), f, in, cfg)
	if err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			t.Logf("diagnostics: %v", ce.Diagnostics)
		}
		return "", err
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("output: %v", err)
	}
	return string(b), nil
}

func TestRunExpressions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, input, want string
		out                     string // the workflow's output type; any when empty
	}{
		{"literals", `return { a: 1, b: "x", c: true, d: null, e: [1, 2], f: 5s }`, `{}`, `{"a":1,"b":"x","c":true,"d":null,"e":[1,2],"f":5000}`, ""},
		{"let and shorthand", `let n = input.n
return { n }`, `{"n":3}`, `{"n":3}`, ""},
		{"comparisons", `return [1 < 2, 2 <= 2, 3 > 4, 4 >= 5, "a" == "a", [1] != [1], 2s > 1500ms]`, `{}`, `[true,true,false,false,true,false,true]`, ""},
		{"in range", `return [input.n in 1..5, input.n in 4..9, 5 in 5..5]`, `{"n":3}`, `[true,false,true]`, ""},
		{"not and or", `return [not 1 == 2, true and false, false or true, not (true and true)]`, `{}`, `[true,false,true,false]`, ""},
		{"coalesce", `return { a: input.missing ?? "fallback", b: input.n ?? 0, c: null ?? null ?? 7 }`, `{"n":3}`, `{"a":"fallback","b":3,"c":7}`, ""},
		{"array members", `return { c: [1, 2].count, e: [].empty, a: [1].any, n: [].any }`, `{}`, `{"a":true,"c":2,"e":true,"n":false}`, ""},
		{"projection", `return input.items[*].id`, `{"items":[{"id":"a"},{"id":"b"}]}`, `["a","b"]`, ""},
		{"unique", `return [unique([1, 2, 3]), unique(["a", "b", "a"]), unique([{ x: 1 }, { x: 1 }]), unique([])]`, `{}`, `[true,false,false,true]`, ""},
		{"disjoint", `return [disjoint([[1, 2], [3]]), disjoint([[1, 2], [2, 3]]), disjoint([[1, 1], []])]`, `{}`, `[true,false,true]`, ""},
		{"union", `return union([[1, 2], [], [2, 3]])`, `{}`, `[1,2,2,3]`, ""},
		{"if else", `if input.n > 2 {
  return "big"
} else {
  return "small"
}
return "unreached"`, `{"n":3}`, `"big"`, ""},
		{"if falls through", `if input.n > 5 {
  return "big"
}
return "small"`, `{"n":3}`, `"small"`, ""},
		{"verify", `let v = verify {
  check a = input.n > 1
  parallel { check b = input.n > 5 check c = 2 }
  pass when a and not b
}
return { passed: v.passed, failed: v.failed, checks: v.checks, all: v }`, `{"n":3}`, `{"all":{"checks":{"a":true,"b":false,"c":2},"failed":false,"passed":true},"checks":{"a":true,"b":false,"c":2},"failed":false,"passed":true}`, ""},
		{"parallel", `return parallel { x = input.n, y = [input.n, 1] }`, `{"n":3}`, `{"x":3,"y":[3,1]}`, ""},
		{"parallel map keeps order", `return parallel map input.xs as x limit 2 { { v: x, big: x > 2 } }`, `{"xs":[3,1,4,1,5]}`, `[{"big":true,"v":3},{"big":false,"v":1},{"big":true,"v":4},{"big":false,"v":1},{"big":true,"v":5}]`, ""},
		{"context", `return context.who ?? "nobody"`, `{}`, `"nobody"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := tt.out
			if out == "" {
				out = "any"
			}
			src := fmt.Sprintf("workflow w(input: any, context: any) -> %s {\n  pipeline {\n%s\n  }\n}\n", out, tt.body)
			got, err := runSrc(t, src, tt.input, Config{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got != tt.want {
				t.Errorf("Run = %s, want %s", got, tt.want)
			}
		})
	}
}

const stagesSrc = `workflow plan(input: Req) -> Plan {
  type Req { name: text, size: number, tags?: text[] }
  type Plan { greeting: text, steps: number[], tags: text[] }
  pipeline {
    let base = input.size
    stage first -> number[] {
      return [input.size, input.size]
    }
    stage second after first -> Plan {
      require first.count == 2 else fail "first has two steps"
      emit progress { stage: "second", steps: first }
      return { greeting: input.name, steps: first, tags: input.tags ?? [] }
    }
    require base in 1..10 else fail "size is 1 to 10"
    return second
  }
}
`

func TestRunStages(t *testing.T) {
	t.Parallel()
	var events []map[string]any
	got, err := runSrc(t, stagesSrc, `{"name":"ada","size":2}`, Config{Progress: func(m map[string]any) { events = append(events, m) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := `{"greeting":"ada","steps":[2,2],"tags":[]}`; got != want {
		t.Errorf("Run = %s, want %s", got, want)
	}
	want := []map[string]any{{"stage": "second", "steps": []any{2.0, 2.0}}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestRunRequireFails(t *testing.T) {
	t.Parallel()
	_, err := runSrc(t, stagesSrc, `{"name":"ada","size":20}`, Config{})
	var re *RunError
	if !errors.As(err, &re) || !errors.Is(err, ErrRequire) {
		t.Fatalf("Run = %v, want a RunError wrapping ErrRequire", err)
	}
	if re.Message != "size is 1 to 10" || re.Pos.Line != 14 || re.Pos.Column != 5 {
		t.Errorf("RunError = %q at %s, want %q at 14:5", re.Message, re.Pos, "size is 1 to 10")
	}
}

func TestRunInput(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, input, want string }{
		{"missing field", `{"size":2}`, "input.name is missing, want text"},
		{"wrong kind", `{"name":"a","size":"2"}`, "input.size is text, want number"},
		{"extra field", `{"name":"a","size":2,"colour":1}`, "input.colour is not a field of Req"},
		{"array element", `{"name":"a","size":2,"tags":["x",3]}`, "input.tags[1] is number, want text"},
		{"not an object", `[1]`, "input is an array, want Req"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := runSrc(t, stagesSrc, tt.input, Config{})
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want ErrInput saying %q", err, tt.want)
			}
		})
	}
}

func TestRunRefusesCheckErrors(t *testing.T) {
	t.Parallel()
	_, err := runSrc(t, "workflow w(input: any) -> number {\n  pipeline {\n    return nope\n  }\n}\n", `{}`, Config{})
	var ce *CheckError
	if !errors.As(err, &ce) || len(ce.Diagnostics) != 1 || ce.Diagnostics[0].Code != CodeUnknownVariable {
		t.Fatalf("Run = %v, want a CheckError of one unknown-variable", err)
	}
}

func TestRunWorkflowChoice(t *testing.T) {
	t.Parallel()
	src := "workflow a(input: any) -> number {\n pipeline { return 1 }\n}\nworkflow b(input: any) -> number {\n pipeline { return 2 }\n}\n"
	if _, err := runSrc(t, src, `{}`, Config{}); err == nil || !strings.Contains(err.Error(), "2 workflows (a, b)") {
		t.Errorf("Run without a workflow name = %v, want an error naming both", err)
	}
	if got, err := runSrc(t, src, `{}`, Config{Workflow: "b"}); err != nil || got != "2" {
		t.Errorf("Run(b) = %s, %v, want 2", got, err)
	}
}

// model is a hand-written Model: answer gives each question's answer.
type model struct {
	mu     sync.Mutex
	asked  []Question
	answer func(ctx context.Context, q Question) (string, error)
}

func (m *model) Ask(ctx context.Context, q Question) (string, error) {
	m.mu.Lock()
	m.asked = append(m.asked, q)
	m.mu.Unlock()
	return m.answer(ctx, q)
}

const agentSrc = `workflow review(input: any) -> any {
  use agent "reviewer@1" as reviewer
  type Verdict { ok: bool, score: number, notes?: text[] }
  pipeline {
    let v = agent(reviewer) {
      task "Review the change"
      input { change: input.change }
      tools [read, grep]
      expect Verdict
      timeout 50ms
      retry { attempts: 2, on: [timeout, transient] }
    }
    return { ok: v.ok, score: v.score }
  }
}
`

func TestRunAgent(t *testing.T) {
	t.Parallel()
	m := &model{answer: func(context.Context, Question) (string, error) { return `{"ok":true,"score":0.9}`, nil }}
	got, err := runSrc(t, agentSrc, `{"change":"diff"}`, Config{Model: m})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := `{"ok":true,"score":0.9}`; got != want {
		t.Errorf("Run = %s, want %s", got, want)
	}
	if len(m.asked) != 1 {
		t.Fatalf("asked %d times, want 1", len(m.asked))
	}
	q := m.asked[0]
	want := Question{Agent: "reviewer", Resource: "reviewer@1", Task: "Review the change", Input: map[string]any{"change": "diff"}, Tools: []string{"read", "grep"},
		Schema: map[string]any{"type": "object", "additionalProperties": false, "required": []string{"ok", "score"}, "properties": map[string]any{
			"ok": map[string]any{"type": "boolean"}, "score": map[string]any{"type": "number"},
			"notes": map[string]any{"anyOf": []any{map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, map[string]any{"type": "null"}}},
		}}}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("question (-want +got):\n%s", diff)
	}
}

func TestRunAgentWrongAnswer(t *testing.T) {
	t.Parallel()
	m := &model{answer: func(context.Context, Question) (string, error) { return `{"ok":true,"score":"high"}`, nil }}
	_, err := runSrc(t, agentSrc, `{"change":"diff"}`, Config{Model: m})
	if !errors.Is(err, ErrAnswer) || !strings.Contains(err.Error(), "the answer of agent(reviewer).score is text, want number") {
		t.Errorf("Run = %v, want ErrAnswer naming .score", err)
	}
}

func TestRunAgentRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fail    func(ctx context.Context) error // the error of each try but the last
		tries   int                             // how many tries are made
		wantErr error
	}{
		{"transient retried", func(context.Context) error { return fmt.Errorf("502: %w", ErrTransient) }, 3, nil},
		{"timeout retried", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, 3, nil},
		{"rate limit not on the list", func(context.Context) error { return fmt.Errorf("429: %w", ErrRateLimited) }, 1, ErrRateLimited},
		{"other errors not retried", func(context.Context) error { return errors.New("bad request") }, 1, errors.New("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			m := &model{answer: func(ctx context.Context, q Question) (string, error) {
				if n.Add(1) < 3 {
					return "", tt.fail(ctx)
				}
				return `{"ok":false,"score":1}`, nil
			}}
			_, err := runSrc(t, agentSrc, `{"change":"d"}`, Config{Model: m, RetryBackoff: time.Millisecond})
			if int(n.Load()) != tt.tries {
				t.Errorf("tries = %d, want %d", n.Load(), tt.tries)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("Run = %v, want success", err)
			case tt.wantErr != nil && err == nil:
				t.Errorf("Run succeeded, want an error")
			case tt.wantErr == ErrRateLimited && !errors.Is(err, ErrRateLimited):
				t.Errorf("Run = %v, want ErrRateLimited", err)
			}
		})
	}
}

func TestRunAgentRetryExhausted(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	m := &model{answer: func(context.Context, Question) (string, error) {
		n.Add(1)
		return "", fmt.Errorf("503: %w", ErrTransient)
	}}
	_, err := runSrc(t, agentSrc, `{"change":"d"}`, Config{Model: m, RetryBackoff: time.Millisecond})
	if !errors.Is(err, ErrTransient) || !strings.Contains(err.Error(), "failed after 3 tries") || n.Load() != 3 {
		t.Errorf("Run = %v after %d tries, want ErrTransient after 3", err, n.Load())
	}
}

const limitsSrc = `workflow fan(input: any) -> any {
  use agent "worker" as worker
  limits { concurrency: 2, agent_runs: 5, duration: 2s }
  pipeline {
    let all = parallel map input.xs as x limit 3 {
      agent(worker) {
        task "work"
        input { x }
        expect number
      }
    }
    return all
  }
}
`

func TestRunLimits(t *testing.T) {
	t.Parallel()
	t.Run("concurrency", func(t *testing.T) {
		t.Parallel()
		var now, most atomic.Int32
		m := &model{answer: func(ctx context.Context, q Question) (string, error) {
			n := now.Add(1)
			for {
				old := most.Load()
				if n <= old || most.CompareAndSwap(old, n) {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
			now.Add(-1)
			return fmt.Sprint(q.Input["x"].(float64) * 10), nil
		}}
		got, err := runSrc(t, limitsSrc, `{"xs":[1,2,3,4,5]}`, Config{Model: m})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if want := `[10,20,30,40,50]`; got != want {
			t.Errorf("Run = %s, want %s", got, want)
		}
		if most.Load() != 2 {
			t.Errorf("at most %d calls at once, want 2 (the limit's concurrency)", most.Load())
		}
	})
	t.Run("agent_runs", func(t *testing.T) {
		t.Parallel()
		m := &model{answer: func(context.Context, Question) (string, error) { return "1", nil }}
		_, err := runSrc(t, limitsSrc, `{"xs":[1,2,3,4,5,6]}`, Config{Model: m})
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "agent_runs is 5") {
			t.Errorf("Run = %v, want ErrLimit naming agent_runs", err)
		}
	})
	t.Run("duration", func(t *testing.T) {
		t.Parallel()
		m := &model{answer: func(ctx context.Context, q Question) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}}
		_, err := runSrc(t, limitsSrc, `{"xs":[1]}`, Config{Model: m})
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "duration of 2s") {
			t.Errorf("Run = %v, want ErrLimit naming the duration", err)
		}
	})
	t.Run("first error fails the map", func(t *testing.T) {
		t.Parallel()
		m := &model{answer: func(ctx context.Context, q Question) (string, error) {
			if q.Input["x"] == 2.0 {
				return `"two"`, nil
			}
			return "1", nil
		}}
		_, err := runSrc(t, limitsSrc, `{"xs":[1,2,3]}`, Config{Model: m})
		if !errors.Is(err, ErrAnswer) || !strings.Contains(err.Error(), "is text, want number") {
			t.Errorf("Run = %v, want the wrong answer's ErrAnswer", err)
		}
	})
}

func TestRunTeamTargets(t *testing.T) {
	t.Parallel()
	src := `workflow w(input: In) -> any {
  use team "crew@2" as crew
  type In { who: member<crew> }
  pipeline {
    let a = agent(crew.main) {
      task "lead"
      expect text
    }
    let b = agent(crew.member(input.who)) {
      task "help"
      tools none
      write ["out/a.txt"]
      expect text
    }
    return [a, b]
  }
}
`
	m := &model{answer: func(_ context.Context, q Question) (string, error) { return fmt.Sprintf("%q", q.Member), nil }}
	got, err := runSrc(t, src, `{"who":"ana"}`, Config{Model: m})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := `["main","ana"]`; got != want {
		t.Errorf("Run = %s, want %s", got, want)
	}
	want := []Question{
		{Agent: "crew", Resource: "crew@2", Member: "main", Task: "lead", Schema: map[string]any{"type": "string"}},
		{Agent: "crew", Resource: "crew@2", Member: "ana", Task: "help", Tools: []string{}, Write: []string{"out/a.txt"}, Schema: map[string]any{"type": "string"}},
	}
	if diff := cmp.Diff(want, m.asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
}

// TestRunAgents: Config.Agents is asked about each use before anything
// runs; the Model it gives answers that alias's calls, Model the others;
// its refusal is a RunError at the use statement and nothing is asked.
func TestRunAgents(t *testing.T) {
	t.Parallel()
	const src = `workflow w(input: any) -> any {
  use agent "./triage@2" as triager
  use team "desk" as desk
  type Label { label: text }
  pipeline {
    let a = agent(triager) {
      task "Label it"
      expect Label
    }
    let b = agent(desk.main) {
      task "Label it too"
      expect Label
    }
    return [a.label, b.label]
  }
}
`
	resolved := &model{answer: func(context.Context, Question) (string, error) { return `{"label":"from the agent"}`, nil }}
	fallback := &model{answer: func(context.Context, Question) (string, error) { return `{"label":"from the model"}`, nil }}
	var asked []Resource
	got, err := runSrc(t, src, `{}`, Config{Model: fallback, Agents: func(_ context.Context, r Resource) (Model, error) {
		asked = append(asked, r)
		if r.Kind == "agent" {
			return resolved, nil
		}
		return nil, nil
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := `["from the agent","from the model"]`; got != want {
		t.Errorf("Run = %s, want %s", got, want)
	}
	want := []Resource{{Kind: "agent", ID: "./triage@2", Alias: "triager", Pos: Position{Line: 2, Column: 3}}, {Kind: "team", ID: "desk", Alias: "desk", Pos: Position{Line: 3, Column: 3}}}
	if diff := cmp.Diff(want, asked, cmp.Comparer(func(a, b Position) bool { return a.Line == b.Line && a.Column == b.Column })); diff != "" {
		t.Errorf("Agents was asked (-want +got):\n%s", diff)
	}
	if len(resolved.asked) != 1 || resolved.asked[0].Task != "Label it" || len(fallback.asked) != 1 || fallback.asked[0].Member != "main" {
		t.Errorf("the resolved model was asked %+v, the fallback %+v; want one question each", resolved.asked, fallback.asked)
	}

	nobody := errors.New("no such agent")
	fallback2 := &model{answer: func(context.Context, Question) (string, error) { return `{"label":"x"}`, nil }}
	_, err = runSrc(t, src, `{}`, Config{Model: fallback2, Agents: func(context.Context, Resource) (Model, error) { return nil, nobody }})
	var re *RunError
	if !errors.As(err, &re) || !errors.Is(err, nobody) || re.Pos.Line != 2 || re.Pos.Column != 3 || err.Error() != `2:3: use agent "./triage@2": no such agent` {
		t.Errorf("Run = %v; want a RunError at 2:3 saying use agent \"./triage@2\" and why", err)
	}
	if len(fallback2.asked) != 0 {
		t.Errorf("the model was asked %d times after a refused use; want none", len(fallback2.asked))
	}
}
