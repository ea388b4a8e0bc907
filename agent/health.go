package agent

import (
	"context"

	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/mcptools"
	"github.com/symphonix/symphonix/waiting"
)

// HealthCheck is one named check of whether the agent can do its job:
// Run returns nil when it can, and why not otherwise.
type HealthCheck struct {
	Name string
	Run  func(ctx context.Context) error
}

// HealthChecks are the agent's built-in checks, in this order:
//
//   - "mcp:<server>" for every MCP server the flow declares: its process is
//     up and answers tools/list (mcptools.Set.Check); one not running yet is
//     started, one that died is reported once and then started again.
//   - "model" when the environment names a model with a check (OPENAI_API_KEY
//     set): the API lists its models with the key, which costs no tokens
//     (llm.OpenAI.Check). The stand-in has none.
//   - "waiting" when the flow waits for people or remembers (its threads'
//     memory is kept in the same store): a write and a read in the waiting
//     store (waiting.Store.Check); a store kept in memory fails it, since
//     what it holds does not survive a restart.
//   - "handlers" when an executable in the folder provides a handler or a
//     router (docs/handlers.md): each one is still a file inside the
//     folder, executable and not writable by everyone, as when the agent
//     opened; one that is not fails the node that runs it.
//
// Each check takes as long as its ctx allows.
func (a *Agent) HealthChecks() []HealthCheck {
	var checks []HealthCheck
	if a.tools != nil {
		for _, server := range a.tools.Servers() {
			checks = append(checks, HealthCheck{Name: "mcp:" + server, Run: func(ctx context.Context) error {
				return a.tools.Check(ctx, server, mcptools.AskWithin)
			}})
		}
	}
	if m, ok := a.model.(llm.Checker); ok {
		checks = append(checks, HealthCheck{Name: "model", Run: m.Check})
	}
	if c := waiting.CheckerOf(a.waiting); c != nil {
		checks = append(checks, HealthCheck{Name: "waiting", Run: c.Check})
	}
	if a.executables() {
		checks = append(checks, HealthCheck{Name: "handlers", Run: a.checkExecutables})
	}
	return checks
}
