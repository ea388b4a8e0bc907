package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/symphonix/symphonix/node"
)

// One run of a flow folder at a terminal, without a board: the outputs on
// Stdout, a line each. The model is the stand-in (Getenv is nil).
func ExampleRun() {
	dir, err := os.MkdirTemp("", "echo-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	echo := `{"version": "0.17", "name": "echo", "description": "Answers once.",
	  "inputs": ["q"], "outputs": ["a"],
	  "state": {"q": {"type": "string"}, "a": {"type": "string"}},
	  "start": "ask",
	  "nodes": [{"id": "ask", "type": "llm", "prompt": "Answer: {{q}}", "output": "a"}],
	  "edges": [{"from": "ask", "to": "END"}]}`
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(echo), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	err = node.Run(context.Background(), node.Config{
		Dir:    dir,
		Input:  map[string]string{"q": "why is the sky blue?"},
		Stdout: os.Stdout,
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// a: stand-in reply to: Answer: why is the sky blue?
}
