package agent_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/files"
	"github.com/symphonix/symphonix/flow"
)

const lookFlow = `{
	"version": "0.9", "start": "look",
	"state": {
		"photo": { "type": "file", "accept": "image/*" },
		"seen": { "type": "string" }
	},
	"inputs": ["photo"], "outputs": ["seen"],
	"nodes": [ { "id": "look", "type": "llm", "prompt": "What is in {{photo}}?", "output": "seen" } ],
	"edges": [ { "from": "look", "to": "END" } ]
}`

// A flow with a file channel gets the folder's file store, and an llm
// node reading a file hands it to the model: the stand-in says so.
func TestFileStoreReachesTheModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(lookFlow), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, agent.Config{Files: files.Config{MaxFileBytes: 1 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Files == nil {
		t.Fatal("Agent.Files = nil for a flow with a file channel")
	}
	f, err := a.Files.Save(bytes.NewReader([]byte("\x89PNG\r\n\x1a\nrest")), files.Upload{Name: "cat.png"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(files.Dir(dir), f.ID)); err != nil {
		t.Errorf("the file is not in %s: %v", files.Dir(dir), err)
	}
	if _, err := a.Files.Save(bytes.NewReader(make([]byte, 2<<10)), files.Upload{Name: "big.bin"}); err == nil {
		t.Error("Save past Config.Files.MaxFileBytes = nil, want ErrTooBig")
	}
	res, err := a.Graph.Invoke(t.Context(), "", map[string]any{"photo": flow.File(f).Value()})
	if err != nil {
		t.Fatal(err)
	}
	seen, _ := res.State["seen"].(string)
	if !strings.Contains(seen, "received cat.png, image/png") {
		t.Errorf("seen = %q, want the stand-in to say it received cat.png, image/png", seen)
	}
}

func TestNoFileStoreWithoutFileChannels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(`{"version": "0.9", "start": "a",
		"state": {"x": {"type": "string"}}, "nodes": [{"id": "a", "type": "llm", "prompt": "hi", "output": "x"}],
		"edges": [{"from": "a", "to": "END"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Open(t.Context(), dir, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Files != nil {
		t.Error("Agent.Files is set for a flow without a file channel")
	}
	if _, err := os.Stat(files.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("Stat(%s) = %v, want no store", files.Dir(dir), err)
	}
}
