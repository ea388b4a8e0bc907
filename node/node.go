// Package node is one agent process: a flow folder assembled (package
// agent), its approvals governed (package governed), linked to the board
// when one is configured (package agentlink), with the board's word on its
// tools applied to its subscription. Serve serves it on loopback (package
// serve) with its journal and its folder's lock; Run makes one run at a
// terminal. Both are wired in one place, here, so the agent behaves the
// same whichever way it is started. ("Node" in the sense of a control
// plane's nodes, not a flow's.)
//
// The agent command is flags and one call into this package. What it
// prints, a line at a time, is part of its interface: the end-to-end tests
// and operators read the lines. The design is docs/serve.md and
// docs/approvals.md.
package node

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/symphonix/symphonix/governed"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/secrets"
	"github.com/symphonix/symphonix/serve"
)

// Config configures Serve, Run and Cancel. Every field but Dir has a
// usable zero value. The fields marked Serve, Run or Cancel are read by
// that one only; each checks every field, before it says or opens
// anything.
type Config struct {
	// Dir: required. The flow folder: DIR/flow.json, and DIR/.symphonix
	// for what the agent keeps (its waiting runs, journal and lock).
	Dir string
	// BoardURL: the board to link to, http:// (HTTP/2 without TLS) or
	// https://. "": no board; the agent runs without one, says so, and
	// the chat decides every approval.
	BoardURL string
	// Token: an agent token minted for the flow's name; required with
	// BoardURL.
	Token string
	// Getenv: where the model's settings come from (OPENAI_API_KEY, …);
	// nil is an empty environment, so the stand-in model.
	Getenv func(string) string
	// Logger: nil discards logs.
	Logger *slog.Logger
	// TracerProvider: where the spans of the agent's runs, nodes, model and
	// tool calls and its link go (docs/tracing.md); nil is off.
	TracerProvider trace.TracerProvider
	// Stdin: Run reads the answers to what a run stops for from it, a line
	// each; nil has none, so a run that stops for a person ends waiting.
	Stdin io.Reader
	// Stdout: Serve says here, a line at a time, what it is doing (its
	// build, model, tools, journal, where it serves, the link, what the
	// board's decisions came to); Run writes the finished run's outputs
	// here. nil discards. Lines come from several goroutines: it must be
	// safe for concurrent use, as an *os.File is.
	Stdout io.Writer
	// Stderr: the MCP servers' standard error, and Run's lines and the
	// questions it asks. nil discards. Safe for concurrent use, as Stdout.
	Stderr io.Writer

	// Listen (Serve): the address to serve on; "" is 127.0.0.1:0, a free
	// port, which the "serving DIR on URL" line names. It must be loopback
	// unless Public is set.
	Listen string
	// Public (Serve): allow a Listen and a MetricsListen address beyond
	// loopback; there is no authentication on a served agent yet
	// (docs/serve.md).
	Public bool
	// TriggerListen (Serve): the address to serve the flow's webhooks on,
	// when its trigger file has any (docs/triggers.md); "" is the
	// TRIGGER_BIND environment variable's (from Getenv), and without it
	// 127.0.0.1 on a free port, which the "triggers: webhooks on URL"
	// line names. Never the chat's: whatever reaches it starts the flow.
	TriggerListen string
	// MetricsListen (Serve): an address to serve the agent's metrics on,
	// at /metrics in Prometheus's text format, without authentication
	// (docs/metrics.md); "" serves none, and counts nothing. It must be
	// loopback unless Public is set; port 0 takes a free port, which the
	// "agent NAME: metrics on URL" line names.
	MetricsListen string
	// JournalDetail (Serve, Run): how much the journal keeps of each
	// call; "" is journal.DetailMetadata.
	JournalDetail journal.Detail
	// JournalMaxBytes (Serve, Run): rotate the journal past this size; 0 is
	// journal.DefaultMaxBytes, and less than 0 is refused.
	JournalMaxBytes int64
	// HealthInterval (Serve): how often the health checks run; 0 is
	// DefaultHealthInterval (60 s), otherwise from 1 s to 24 h. A check
	// that has not answered within 5 s (half the interval when that is
	// shorter) fails its round.
	HealthInterval time.Duration
	// NoHealthChecks (Serve): run no health checks, and do not announce
	// the health capability. `agent run` never runs them.
	NoHealthChecks bool
	// HealthChecks (Serve): checks of the embedding program's, run beside
	// the built-in ones (mcp:<server>, model, waiting) and the folder's
	// health.json (docs/health.md).
	HealthChecks []HealthCheck
	// LinkUnservable (Serve): what to do with a flow this binary cannot
	// assemble (one whose handlers and routers a generated program
	// provides). false fails. true says "agent NAME: not served: …" and
	// links the agent to the board all the same, as plain `agent DIR`
	// does. A lock held by another agent fails either way.
	LinkUnservable bool

	// Thread (Run, Cancel): the run's thread; a run waiting on it is
	// resumed rather than a new one started (or, for Cancel, ended). "" is
	// "terminal".
	Thread string
	// Input (Run): what a new run starts with, channel name to text, each
	// read by its channel's type (agent.Agent.Input): the command's
	// --input NAME=VALUE. nil starts with nothing. A run waiting on Thread
	// and Input given is refused (ErrRunWaiting): the two are never mixed.
	Input map[string]string
	// SwitchesWithin (Run, Serve): how long a run linked to a board waits,
	// before it starts, for the board's word on which tools are on; 0 is
	// DefaultSwitchesWithin, and less than 0 is refused. Served, the wait
	// counts from the start, and a message or answer that arrives during it
	// waits for the rest of it. Unused for a flow that declares no tools.
	SwitchesWithin time.Duration
	// Reason (Cancel, Pause, Resume): for Cancel, why the run was ended,
	// told to the board, at most governed.MaxReason bytes; for Pause and
	// Resume, why the agent is paused or resumed, at most pause.MaxReason
	// bytes (required to pause).
	Reason string
	// JSON (Run): write the finished run's state on Stdout as one JSON
	// object, and nothing else; false writes each output channel as
	// "NAME: TEXT".
	JSON bool

	// env is the folder's .env applied to Getenv, named the agent's named
	// secrets, and follow every Set holding them (named, and the filters
	// of details: detailFilter), which grow as .env changes while it is
	// served; all set by withEnv.
	env    *secrets.Env
	named  *secrets.Set
	follow *followers
}

