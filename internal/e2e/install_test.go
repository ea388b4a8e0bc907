package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
)

// TestInstallFromTheLibrary: a package made and signed with the board
// binary's offline commands, and published to a real board with its
// operator commands (key add, scope set, package publish), is installed by
// the agent binary into a new folder that agent validate accepts; served
// and linked, the agent shows on the board with that package's name,
// version and digest. Once the signer's key is revoked, a new install of
// the same version is refused by the signature check, and writes nothing.
func TestInstallFromTheLibrary(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	src := filepath.Join(work, "greeter")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	flow := `{"version":"0.17","name":"greeter","description":"Greets whoever it is handed.","inputs":["who"],"outputs":["greeting"],` +
		`"state":{"who":{"type":"string"},"greeting":{"type":"string"}},` +
		`"nodes":[{"id":"greet","type":"llm","output":"greeting","prompt":"Greet {{who}}."}],"edges":[{"from":"greet","to":"END"}],"start":"greet"}`
	if err := os.WriteFile(filepath.Join(src, "flow.json"), []byte(flow), 0o644); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(work, "signer.key")
	runCmd(t, "board", "key", "create", "--out", key)
	archive := filepath.Join(work, "greeter-1.0.0.tgz")
	runCmd(t, "board", "package", "build", src, "--name", "acme/greeter", "--version", "1.0.0", "--out", archive)
	runCmd(t, "board", "package", "sign", archive, "--key", key)
	inspected, _ := runCmd(t, "board", "package", "inspect", archive, "-o", "json")
	var manifest struct {
		Digest string `json:"digest"`
	}
	if err := json.Unmarshal([]byte(inspected), &manifest); err != nil || !strings.HasPrefix(manifest.Digest, "sha256:") {
		t.Fatalf("board package inspect -o json = %s (%v), want the digest", inspected, err)
	}
	digest := manifest.Digest

	bt := boardtest.Start(t, boardtest.Options{})
	adminToken := filepath.Join(work, "admin.token")
	if err := os.WriteFile(adminToken, []byte(bt.OperatorToken("admin", identity.RoleAdmin)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	operator := func(args ...string) string {
		t.Helper()
		out, _ := runCmd(t, "board", append(args, "--board", bt.URL, "--token-file", adminToken)...)
		return out
	}
	var added struct {
		Key struct {
			KeyID string `json:"key_id"`
		} `json:"key"`
	}
	if out := operator("key", "add", key+".pub", "--publisher", "acme-team", "-o", "json"); json.Unmarshal([]byte(out), &added) != nil || added.Key.KeyID == "" {
		t.Fatalf("board key add -o json = %s, want the key id", out)
	}
	operator("scope", "set", "acme", "--publisher", "acme-team")
	if out := operator("package", "publish", archive); !strings.Contains(out, digest) {
		t.Errorf("board package publish printed %q, want the digest %s", out, digest)
	}

	// agent install, by name alone, with the token in a file.
	tokenFile := filepath.Join(work, "greeter.token")
	if err := os.WriteFile(tokenFile, []byte(bt.AgentToken("greeter")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "greeter")
	out, _ := runCmd(t, "agent", "install", "acme/greeter", dir, "--board", bt.URL, "--token-file", tokenFile, "-o", "json")
	var got struct {
		Name, Version, Digest, Folder string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Name != "acme/greeter" || got.Version != "1.0.0" || got.Digest != digest || got.Folder != dir {
		t.Fatalf("agent install -o json = %s (%v), want acme/greeter 1.0.0 %s in %s", out, err, digest, dir)
	}
	installed, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil || string(installed) != flow {
		t.Errorf("the installed flow.json = %q (%v), want the package's", installed, err)
	}
	runCmd(t, "agent", "validate", dir)

	agent := startWithEnv(t, []string{"OPENAI_API_KEY="}, "agent", "serve", dir, "--monitor", bt.URL, "--token-file", tokenFile, "--health-interval", "0")
	agent.waitLine(t, regexp.MustCompile(`agent greeter: linked to`))
	agents := agentsClient(bt.URL, bt.OperatorToken("ops", identity.RoleViewer))
	var a *boardv1.Agent
	boardtest.Eventually(t, ceiling, "greeter online on the board", func() bool {
		a = agentState(t, agents, "greeter")
		return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE
	})
	if p := a.GetPackage(); p.GetName() != "acme/greeter" || p.GetVersion() != "1.0.0" || p.GetDigest() != digest {
		t.Errorf("the board shows greeter running %v, want acme/greeter 1.0.0 %s", p, digest)
	}
	if err := agent.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("agent serve after SIGTERM: %v", err)
	}

	// The key revoked: the version no longer installs.
	operator("key", "revoke", added.Key.KeyID, "--reason", "lost", "--yes")
	again := filepath.Join(parent, "again")
	cmd := exec.Command(filepath.Join(bin, "agent"), "install", "acme/greeter@1.0.0", again, "--board", bt.URL, "--token-file", tokenFile)
	msg, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(msg), "refused by the signature check") {
		t.Errorf("agent install signed by a revoked key: exit %d, %q; want 1 and the signature check named", code, msg)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("after a refused install, %s holds %d entries, want only the first install", parent, len(entries))
	}
}
