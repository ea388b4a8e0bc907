package symphonix

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/symphonix/symphonix"

// layer is what one package of the module may import directly, and why.
// The standard library is allowed unless listed in noStd; everything else,
// of this module or outside it, only when allow names it (a name allows the
// packages under it too: "ent" allows "ent/user"). docs/layout.md is the
// same table for people.
type layer struct {
	pkg   string
	why   string
	allow []string
	noStd []string
}

// domain is what a domain package never imports from the standard
// library: it returns errors and lets its caller log them.
var domain = []string{"log", "log/slog"}

var layers = []layer{
	// Leaves: the encodings and rules both halves share.
	{pkg: "jcs", why: "a digest is a protocol: one canonical encoding, nothing under it", noStd: domain},
	{pkg: "receipts", why: "a decision's signed receipt, which the board signs and the agent and anyone offline verify: a JWS and a key set", allow: []string{"github.com/golang-jwt/jwt/v5"}, noStd: domain},
	{pkg: "approvals", why: "the agent's half of a governed approval; digests through jcs, the amounts a card shows through text", allow: []string{"jcs", "text"}, noStd: domain},
	{pkg: "subscription", why: "the tool rule: declaration, board, remembered word; no I/O beyond its file", noStd: domain},
	{pkg: "packages", why: "solution packages: reads, validates, digests and signs, never runs or installs into a running agent; jcs for the digest, flow to validate a package's flow (flow is pure: load and validate, no I/O)", allow: []string{"jcs", "flow"}, noStd: append([]string{"net", "net/http", "os/exec"}, domain...)},
	{pkg: "secrets", why: "which values are secrets and removing them from text; reads an agent folder's env files, nothing more", noStd: domain},
	{pkg: "agentflow", why: "the Agent Flow language's front end: lexer, parser, syntax tree and formatter; the standard library only", noStd: domain},
	{pkg: "text", why: "reading what a person wrote, such as an amount, where a program needs a value: the standard library only", noStd: domain},
	{pkg: "ui", why: "the web board's files, embedded; the Go side serves bytes"},
	{pkg: "internal/pump", why: "the one receive loop both ends of the link use"},
	{pkg: "internal/wholemsg", why: "an HTTP client sending each message of a stream as one DATA frame; the standard library only"},
	{pkg: "telemetry", why: "traces by OTLP from the environment, the connect interceptor, traceparents, request ids and the log handler; nothing of the module under it", allow: []string{
		"connectrpc.com/connect/v2", "go.opentelemetry.io/otel",
	}},

	// The agent's side.
	{pkg: "flow", why: "the engine: a flow is data, its functions come from a registry; text reads the amounts an approval card shows", allow: []string{"approvals", "subscription", "text"}, noStd: domain},
	{pkg: "llm", why: "model clients speak HTTP to a provider; they know flow's model interface only", allow: []string{"flow"}},
	{pkg: "mcptools", why: "MCP servers over stdio through the go-sdk; knows nothing of flows or boards", allow: []string{"github.com/modelcontextprotocol/go-sdk"}},
	{pkg: "waiting", why: "paused runs in SQLite in the agent's folder: flow's Checkpointer", allow: []string{"flow", "modernc.org/sqlite"}},
	{pkg: "agents", why: "delegation between agents: the registry, contracts and the checks of a call; the engine's Delegate, built on flow alone", allow: []string{"flow"}, noStd: domain},
	{pkg: "agent", why: "a flow folder assembled: the flow, its tools, model and waiting store, the agents it delegates to, and the executables and MCP tools that provide its handlers and routers, their stderr less the named secrets", allow: []string{"agents", "files", "flow", "llm", "mcptools", "secrets", "subscription", "waiting"}},
	{pkg: "agentlink", why: "the agent's half of the link: speaks the API, never imports the board; checks each decision's receipt", allow: []string{"api", "approvals", "jcs", "receipts", "internal/pump", "internal/wholemsg", "telemetry", "connectrpc.com/connect/v2", "google.golang.org/protobuf", "google.golang.org/genproto/googleapis/rpc/errdetails", "go.opentelemetry.io/otel/trace"}},
	{pkg: "governed", why: "who answers a paused approval, and acting on the board's decision", allow: []string{"agentlink", "approvals", "flow", "waiting", "go.opentelemetry.io/otel"}},
	{pkg: "journal", why: "the journal of every model and tool call: wraps flow's model and tool caller, less the named secrets", allow: []string{"flow", "secrets"}},
	{pkg: "transcript", why: "what was said, a line per turn, kept for TRANSCRIPT_DAYS, less the named secrets", allow: []string{"secrets"}},
	{pkg: "runs", why: "the record of each run for the board: a flow Watcher, an outbox file, payloads withheld unless asked for and then without the named secrets", allow: []string{"flow", "secrets"}, noStd: domain},
	{pkg: "lock", why: "one served agent per folder: a file and a process check", noStd: domain},
	{pkg: "health", why: "whether the agent can do its job: rounds of checks and health.json's; the caller reports them", noStd: domain},
	{pkg: "files", why: "the agent's own store of files: content-addressed, sniffed, bounded; nothing of the module under it", noStd: domain},
	{pkg: "pause", why: "whether the agent takes new work: a file in its folder, written here and by the board's word", noStd: domain},
	{pkg: "triggers", why: "schedules and webhooks that start a flow, and delivering its result: the file, cron, the template fill from flow, the listener and the delivery client", allow: []string{"flow", "secrets", "github.com/robfig/cron/v3"}},
	{pkg: "evals", why: "a folder's eval suites run the flow for real, the folder opened by agent with the cases' tool mocks from flowtest, and a judge model (llm) on the engine; the build digest by jcs, the judge's prompt less the named secrets", allow: []string{"agent", "flow", "flowtest", "jcs", "llm", "secrets"}, noStd: domain},
	{pkg: "flowtest", why: "a folder's test files run on the real engine, the folder opened by agent with the cases' mocks for the model and the tools, its agents.json read by agents for the children's nodes and tools", allow: []string{"agent", "agents", "flow"}, noStd: domain},
	{pkg: "serve", why: "the served agent: chat page and JSON API over an assembled agent", allow: []string{"agent", "agentlink", "files", "flow", "governed", "journal", "pause", "runs", "transcript", "waiting"}},
	{pkg: "node", why: "one agent process wired in one place, for every command that starts one; never the board; packages to read the folder's install record for the hello, evals to report its eval journal's scores, agentflow for the steps of an Agent Flow run", allow: []string{"agent", "agentflow", "agentlink", "evals", "flow", "governed", "health", "journal", "llm", "lock", "mcptools", "packages", "pause", "runs", "secrets", "serve", "subscription", "transcript", "triggers", "github.com/prometheus/client_golang", "go.opentelemetry.io/otel"}},
	{pkg: "library", why: "the agent's side of the board's library: downloads a version over the API, checks it with packages as the board did, imports it; never the board, never runs what it installs", allow: []string{"api", "packages", "connectrpc.com/connect/v2"}, noStd: append([]string{"os/exec"}, domain...)},

	// The board's side.
	{pkg: "store", why: "opening the store: ent over SQLite (group commit) or PostgreSQL, its versioned migrations applied through Atlas's migrate package", allow: []string{"ent", "entgo.io/ent", "ariga.io/atlas/sql/migrate", "modernc.org/sqlite", "github.com/jackc/pgx/v5"}, noStd: domain},
	{pkg: "audit", why: "the hash-chained log, written in the caller's transaction", allow: []string{"ent", "jcs", "store"}, noStd: append([]string{"net/http"}, domain...)},
	{pkg: "identity", why: "tokens, people, passwords, setup links, sessions' rows; no HTTP, no RPC", allow: []string{"ent", "audit", "store", "github.com/golang-jwt/jwt/v5", "golang.org/x/crypto"}, noStd: append([]string{"net/http"}, domain...)},
	{pkg: "board", why: "serving, the policy table, the link and presence, the RPC services, sign-in; never the agent's half", allow: []string{
		"api", "ent", "approvals", "audit", "identity", "packages", "receipts", "store", "ui", "internal/pump",
		"connectrpc.com", "entgo.io/ent/dialect/sql", "golang.org/x/net/http2", "golang.org/x/time/rate", "google.golang.org/protobuf",
		"google.golang.org/grpc/health/grpc_health_v1", "google.golang.org/genproto/googleapis/rpc/errdetails", "github.com/robfig/cron/v3",
		"github.com/prometheus/client_golang", "telemetry", "go.opentelemetry.io/otel",
	}},

	// Commands, examples and harnesses: at the top, they may wire anything below.
	{pkg: "cmd/board", why: "flags, then one call into board; the store-side commands use store, identity and audit; the operator commands are clients of a running board's API, and package download checks what it fetched with library's Verify, as agent install does", allow: []string{"board", "store", "identity", "audit", "ent", "internal/cli", "github.com/spf13/cobra", "github.com/spf13/pflag",
		"api", "connectrpc.com", "google.golang.org/protobuf", "packages", "library", "receipts"}},
	{pkg: "cmd/agent", why: "flags, then one call into node (or library, for install and instantiate; flow, triggers, agents and agent's handlers for validate; flowtest for test; evals for eval, whose --publish is a client of the board's EvalService; agentflow for fmt, check FILE.af and run FILE.af, whose use agent resources are flow agents opened by agent and run as delegations by agents, and whose use team calls ask the model llm.FromEnv chooses, as agent run DIR's flow does)", allow: []string{"node", "agent", "agentflow", "agents", "api", "evals", "flow", "flowtest", "journal", "library", "llm", "serve", "triggers", "internal/cli", "connectrpc.com/connect/v2", "google.golang.org/protobuf", "github.com/spf13/cobra", "github.com/spf13/pflag"}},
	{pkg: "internal/cli", why: "plumbing the two commands share: output, config, version, logger, traces", allow: []string{"telemetry", "github.com/spf13/cobra", "github.com/spf13/pflag", "github.com/BurntSushi/toml", "go.opentelemetry.io/otel/trace"}},
	{pkg: "examples/embed", why: "a flow embedded in a Go program", allow: []string{"flow"}},
	{pkg: "examples/refund-desk/mcp-orders", why: "an example MCP server", allow: []string{"github.com/modelcontextprotocol/go-sdk"}},
	{pkg: "internal/boardtest", why: "a real board for tests, over Connect and gRPC", allow: []string{
		"api", "board", "ent", "identity", "store", "connectrpc.com", "github.com/golang-jwt/jwt/v5", "github.com/jackc/pgx/v5", "google.golang.org/protobuf",
		"go.opentelemetry.io/otel/trace",
	}},
	{pkg: "internal/linkload", why: "many agents' links against a real board, for benchmarks; board and store to run a board in a process of its own that the storm benchmark kills", allow: []string{
		"agentlink", "api", "board", "ent", "identity", "internal/boardtest", "internal/pump", "internal/wholemsg", "store", "connectrpc.com", "google.golang.org/protobuf",
	}},
	{pkg: "internal/browsertest", why: "headless Chromium for the browser tests, through chromedp", allow: []string{"github.com/chromedp"}},
	{pkg: "internal/exampletest", why: "copies of the examples, so no test writes into the tree"},
	{pkg: "internal/e2e", why: "the real binaries, run as a person would (tests only)"},
	{pkg: "internal/migrategen", why: "writes the store's versioned migrations from ent/schema for go generate, with Atlas and no database server (SQLite in memory)", allow: []string{"ent/migrate", "entgo.io/ent", "ariga.io/atlas", "modernc.org/sqlite"}},
	{pkg: "internal/apidoc", why: "writes docs/api.md from a buf image and the board's policy table, so the two cannot disagree", allow: []string{"board", "identity", "google.golang.org/protobuf"}},
	{pkg: "internal/apigolden", why: "v1 messages saved, read back by today's generated code (tests only)"},
	{pkg: "internal/sdktest", why: "the TypeScript SDK built with npm and run against a real board (tests only)"},
	{pkg: "internal/deploytest", why: "deploy/, the Dockerfile and .goreleaser.yaml parsed and checked without a cluster (tests only)"},
}

