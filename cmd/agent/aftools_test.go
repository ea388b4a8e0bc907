package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// toolboxFlow is a flow agent whose model queues tool calls that a tools
// node runs against the vault's MCP server (agent/testdata/mcp-vault):
// what the model asks for is what is called, and the results, each with
// its error, are the agent's answer.
const toolboxFlow = `{
  "version": "0.17",
  "name": "toolbox",
  "description": "Calls the vault's tools its model asks for.",
  "inputs": ["task"],
  "outputs": ["results"],
  "requires": {
    "mcp": {
      "vault": {
        "command": "VAULT",
        "env": { "VAULT_CALLS": "CALLS" },
        "tools": [
          { "name": "peek", "description": "Look into the vault." },
          { "name": "empty", "description": "Empty the vault." }
        ]
      }
    }
  },
  "state": {
    "task": { "type": "string", "description": "What to do." },
    "calls": { "type": "list", "description": "The calls the model queued." },
    "results": { "type": "list", "reducer": "append", "description": "What each call came to." }
  },
  "nodes": [
    { "id": "plan", "type": "llm", "output": "calls", "description": "Queue the calls.", "prompt": "{{task}}" },
    { "id": "run", "type": "tools", "calls": "calls", "output": "results" }
  ],
  "edges": [ { "from": "plan", "to": "run" }, { "from": "run", "to": "END" } ],
  "start": "plan"
}
`

// boxAF calls the toolbox agent with the options OPTIONS.
const boxAF = `workflow box(input: any) -> any {
  use agent "./toolbox" as box
  pipeline {
    return agent(box) {
      task "Look into the vault"
      OPTIONS
      expect any
    }
  }
}
`

