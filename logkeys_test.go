package symphonix

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// errorKey finds a log call that names its error anything but "err".
var errorKey = regexp.MustCompile(`\.(Debug|Info|Warn|Error|Log)(Context|Attrs)?\(.*"error", |slog\.(String|Any)\("error"`)

// TestLogErrorKey keeps one log key for errors, "err", so that a search of
// the logs for failures finds them all.
func TestLogErrorKey(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "ent", "api", "node_modules":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if errorKey.MatchString(line) {
				t.Errorf("%s:%d: log an error under the key \"err\": %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
