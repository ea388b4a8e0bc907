package symphonix

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/symphonix/symphonix"

// TestDeps keeps the import rules of DESIGN.md true: domain packages are
// leaves (standard library only, and no logging), the agent's half never
// imports the board, the board never imports the agent's half, and the web
// board's Go side is standard library only.
func TestDeps(t *testing.T) {
	t.Parallel()
	rules := []struct {
		pkg    string
		stdlib bool     // only the standard library (and the package's own module leaves listed in allow)
		allow  []string // module packages allowed when stdlib is set
		forbid []string // import path prefixes never allowed
	}{
		{pkg: "approvals", stdlib: true, forbid: []string{"log", "log/slog"}},
		{pkg: "subscription", stdlib: true, forbid: []string{"log", "log/slog"}},
		{pkg: "ui", stdlib: true},
		{pkg: "flow", stdlib: true, allow: []string{module + "/approvals", module + "/subscription"}, forbid: []string{"log", "log/slog"}},
		{pkg: "agentlink", forbid: []string{module + "/board", module + "/ent", module + "/cmd", module + "/internal/boardtest", "entgo.io"}},
		{pkg: "board", forbid: []string{module + "/agentlink", module + "/cmd", module + "/internal/boardtest"}},
		{pkg: "internal/pump", stdlib: true},
		{pkg: "agent", forbid: []string{module + "/board", module + "/ent", module + "/cmd", module + "/internal", "entgo.io"}},
		{pkg: "mcptools", forbid: []string{module + "/board", module + "/ent", module + "/flow", module + "/agentlink"}},
		{pkg: "serve", forbid: []string{module + "/board", module + "/ent", module + "/cmd", module + "/internal/boardtest", module + "/internal/e2e", "entgo.io"}},
		{pkg: "governed", forbid: []string{module + "/board", module + "/ent", module + "/cmd", module + "/internal/boardtest", "entgo.io"}},
		{pkg: "journal", stdlib: true, allow: []string{module + "/flow", module + "/approvals", module + "/subscription"}},
		{pkg: "lock", stdlib: true},
		{pkg: "node", forbid: []string{module + "/board", module + "/ent", module + "/cmd", module + "/internal/boardtest", module + "/internal/e2e", "entgo.io"}},
		{pkg: "waiting", forbid: []string{module + "/board", module + "/ent", "entgo.io"}},
		{pkg: "llm", stdlib: true, allow: []string{module + "/flow", module + "/approvals", module + "/subscription"}},
		{pkg: "api/symphonix/board/v1/boardv1connect", forbid: []string{module + "/board", module + "/ent", module + "/agentlink"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}|{{.ImportPath}}", module+"/"+r.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", r.pkg, err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				nonStd, path, _ := strings.Cut(line, "|")
				if path == module+"/"+r.pkg {
					continue
				}
				if r.stdlib && nonStd != "" && !contains(r.allow, path) {
					t.Errorf("%s imports %s: it may import only the standard library", r.pkg, path)
				}
				for _, f := range r.forbid {
					if path == f || strings.HasPrefix(path, f+"/") {
						t.Errorf("%s imports %s, which it must not", r.pkg, path)
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
