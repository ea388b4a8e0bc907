package evals

import (
	"os"
	"path/filepath"
	"testing"
)

// exampleDir copies examples/refund-desk into a temporary folder, so a
// run's record is written there and never in the module.
func exampleDir(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "examples", "refund-desk")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}
