package agentflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkingModel is a resolved agent that knows its tools and checks the
// paths it is given to write.
type checkingModel struct {
	model
	tools  []string
	checks []string // every name and path asked about
}

func (m *checkingModel) CheckTool(name string) error {
	m.checks = append(m.checks, "tool "+name)
	if !slices.Contains(m.tools, name) {
		return fmt.Errorf("no tool %q", name)
	}
	return nil
}

func (m *checkingModel) CheckWrite(path string) error {
	m.checks = append(m.checks, "write "+path)
	if strings.Contains(path, "..") {
		return errors.New("outside the folder")
	}
	return nil
}

const toolsSrc = `workflow w(input: any) -> any {
  use agent "./triage" as triager
  pipeline {
    stage first -> text {
      return "first"
    }
    stage second after first -> any {
      let xs = parallel map [1, 2] as n {
        agent(triager) {
          task "Label it"
          tools [peek, TOOL]
          write input.paths
          expect text
        }
      }
      return xs
    }
    return second
  }
}
`

// TestRunToolsChecked: a tools option naming a tool the resolved agent does
// not have refuses the run before any stage, at the option's position (even
// inside a parallel map of a later stage); names it has pass, and the call
// is asked with them.
func TestRunToolsChecked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, tool, want string
	}{
		{"known", "look", ""},
		{"unknown", "nope", `11:11: tools [nope] of agent(triager): no tool "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &checkingModel{tools: []string{"peek", "look"}}
			m.answer = func(context.Context, Question) (string, error) { return `"x"`, nil }
			var observed []Event
			src := strings.ReplaceAll(toolsSrc, "TOOL", tt.tool)
			_, err := runSrc(t, src, `{"paths":["out/a.txt"]}`, Config{
				Agents:  func(context.Context, Resource) (Model, error) { return m, nil },
				Observe: func(_ context.Context, e Event) { observed = append(observed, e) },
			})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if len(m.asked) != 2 || !slices.Equal(m.asked[0].Tools, []string{"peek", "look"}) {
					t.Errorf("asked %+v; want two questions with tools [peek look]", m.asked)
				}
				return
			}
			var re *RunError
			if !errors.As(err, &re) || err.Error() != tt.want {
				t.Fatalf("Run = %v; want %s", err, tt.want)
			}
			if len(m.asked) != 0 || len(observed) != 0 {
				t.Errorf("asked %d questions, observed %d events; want nothing run", len(m.asked), len(observed))
			}
		})
	}
}

// TestRunWriteChecked: each path a write option gives is put to the model
// before the call; a refusal fails the call at the write option's value,
// and the model is not asked.
func TestRunWriteChecked(t *testing.T) {
	t.Parallel()
	m := &checkingModel{tools: []string{"peek", "look"}}
	m.answer = func(context.Context, Question) (string, error) { return `"x"`, nil }
	src := strings.ReplaceAll(toolsSrc, "TOOL", "look")
	_, err := runSrc(t, src, `{"paths":["out/a.txt","../secret"]}`, Config{Agents: func(context.Context, Resource) (Model, error) { return m, nil }})
	var re *RunError
	if !errors.As(err, &re) || re.Pos.Line != 12 || re.Pos.Column != 17 || !strings.Contains(err.Error(), `write "../secret" of agent(triager): outside the folder`) {
		t.Fatalf("Run = %v; want a RunError at 12:17 naming the path", err)
	}
	if len(m.asked) != 0 {
		t.Errorf("asked %d questions; want none", len(m.asked))
	}
	if !slices.Contains(m.checks, "write out/a.txt") {
		t.Errorf("checks %q; want the allowed path asked about too", m.checks)
	}
}