// generated packages are checked by regeneration, not by this table.
var generated = []string{"api", "ent"}

// TestDeps keeps the layers true: every package of the module has a row,
// every row names a package that exists, and every import is one its row
// allows.
func TestDeps(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := make(map[string][]string)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, deps, _ := strings.Cut(line, "|")
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if rel == "" || under(rel, generated) {
			continue
		}
		imports[rel] = strings.Fields(deps)
	}
	rows := make(map[string]layer)
	for _, l := range layers {
		if _, ok := imports[l.pkg]; !ok {
			t.Errorf("layer %s: no such package; remove its row (and its line in docs/layout.md)", l.pkg)
		}
		rows[l.pkg] = l
	}
	for pkg, deps := range imports {
		l, ok := rows[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add a row saying what it may import and why (and to docs/layout.md)", pkg)
			continue
		}
		for _, dep := range deps {
			if std(dep) {
				if slices.Contains(l.noStd, dep) {
					t.Errorf("%s imports %s, which it must not (%s)", pkg, dep, l.why)
				}
				continue
			}
			name := strings.TrimPrefix(strings.TrimPrefix(dep, module), "/")
			if !under(name, l.allow) {
				t.Errorf("%s imports %s, which its layer does not allow (%s)", pkg, name, l.why)
			}
		}
	}
}

// TestBoardAndAgentApart: the board and the agent's half of the link only
// meet on the wire. Neither may reach the other through any chain of imports.
func TestBoardAndAgentApart(t *testing.T) {
	t.Parallel()
	apart := map[string]string{"board": "agentlink", "agentlink": "board"}
	for pkg, never := range apart {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		if slices.Contains(strings.Fields(string(out)), module+"/"+never) {
			t.Errorf("%s depends on %s", pkg, never)
		}
	}
}

// std reports whether path is in the standard library: its first element
// has no dot.
func std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// under reports whether path is one of names or a package below one.
func under(path string, names []string) bool {
	for _, n := range names {
		if path == n || strings.HasPrefix(path, n+"/") {
			return true
		}
	}
	return false
}
