package exampletest_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/internal/exampletest"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCopy(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "desk")
	write(t, filepath.Join(src, "flow.json"), `{"version": "0.17", "name": "desk", "requires": {"mcp": {
		"orders": {"command": "go", "args": ["run", "./mcp-orders"], "tools": [{"name": "refund", "description": "Refund."}]},
		"files": {"command": "./bin/files", "args": ["run"]}}}, "budget": 12345678901234567890}`)
	write(t, filepath.Join(src, "mcp-orders", "main.go"), "package main\n")
	write(t, filepath.Join(src, ".symphonix", "journal.jsonl"), `{"thread": "a person's"}`)

	dst := exampletest.Copy(t, src)
	if filepath.Base(dst) != "desk" || dst == src {
		t.Errorf("Copy(%s) = %s, want a folder named desk elsewhere", src, dst)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "mcp-orders", "main.go")); err != nil || string(b) != "package main\n" {
		t.Errorf("mcp-orders/main.go in the copy = %q, %v; want the source's", b, err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".symphonix")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".symphonix in the copy: %v, want none", err)
	}

	var f struct {
		Requires struct {
			MCP map[string]struct {
				Command string
				Args    []string
			}
		}
		Budget json.Number
	}
	b, err := os.ReadFile(filepath.Join(dst, "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Requires.MCP["orders"].Args, []string{"-C", src, "run", "./mcp-orders"}; !slices.Equal(got, want) {
		t.Errorf("orders args = %q, want %q", got, want)
	}
	if got, want := f.Requires.MCP["files"].Args, []string{"run"}; !slices.Equal(got, want) {
		t.Errorf("files args = %q, want %q: only go run is changed", got, want)
	}
	if f.Budget != "12345678901234567890" {
		t.Errorf("budget = %s, want the number as written", f.Budget)
	}
}

// TestCopyLeavesOtherFlowsAsTheyAre: a flow with no go run server is
// copied byte for byte.
func TestCopyLeavesOtherFlowsAsTheyAre(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "hello")
	const flow = `{"version": "0.17",   "name": "hello"}`
	write(t, filepath.Join(src, "flow.json"), flow)
	b, err := os.ReadFile(filepath.Join(exampletest.Copy(t, src), "flow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(flow, string(b)); diff != "" {
		t.Errorf("flow.json in the copy (-source +copy):\n%s", diff)
	}
}
