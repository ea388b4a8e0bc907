package packages

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// helloFlow is a small valid flow that asks for one input and one
// secret and one MCP server.
const helloFlow = `{
  "version": "0.17",
  "name": "hello",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "requires": {"env": ["GREETER_TOKEN"]},
  "state": {
    "who": { "type": "string" },
    "greeting": { "type": "string" }
  },
  "nodes": [
    { "id": "greet", "type": "llm", "output": "greeting", "prompt": "Write a one-line greeting for {{who}}." }
  ],
  "edges": [ { "from": "greet", "to": "END" } ],
  "start": "greet"
}
`

// templateFlow is helloFlow with two parameters.
const templateFlow = `{
  "version": "0.17",
  "name": "{{params.agent_name}}",
  "description": "Greets in the {{params.tone}} tone.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "state": {
    "who": { "type": "string" },
    "greeting": { "type": "string" }
  },
  "nodes": [
    { "id": "greet", "type": "llm", "output": "greeting", "prompt": "Write a {{params.tone}} greeting for {{who}}." }
  ],
  "edges": [ { "from": "greet", "to": "END" } ],
  "start": "greet"
}
`

const templateJSON = `{"parameters": [
  {"name": "agent_name", "type": "string", "description": "The agent's name."},
  {"name": "tone", "type": "string", "description": "How it greets.", "default": "warm"}
]}`

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentDir is a new agent folder with helloFlow and a few more files.
func agentDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"flow.json":             helloFlow,
		"README.md":             "# hello\n",
		"prompts/greet.txt":     "Be kind.\n",
		".symphonix/waiting.db": "runtime state",
		".env":                  "GREETER_TOKEN=s3cret\n",
		"mcp/.env.local":        "MORE=secret\n",
		"notes/draft.tmp":       "scratch",
		".packageignore":        "# scratch files\n*.tmp\n",
	})
	return dir
}

// build packs dir with the default limits.
func build(t *testing.T, dir string) ([]byte, *Manifest) {
	t.Helper()
	var b bytes.Buffer
	m, err := Build(dir, Meta{Name: "acme/hello", Version: "1.0.0"}, &b, Limits{})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return b.Bytes(), m
}

// entry is one raw tar entry for crafting archives Build never makes.
type entry struct {
	name string
	typ  byte
	body []byte
	link string
}

// craft writes entries into a gzip'd tar as given, then appends after.
func craft(t testing.TB, entries []entry, format tar.Format, after []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Typeflag: typ, Name: e.name, Linkname: e.link, Mode: 0o644, ModTime: time.Unix(0, 0), Format: format}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if typ == tar.TypeXGlobalHeader {
			h = &tar.Header{Typeflag: typ, PAXRecords: map[string]string{"comment": "global"}}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("craft %q: %v", e.name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return append(b.Bytes(), after...)
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// manifestOf is the canonical manifest of an agent package listing
// files as given (path → content), with helloFlow's requires.
func manifestOf(t testing.TB, files map[string][]byte, edit func(*Manifest)) []byte {
	t.Helper()
	m := &Manifest{Format: Format, Name: "acme/hello", Version: "1.0.0", Kind: KindAgent, Description: "crafted", DSLVersion: "0.17",
		Requires: Requires{MCP: []string{}, Inputs: []string{"who"}, Secrets: []string{"GREETER_TOKEN"}}}
	for p, body := range files {
		m.Files = append(m.Files, File{Path: p, Size: int64(len(body)), SHA256: sum(body)})
	}
	sortFiles(m.Files)
	if edit != nil {
		edit(m)
	}
	data, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sortFiles(fs []File) {
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			if fs[j].Path < fs[i].Path {
				fs[i], fs[j] = fs[j], fs[i]
			}
		}
	}
}

func gunzipTo(w *bytes.Buffer, data []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	_, err = w.ReadFrom(zr)
	return err
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}
