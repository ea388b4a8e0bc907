package packages

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScan: Scan never panics, and whatever it accepts Import writes
// inside the target folder and nowhere else.
func FuzzScan(f *testing.F) {
	bad, err := filepath.Glob(filepath.Join("testdata", "bad", "*.tgz"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range bad {
		if strings.HasSuffix(name, "bomb.tgz") {
			continue // 20 MiB uncompressed per run is too slow a seed
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	dir := f.TempDir()
	for p, body := range map[string]string{"flow.json": helloFlow, "README.md": "hello\n", "a/b.txt": "b"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(body), 0o644)
	}
	var good bytes.Buffer
	if _, err := Build(dir, Meta{Name: "acme/hello", Version: "1.0.0"}, &good, Limits{}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())

	lim := Limits{MaxArchiveBytes: 1 << 20, MaxTotalBytes: 4 << 20, MaxFileBytes: 1 << 20, MaxEntries: 200}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Scan(bytes.NewReader(data), lim)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("Scan error without a reason: %v", err)
			}
			return
		}
		if p.Digest == "" {
			t.Fatal("Scan accepted a package without a digest")
		}
		root := t.TempDir()
		parent := filepath.Join(root, "parent")
		if err := os.Mkdir(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(parent, "agent")
		if _, err := Import(bytes.NewReader(data), target, lim); err != nil {
			t.Fatalf("Import of what Scan accepted: %v", err)
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == root || p == parent {
				return nil
			}
			if p != target && !strings.HasPrefix(p, target+string(filepath.Separator)) {
				t.Errorf("Import wrote %s, outside %s", p, target)
			}
			if d.Type()&fs.ModeSymlink != 0 || !(d.IsDir() || d.Type().IsRegular()) {
				t.Errorf("Import made %s of type %v", p, d.Type())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
