package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect/v2"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/internal/boardtest"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/packages"
)

// greeterFlow is a flow the stand-in model serves and runs.
const greeterFlow = `{
  "version": "0.17",
  "name": "greeter",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "state": {"who": {"type": "string"}, "greeting": {"type": "string"}},
  "nodes": [{"id": "greet", "type": "llm", "output": "greeting", "prompt": "Greet {{who}}."}],
  "edges": [{"from": "greet", "to": "END"}],
  "start": "greet"
}
`

// greeterTemplate is greeterFlow with its name a parameter.
const greeterTemplate = `{
  "version": "0.17",
  "name": "{{params.agent_name}}",
  "description": "Greets whoever it is handed.",
  "inputs": ["who"],
  "outputs": ["greeting"],
  "state": {"who": {"type": "string"}, "greeting": {"type": "string"}},
  "nodes": [{"id": "greet", "type": "llm", "output": "greeting", "prompt": "Greet {{who}}."}],
  "edges": [{"from": "greet", "to": "END"}],
  "start": "greet"
}
`

// publishFolder builds files as name@version, signs it with a new key the
// board is made to trust for acme-team, and publishes it. It returns the
// package's digest.
func publishFolder(t *testing.T, pkgs boardv1connect.PackageServiceClient, name, version string, files map[string]string) string {
	t.Helper()
	src := t.TempDir()
	for p, body := range files {
		if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	m, err := packages.Build(src, packages.Meta{Name: name, Version: version}, &archive, packages.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	digest, err := m.Digest()
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, err := packages.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	env, err := packages.Sign(digest, priv, packages.KeyID(pub))
	if err != nil {
		t.Fatal(err)
	}
	envelope, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pkgs.AddKey(t.Context(), &boardv1.AddKeyRequest{PublicKey: packages.FormatPublicKey(pub), Publisher: "acme-team"}); err != nil {
		t.Fatalf("AddKey: %v", err)
	}
	stream, err := pkgs.Publish(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Header{Header: &boardv1.PublishHeader{Envelope: envelope, Size: int64(archive.Len())}}}); err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&boardv1.PublishRequest{Part: &boardv1.PublishRequest_Chunk{Chunk: archive.Bytes()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.CloseAndReceive(); err != nil {
		t.Fatalf("Publish %s@%s: %v", name, version, err)
	}
	return digest
}

// TestInstallThenServe: agent install puts a published package in a new
// folder that agent validate accepts; served and linked, the agent's
// hello makes the board show the package's name, version and digest.
// agent instantiate fills a template. Each command refuses the other's
// kind, naming the right one.
func TestInstallThenServe(t *testing.T) {
	t.Parallel()
	b := boardtest.Start(t, boardtest.Options{})
	pkgs := boardv1connect.NewPackageServiceClient(b.Client(b.OperatorToken("admin", identity.RoleAdmin)))
	if _, err := pkgs.PutScope(t.Context(), &boardv1.PutScopeRequest{Name: "acme", Publishers: []string{"acme-team"}, Threshold: 1}); err != nil {
		t.Fatalf("PutScope: %v", err)
	}
	digest := publishFolder(t, pkgs, "acme/greeter", "1.0.0", map[string]string{"flow.json": greeterFlow, "README.md": "# greeter\n"})
	tmplDigest := publishFolder(t, pkgs, "acme/greeter-template", "0.1.0", map[string]string{"flow.json": greeterTemplate,
		"template.json": `{"parameters": [{"name": "agent_name", "type": "string", "description": "The agent's name."}]}`})

	env := map[string]string{"SYMPHONIX_TOKEN": b.AgentToken("greeter")}
	parent := t.TempDir()
	dir := filepath.Join(parent, "greeter")
	r := runAgent(t, env, "", "install", "acme/greeter@1.0.0", dir, "--board", b.URL, "--digest", digest, "-o", "json")
	if r.err != nil {
		t.Fatalf("agent install: %v\n%s", r.err, r.stderr)
	}
	var got installedJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("agent install -o json = %q: %v", r.stdout, err)
	}
	if got.Name != "acme/greeter" || got.Version != "1.0.0" || got.Digest != digest || got.Kind != "agent" || got.Folder != dir || len(got.Signers) != 1 {
		t.Errorf("agent install -o json = %+v, want acme/greeter 1.0.0 %s in %s, one signer", got, digest, dir)
	}
	if r := runAgent(t, nil, "", "validate", dir); r.code != 0 {
		t.Errorf("agent validate of the installed folder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The table: one row under its header.
	r = runAgent(t, env, "", "install", "acme/greeter", filepath.Join(parent, "again"), "--board", b.URL)
	if r.err != nil || !regexp.MustCompile(`^NAME\s+VERSION\s+KIND\s+DIGEST\s+FOLDER\nacme/greeter\s+1\.0\.0\s+agent\s+`+digest+`\s+`+regexp.QuoteMeta(filepath.Join(parent, "again"))+`\n$`).MatchString(r.stdout) {
		t.Errorf("agent install (table) = %q, %v", r.stdout, r.err)
	}

	// The kinds, each refused naming the other command.
	r = runAgent(t, env, "", "install", "acme/greeter-template", filepath.Join(parent, "t"), "--board", b.URL)
	if r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), "agent instantiate") {
		t.Errorf("agent install of a template: exit %d, %v; want 1 naming agent instantiate", r.code, r.err)
	}
	r = runAgent(t, env, "", "instantiate", "acme/greeter", filepath.Join(parent, "i"), "--board", b.URL)
	if r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), "agent install") {
		t.Errorf("agent instantiate of an agent package: exit %d, %v; want 1 naming agent install", r.code, r.err)
	}
	made := filepath.Join(parent, "made")
	r = runAgent(t, env, "", "instantiate", "acme/greeter-template@0.1.0", made, "--board", b.URL, "--param", "agent_name=front-desk", "-o", "json")
	if r.err != nil || !strings.Contains(r.stdout, tmplDigest) {
		t.Errorf("agent instantiate: %q, %v\n%s", r.stdout, r.err, r.stderr)
	}
	if flowJSON, _ := os.ReadFile(filepath.Join(made, "flow.json")); !strings.Contains(string(flowJSON), "front-desk") {
		t.Errorf("the instantiated flow = %s, want it named front-desk", flowJSON)
	}

	// Served and linked: the board shows the package on the agent.
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(b.AgentToken("greeter")), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", dir, "--monitor", b.URL, "--token-file", tokenFile, "--health-interval", "0"}, func(string) string { return "" }, strings.NewReader(""), &out, &out)
	}()
	agents := b.Agents(b.OperatorToken("viewer", identity.RoleViewer))
	var a *boardv1.Agent
	boardtest.Eventually(t, time.Minute, "the installed agent online on the board", func() bool {
		select {
		case err := <-done:
			t.Fatalf("agent serve ended: %v\n%s", err, out.String())
		default:
		}
		res, err := agents.GetAgent(t.Context(), &boardv1.GetAgentRequest{Name: "greeter"})
		if connect.CodeOf(err) == connect.CodeNotFound {
			return false
		}
		if err != nil {
			t.Fatalf("GetAgent: %v", err)
		}
		a = res.GetAgent()
		return a.GetState() == boardv1.AgentState_AGENT_STATE_ONLINE
	})
	if p := a.GetPackage(); p.GetName() != "acme/greeter" || p.GetVersion() != "1.0.0" || p.GetDigest() != digest {
		t.Errorf("the board shows the agent running %v, want acme/greeter 1.0.0 %s", p, digest)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("agent serve after cancel: %v", err)
	}
}

