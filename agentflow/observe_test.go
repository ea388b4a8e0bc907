package agentflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestObserve: the observer hears each stage start and finish, each
// agent() call with its tries and each emit progress with its payload and
// stage, in the order they happen; a failing stage is heard finishing
// with its error.
func TestObserve(t *testing.T) {
	t.Parallel()
	src := `workflow w(input: any) -> any {
  use agent "reviewer@1" as reviewer
  type V { ok: bool }
  pipeline {
    stage first -> V {
      emit progress { step: "asking" }
      let v = agent(reviewer) {
        task "Review"
        expect V
        retry { attempts: 2 }
      }
      return v
    }
    stage second after first -> bool {
      require first.ok else fail "not ok"
      return true
    }
    emit progress { step: "done" }
    return { ok: second }
  }
}
`
	for _, ok := range []bool{true, false} {
		var (
			mu    sync.Mutex
			heard []string
		)
		tries := 0
		m := &model{answer: func(context.Context, Question) (string, error) {
			tries++
			if tries == 1 {
				return "", fmt.Errorf("%w: 503", ErrTransient)
			}
			return fmt.Sprintf(`{"ok":%v}`, ok), nil
		}}
		_, err := runSrc(t, src, `{}`, Config{Model: m, RetryBackoff: -1, Observe: func(_ context.Context, e Event) {
			mu.Lock()
			defer mu.Unlock()
			s := fmt.Sprintf("%s %s #%d", e.Kind, e.Name, e.Call)
			if e.Kind == EventAgentFinished {
				s += fmt.Sprintf(" tries=%d", e.Tries)
			}
			if e.Err != nil {
				s += " err"
			}
			if e.Payload != nil {
				s += fmt.Sprint(" ", e.Payload)
			}
			if e.At.IsZero() || (e.Kind == EventStageFinished || e.Kind == EventAgentFinished) && e.Duration < 0 {
				s += " (no time)"
			}
			heard = append(heard, s)
		}})
		want := []string{
			"stage started first #0",
			"progress first #1 map[step:asking]",
			"agent started reviewer #1",
			"agent finished reviewer #1 tries=2",
			"stage finished first #0",
			"stage started second #0",
		}
		if ok {
			want = append(want, "stage finished second #0", "progress  #2 map[step:done]")
			if err != nil {
				t.Fatal(err)
			}
		} else {
			want = append(want, "stage finished second #0 err")
			if !errors.Is(err, ErrRequire) {
				t.Fatalf("Run = %v; want the require's failure", err)
			}
		}
		if got := strings.Join(heard, "\n"); got != strings.Join(want, "\n") {
			t.Errorf("ok=%v: heard\n%s\nwant\n%s", ok, got, strings.Join(want, "\n"))
		}
	}
}