// checked returns cfg with its defaults filled in, or what is wrong with it.
func (cfg Config) checked() (Config, error) {
	if cfg.Dir == "" {
		return cfg, errors.New("node: Config.Dir is required")
	}
	if cfg.BoardURL != "" && cfg.Token == "" {
		return cfg, errors.New("node: Config.Token is required with a BoardURL")
	}
	if cfg.HealthInterval != 0 && (cfg.HealthInterval < MinHealthInterval || cfg.HealthInterval > MaxHealthInterval) {
		return cfg, fmt.Errorf("node: Config.HealthInterval is %s; want 0 (the default, %s) or from %s to %s",
			cfg.HealthInterval, DefaultHealthInterval, MinHealthInterval, MaxHealthInterval)
	}
	if err := checkHealthChecks(cfg.HealthChecks); err != nil {
		return cfg, err
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if err := serve.CheckListen(cfg.Listen, cfg.Public); err != nil {
		return cfg, fmt.Errorf("node: Config.Listen: %w", err)
	}
	if cfg.MetricsListen != "" {
		if err := serve.CheckListen(cfg.MetricsListen, cfg.Public); err != nil {
			return cfg, fmt.Errorf("node: Config.MetricsListen: %w", err)
		}
	}
	if cfg.JournalDetail == "" {
		cfg.JournalDetail = journal.DetailMetadata
	}
	if _, err := journal.ParseDetail(string(cfg.JournalDetail)); err != nil {
		return cfg, fmt.Errorf("node: Config.JournalDetail: %w", err)
	}
	if cfg.JournalMaxBytes < 0 {
		return cfg, fmt.Errorf("node: Config.JournalMaxBytes is %d; want 0 (the default) or more", cfg.JournalMaxBytes)
	}
	if cfg.JournalMaxBytes == 0 {
		cfg.JournalMaxBytes = journal.DefaultMaxBytes
	}
	if _, ok := cfg.Input[""]; ok {
		return cfg, errors.New("node: Config.Input: a channel with no name")
	}
	if cfg.Thread == "" {
		cfg.Thread = "terminal"
	}
	if cfg.SwitchesWithin < 0 {
		return cfg, fmt.Errorf("node: Config.SwitchesWithin is %s; want 0 (the default) or more", cfg.SwitchesWithin)
	}
	if cfg.SwitchesWithin == 0 {
		cfg.SwitchesWithin = DefaultSwitchesWithin
	}
	if len(cfg.Reason) > governed.MaxReason {
		return cfg, fmt.Errorf("node: Config.Reason is %d bytes, at most %d", len(cfg.Reason), governed.MaxReason)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Stdin == nil {
		cfg.Stdin = strings.NewReader("")
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	return cfg, nil
}
