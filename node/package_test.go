package node_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/packages"
)

// greeterFlow is a flow the stand-in model serves.
const greeterFlow = `{
  "version": "0.17",
  "name": "greeter",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "state": {"who": {"type": "string"}, "greeting": {"type": "string"}},
  "nodes": [{"id": "greet", "type": "llm", "output": "greeting", "prompt": "Greet {{who}}."}],
  "edges": [{"from": "greet", "to": "END"}],
  "start": "greet"
}
`

// greeterDir is a plain greeter folder.
func greeterDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(greeterFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHelloReportsThePackage: an agent whose folder was imported from a
// package says so in its hello, and the board shows the package's name,
// version and digest on the agent; a folder not imported from one
// reports none.
func TestHelloReportsThePackage(t *testing.T) {
	t.Parallel()
	var archive bytes.Buffer
	m, err := packages.Build(greeterDir(t), packages.Meta{Name: "acme/greeter", Version: "1.2.0"}, &archive, packages.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	digest, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "greeter")
	if _, err := packages.Import(&archive, dir, packages.Limits{}); err != nil {
		t.Fatal(err)
	}

	bt := boardtest.Start(t, boardtest.Options{})
	agents := bt.Agents(bt.OperatorToken("viewer", identity.RoleViewer))
	s := startServe(t, node.Config{Dir: dir, BoardURL: bt.URL, Token: bt.AgentToken("greeter"), NoHealthChecks: true})
	s.out.wait(t, regexp.MustCompile(`^agent greeter: installed from package acme/greeter@1\.2\.0 \(`+digest+`\)$`), time.Minute)
	var a *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the agent on the board", func() bool {
		a = agentOn(t, agents, "greeter")
		return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE
	})
	if p := a.GetPackage(); p.GetName() != "acme/greeter" || p.GetVersion() != "1.2.0" || p.GetDigest() != digest {
		t.Errorf("the board's agent runs package %v, want acme/greeter 1.2.0 %s", p, digest)
	}

	// The same flow in a folder of its own: no package.
	other := boardtest.Start(t, boardtest.Options{})
	otherAgents := other.Agents(other.OperatorToken("viewer", identity.RoleViewer))
	plain := startServe(t, node.Config{Dir: greeterDir(t), BoardURL: other.URL, Token: other.AgentToken("greeter"), NoHealthChecks: true})
	boardtest.Eventually(t, time.Minute, "the plain agent on its board", func() bool {
		a = agentOn(t, otherAgents, "greeter")
		return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE
	})
	if a.GetPackage() != nil {
		t.Errorf("a folder not installed from a package reports %v, want none", a.GetPackage())
	}
	if strings.Contains(plain.out.String(), "installed from") {
		t.Errorf("a folder not installed from a package says it was:\n%s", plain.out)
	}
}

// TestBrokenInstallRecord: a record that cannot be read stops the agent
// at start, naming the file; nothing is reported.
func TestBrokenInstallRecord(t *testing.T) {
	t.Parallel()
	for name, record := range map[string]string{
		"not JSON":      "{",
		"unknown field": `{"name":"acme/greeter","version":"1.0.0","kind":"agent","digest":"sha256:` + strings.Repeat("a", 64) + `","extra":1}`,
		"bad digest":    `{"name":"acme/greeter","version":"1.0.0","kind":"agent","digest":"sha256:xyz"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := greeterDir(t)
			file := filepath.Join(dir, filepath.FromSlash(packages.RecordPath))
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(record), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err := node.Run(t.Context(), node.Config{Dir: dir, Stdout: &out, Stderr: &out, Stdin: strings.NewReader(""), Input: map[string]string{"who": "Ann"}})
			if err == nil || !strings.Contains(err.Error(), file) {
				t.Errorf("Run with a broken install record = %v, want an error naming %s", err, file)
			}
			if strings.Contains(out.String(), "stand-in") {
				t.Errorf("Run with a broken install record ran the flow:\n%s", out.String())
			}
		})
	}
}