// TestAgentRunAFTools: an agent() call's tools option is the allowlist of
// the delegated run. The model inside asks for vault.peek and vault.empty:
// without tools both are called; tools [peek] refuses empty as a switched
// off tool is refused (the server never sees it) and peek works; a
// server's name allows its tools; tools none refuses both. A name the
// agent has no tool or server for refuses the run before anything is
// asked, at the tools option; so does a write path outside the file's
// folder, at the write option's value.
func TestAgentRunAFTools(t *testing.T) {
	t.Parallel()
	vault := filepath.Join(t.TempDir(), "mcp-vault")
	if out, err := exec.Command("go", "build", "-o", vault, "../../agent/testdata/mcp-vault").CombinedOutput(); err != nil {
		t.Fatalf("build mcp-vault: %v\n%s", err, out)
	}
	const queued = `[{"name":"vault.peek","args":{},"id":"1"},{"name":"vault.empty","args":{},"id":"2"}]`
	const refusedEmpty = `The tool "vault.empty" cannot be called: this run was started allowing only vault.peek.`
	const refusedAll = `cannot be called: this run was started allowing no tool.`
	for _, tt := range []struct {
		name, options string
		called        string    // the vault's log of calls
		errs          [2]string // what each call's error says; "" for none
		fails         string    // the run's error; "" when it finishes
	}{
		{"no tools option", "", "peek\nempty\n", [2]string{}, ""},
		{"tools peek", "tools [peek]", "peek\n", [2]string{"", refusedEmpty}, ""},
		{"tools server", "tools [vault]", "peek\nempty\n", [2]string{}, ""},
		{"tools none", "tools none", "", [2]string{`The tool "vault.peek" ` + refusedAll, `The tool "vault.empty" ` + refusedAll}, ""},
		{"write inside", "tools [peek]\n      write [\"out/report.md\"]", "peek\n", [2]string{"", refusedEmpty}, ""},
		{"unknown tool", "tools [peek, nope]", "", [2]string{}, `box.af:6:7: tools [nope] of agent(box): agent "toolbox" has no tool and no MCP server "nope"; its tools are vault.empty, vault.peek`},
		{"write outside", `write ["out/a.md", "../elsewhere.md"]`, "", [2]string{}, `box.af:6:13: write "../elsewhere.md" of agent(box): has a ".." element: write takes paths inside the file's folder`},
		{"write absolute", `write ["/etc/passwd"]`, "", [2]string{}, `box.af:6:13: write "/etc/passwd" of agent(box): is absolute`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			calls := filepath.Join(dir, "vault-calls")
			flowJSON := strings.NewReplacer(`"VAULT"`, fmt.Sprintf("%q", vault), `"CALLS"`, fmt.Sprintf("%q", calls)).Replace(toolboxFlow)
			writeFiles(t, dir, map[string]string{"box.af": strings.Replace(boxAF, "OPTIONS", tt.options, 1), "toolbox/flow.json": flowJSON})
			p := &scriptedProvider{answer: queued}
			r := runAgent(t, p.start(t), "", "run", filepath.Join(dir, "box.af"))
			b, err := os.ReadFile(calls)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			// The tools node runs its calls at once: the log's order is not theirs.
			got := strings.Fields(string(b))
			slices.Sort(got)
			want := strings.Fields(tt.called)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the vault was called for %q; want %q", got, want)
			}
			if tt.fails != "" {
				if r.code != 1 || !strings.Contains(errText(r), tt.fails) {
					t.Errorf("agent run: exit %d, error %q; want 1 and %q", r.code, errText(r), tt.fails)
				}
				if got := p.asked(); len(got) != 0 {
					t.Errorf("the provider was asked %q; want nothing asked", got)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("agent run: exit %d, stderr %s, error %v", r.code, r.stderr, r.err)
			}
			var results []struct {
				Name   string `json:"name"`
				Result any    `json:"result"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 2 {
				t.Fatalf("stdout %q: %v; want the two calls' results", r.stdout, err)
			}
			for i, res := range results {
				want := tt.errs[i]
				switch {
				case want == "" && (res.Error != "" || res.Result == nil):
					t.Errorf("call %s: result %v, error %q; want it called", res.Name, res.Result, res.Error)
				case want != "" && (res.Result != nil || !strings.Contains(res.Error, want)):
					t.Errorf("call %s: result %v, error %q; want it refused: %q", res.Name, res.Result, res.Error, want)
				}
			}
		})
	}
}

// keeperFlow is a second flow agent, on a server of its own: the workflow
// that uses it announces its tool beside the toolbox's.
const keeperFlow = `{
  "version": "0.17",
  "name": "keeper",
  "description": "Opens the safe.",
  "inputs": ["task"],
  "outputs": ["results"],
  "requires": { "mcp": { "safe": { "command": "VAULT", "tools": [ { "name": "open", "description": "Open the safe." } ] } } },
  "state": {
    "task": { "type": "string", "description": "What to do." },
    "calls": { "type": "list", "description": "The calls the model queued." },
    "results": { "type": "list", "reducer": "append", "description": "What each call came to." }
  },
  "nodes": [
    { "id": "plan", "type": "llm", "output": "calls", "description": "Queue the calls.", "prompt": "{{task}}" },
    { "id": "run", "type": "tools", "calls": "calls", "output": "results" }
  ],
  "edges": [ { "from": "plan", "to": "run" }, { "from": "run", "to": "END" } ],
  "start": "plan"
}
`

// TestAgentRunAFSwitches: agent run FILE.af linked to a real board is
// switched by it as a flow agent is. The workflow's hello announces the
// tools of every flow agent it uses, together; the board having never
// spoken, both of the toolbox's calls are refused and the vault's server
// never sees them; with vault.peek switched on for the workflow, peek is
// called and empty refused in the words a switched-off tool is refused
// with; with both on, both are called.
func TestAgentRunAFSwitches(t *testing.T) {
	t.Parallel()
	vault := filepath.Join(t.TempDir(), "mcp-vault")
	if out, err := exec.Command("go", "build", "-o", vault, "../../agent/testdata/mcp-vault").CombinedOutput(); err != nil {
		t.Fatalf("build mcp-vault: %v\n%s", err, out)
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "vault-calls")
	replace := strings.NewReplacer(`"VAULT"`, fmt.Sprintf("%q", vault), `"CALLS"`, fmt.Sprintf("%q", calls))
	af := strings.Replace(strings.Replace(boxAF, "OPTIONS", "", 1), `use agent "./toolbox" as box`, "use agent \"./toolbox\" as box\n  use agent \"./keeper\" as keeper", 1)
	writeFiles(t, dir, map[string]string{"box.af": af, "toolbox/flow.json": replace.Replace(toolboxFlow), "keeper/flow.json": replace.Replace(keeperFlow)})
	p := &scriptedProvider{answer: `[{"name":"vault.peek","args":{},"id":"1"},{"name":"vault.empty","args":{},"id":"2"}]`}
	env := p.start(t)
	bt := boardtest.Start(t, boardtest.Options{})
	token := bt.AgentToken("box")
	switches := boardv1connect.NewToolServiceClient(bt.Client(bt.OperatorToken("root", identity.RoleAdmin)))

	// run runs the workflow linked, and returns its stderr and what each
	// of the toolbox's calls came to ("" when called), having checked
	// what the vault's server received since the last run.
	seen := 0
	run := func(called string) (string, [2]string) {
		t.Helper()
		r := runAgent(t, env, "", "run", filepath.Join(dir, "box.af"), "--monitor", bt.URL, "--token", token)
		if r.code != 0 {
			t.Fatalf("agent run --monitor: exit %d, stderr %s, error %v", r.code, r.stderr, r.err)
		}
		b, err := os.ReadFile(calls)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all := strings.Fields(string(b))
		got := all[seen:]
		seen = len(all)
		slices.Sort(got)
		want := strings.Fields(called)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the vault was called for %q; want %q (stderr %s)", got, want, r.stderr)
		}
		var results []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 2 {
			t.Fatalf("stdout %q: %v; want the two calls' results", r.stdout, err)
		}
		var errs [2]string
		for _, res := range results {
			switch res.Name {
			case "vault.peek":
				errs[0] = res.Error
			case "vault.empty":
				errs[1] = res.Error
			}
		}
		return r.stderr, errs
	}

	stderr, errs := run("")
	if !strings.Contains(stderr, "agent box: tools: the board has not said which are on, so none are") {
		t.Errorf("stderr %q; want the line saying the board has not said", stderr)
	}
	for i, name := range []string{"vault.peek", "vault.empty"} {
		if want := fmt.Sprintf("The tool %q cannot be called: a board decides which tools this agent may use, and it has not said yet", name); !strings.Contains(errs[i], want) {
			t.Errorf("the board never spoke: %s's error %q; want %q", name, errs[i], want)
		}
	}
	res, err := switches.GetSwitches(t.Context(), &boardv1.GetSwitchesRequest{Agent: "box"})
	if err != nil {
		t.Fatalf("GetSwitches: %v", err)
	}
	if got := strings.Join(res.GetSwitches().GetDeclared(), ","); got != "safe.open,vault.empty,vault.peek" {
		t.Errorf("the board has box declaring %q; want the tools of both agents it uses: safe.open,vault.empty,vault.peek", got)
	}

	if _, err := switches.SetToolSwitch(t.Context(), &boardv1.SetToolSwitchRequest{Agent: "box", Tool: "vault.peek", On: true}); err != nil {
		t.Fatalf("SetToolSwitch: %v", err)
	}
	stderr, errs = run("peek")
	if !strings.Contains(stderr, "agent box: tools: the board switched on 1: vault.peek") {
		t.Errorf("stderr %q; want the line saying what the board switched on", stderr)
	}
	if want := `The tool "vault.empty" cannot be called: it is switched off for this agent by the board. Do not call it again. Tools you may call: vault.peek.`; errs[0] != "" || !strings.Contains(errs[1], want) {
		t.Errorf("peek on: errors %q; want peek called and empty refused: %q", errs, want)
	}

	if _, err := switches.ReplaceSwitches(t.Context(), &boardv1.ReplaceSwitchesRequest{Agent: "box", On: []string{"vault.peek", "vault.empty"}}); err != nil {
		t.Fatalf("ReplaceSwitches: %v", err)
	}
	if _, errs = run("peek empty"); errs != [2]string{} {
		t.Errorf("both on: errors %q; want both called", errs)
	}
}
