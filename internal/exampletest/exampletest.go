// Package exampletest gives a test its own copy of one of the repository's
// example folders. An agent keeps what it writes beside its flow in
// .symphonix/ (its waiting runs, journal, lock, conversations and the
// board's last word on its tools): a test that ran an example in place
// would leave its threads there for the next person who runs it, and would
// share them with every other test that does.
package exampletest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// state is the folder beside a flow where an agent keeps what it writes.
const state = ".symphonix"

// Copy copies the example folder src, less its .symphonix folder, into a
// folder of the same name in t.TempDir(), and returns the copy's path.
//
// An MCP server the flow runs with `go run` from its folder (as the refund
// desk runs ./mcp-orders) is built from src instead, with go -C src: the
// copy is outside the module, where go run would find no go.mod. Nothing
// else in flow.json changes.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst, err := CopyTo(t.TempDir(), src)
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// CopyTo is Copy into the folder dir, for a TestMain.
func CopyTo(dir, src string) (string, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(src))
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == state:
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil // sockets, links: nothing an example needs
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	flow := filepath.Join(dst, "flow.json")
	if _, err := os.Stat(flow); errors.Is(err, fs.ErrNotExist) {
		return dst, nil
	}
	if err := buildFrom(flow, src); err != nil {
		return "", err
	}
	return dst, nil
}

// buildFrom rewrites the MCP servers of the flow at path that are run with
// `go run` to run it in src.
func buildFrom(path, src string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var f map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	requires, _ := f["requires"].(map[string]any)
	servers, _ := requires["mcp"].(map[string]any)
	changed := false
	for _, s := range servers {
		s, _ := s.(map[string]any)
		args, _ := s["args"].([]any)
		if s["command"] != "go" || len(args) == 0 || args[0] != "run" {
			continue
		}
		s["args"] = append([]any{"-C", src}, args...)
		changed = true
	}
	if !changed {
		return nil
	}
	if b, err = json.MarshalIndent(f, "", "  "); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
