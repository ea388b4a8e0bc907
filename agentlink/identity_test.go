package agentlink_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/jcs"
)

func TestReadIdentity(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "desk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	flow := `{
  "version": "0.17",
  "name": "refund-desk",
  "description": "Refunds.",
  "requires": {"mcp": {
    "payments": {"command": "pay", "tools": [{"name": "refund", "description": "Refund."}, {"name": "lookup"}]},
    "crm": {"command": "crm", "tools": [{"name": "note"}]}
  }},
  "nodes": [], "edges": []
}`
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(flow), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := agentlink.ReadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	build, err := jcs.Digest([]byte(flow))
	if err != nil {
		t.Fatal(err)
	}
	want := agentlink.Identity{
		Name:        "refund-desk",
		Description: "Refunds.",
		Build:       build,
		Tools:       []string{"crm.note", "payments.lookup", "payments.refund"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadIdentity mismatch (-want +got):\n%s", diff)
	}

	// The build is of the canonical form: reformatting the file and
	// reordering its keys does not change it; changing a value does.
	reordered := `{"edges":[],"nodes":[],"requires":{"mcp":{"crm":{"tools":[{"name":"note"}],"command":"crm"},"payments":{"tools":[{"name":"refund","description":"Refund."},{"name":"lookup"}],"command":"pay"}}},"description":"Refunds.","name":"refund-desk","version":"0.17"}`
	again, err := agentlink.IdentityOf([]byte(reordered))
	if err != nil {
		t.Fatal(err)
	}
	if again.Build != got.Build {
		t.Errorf("build of the reordered flow = %s, want %s", again.Build, got.Build)
	}
	changed, err := agentlink.IdentityOf([]byte(strings.Replace(reordered, "Refunds.", "Refunds!", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if changed.Build == got.Build {
		t.Errorf("build did not change with the description")
	}
}

func TestReadIdentityNameFromFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nameless")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flow.json"), []byte(`{"version":"0.1","nodes":[],"edges":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := agentlink.ReadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "nameless" {
		t.Errorf("name = %q, want the folder's, nameless", got.Name)
	}
}

func TestReadIdentityRefuses(t *testing.T) {
	t.Parallel()
	for name, flow := range map[string]string{
		"not json":      `{"version":`,
		"duplicate key": `{"name":"a","name":"b"}`,
	} {
		if _, err := agentlink.IdentityOf([]byte(flow)); err == nil {
			t.Errorf("IdentityOf(%s): no error", name)
		}
	}
	if _, err := agentlink.ReadIdentity(t.TempDir()); err == nil {
		t.Errorf("ReadIdentity of a folder without flow.json: no error")
	}
}

// TestHelloExampleBuild pins the build of the shipped example, so a change
// to the canonical form (a protocol change) cannot go unnoticed.
func TestHelloExampleBuild(t *testing.T) {
	t.Parallel()
	id, err := agentlink.ReadIdentity("../examples/hello")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../examples/hello/flow.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := jcs.Digest(data)
	if err != nil {
		t.Fatal(err)
	}
	if id.Name != "hello" || id.Build != want || !strings.HasPrefix(id.Build, "sha256:") || len(id.Build) != len("sha256:")+64 {
		t.Errorf("hello = %+v, want name hello and build %s", id, want)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	ok := agentlink.Config{BoardURL: "http://127.0.0.1:1", Token: "t", Identity: agentlink.Identity{Name: "a"}}
	for name, edit := range map[string]func(*agentlink.Config){
		"no url":       func(c *agentlink.Config) { c.BoardURL = "" },
		"ftp url":      func(c *agentlink.Config) { c.BoardURL = "ftp://x" },
		"no host":      func(c *agentlink.Config) { c.BoardURL = "http://" },
		"no token":     func(c *agentlink.Config) { c.Token = "" },
		"no name":      func(c *agentlink.Config) { c.Identity.Name = "" },
		"unknown capa": func(c *agentlink.Config) { c.Capabilities = []string{"teleport"} },
	} {
		c := ok
		edit(&c)
		if _, err := agentlink.New(c); err == nil {
			t.Errorf("New with %s: no error", name)
		}
	}
	if _, err := agentlink.New(ok); err != nil {
		t.Errorf("New(%+v) = %v", ok, err)
	}
}

// TestNewChecksPackage: a hello's package is checked before anything is
// dialled: each field set, the digest a sha256 digest.
func TestNewChecksPackage(t *testing.T) {
	t.Parallel()
	good := agentlink.InstalledPackage{Name: "acme/hello", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("0a", 32)}
	cfg := func(p *agentlink.InstalledPackage) agentlink.Config {
		return agentlink.Config{BoardURL: "http://127.0.0.1:1", Token: "a.b.c", Identity: agentlink.Identity{Name: "hello", Package: p}}
	}
	for _, p := range []*agentlink.InstalledPackage{nil, &good} {
		if _, err := agentlink.New(cfg(p)); err != nil {
			t.Errorf("New with package %v: %v", p, err)
		}
	}
	for want, edit := range map[string]func(*agentlink.InstalledPackage){
		"Package.Name":    func(p *agentlink.InstalledPackage) { p.Name = "" },
		"Package.Version": func(p *agentlink.InstalledPackage) { p.Version = "" },
		"Package.Digest":  func(p *agentlink.InstalledPackage) { p.Digest = "sha256:" + strings.Repeat("A", 64) },
	} {
		p := good
		edit(&p)
		if _, err := agentlink.New(cfg(&p)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with package %+v = %v, want an error naming %s", p, err, want)
		}
	}
}