// TestInstallUsageErrors: exit 2, naming the flag or argument, and
// nothing written.
func TestInstallUsageErrors(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "x")
	tok := map[string]string{"SYMPHONIX_TOKEN": "a.b.c"}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"install"}, nil, "want NAME[@VERSION]"},
		{[]string{"install", "acme/hello"}, nil, "want DIR"},
		{[]string{"install", "hello", dir, "--board", "http://127.0.0.1:1"}, tok, `"hello": want scope/name`},
		{[]string{"install", "acme/hello@v1", dir, "--board", "http://127.0.0.1:1"}, tok, "the version after @"},
		{[]string{"install", "acme/hello", dir}, tok, "--board: required"},
		{[]string{"install", "acme/hello", dir, "--board", "ftp://x"}, tok, "--board: "},
		{[]string{"install", "acme/hello", dir, "--board", "http://u:p@127.0.0.1:1"}, tok, "--board: "},
		{[]string{"install", "acme/hello", dir, "--board", "http://127.0.0.1:1"}, nil, "no token: set SYMPHONIX_TOKEN or --token-file"},
		{[]string{"install", "acme/hello", dir, "--board", "http://127.0.0.1:1", "--digest", "sha256:abc"}, tok, `--digest: "sha256:abc"`},
		{[]string{"install", "acme/hello", dir, "--board", "http://127.0.0.1:1", "--ca-file", "ca.pem"}, tok, "--ca-file: only for an https board"},
		{[]string{"instantiate", "acme/t", dir, "--board", "http://127.0.0.1:1", "--param", "novalue"}, tok, `--param: "novalue": want NAME=VALUE`},
		{[]string{"instantiate", "acme/t", dir, "--board", "http://127.0.0.1:1", "--param", "a=1", "--param", "a=2"}, tok, "--param: a given twice"},
		{[]string{"install", "acme/hello", dir, "-o", "yaml"}, tok, `--output: "yaml"`},
	} {
		r := runAgent(t, c.env, "", c.args...)
		if r.code != cli.ExitUsage || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("agent %s: exit %d, %v; want exit 2 and %q", strings.Join(c.args, " "), r.code, r.err, c.want)
		}
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("usage errors wrote %v", entries)
	}
	// A board that is not there: exit 1, and nothing left.
	r := runAgent(t, tok, "", "install", "acme/hello", dir, "--board", "http://127.0.0.1:1")
	if r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), "could not be reached") {
		t.Errorf("agent install from no board: exit %d, %v; want 1 saying it could not be reached", r.code, r.err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("an install from no board left %v", entries)
	}
}
