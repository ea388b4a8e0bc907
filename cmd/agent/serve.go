package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/serve"
)

// runServe is `agent serve DIR` and plain `agent DIR` (node.Serve): the
// agent served on loopback, linked to the board when a monitor URL is
// given. Plain `agent DIR` serves what it can: a flow this binary cannot
// run is said so and only linked; `agent serve` fails on it.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, plain bool) error {
	name := "agent serve"
	if plain {
		name = "agent"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	monitor := fs.String("monitor", getenv("MONITOR_URL"), "the board's URL (env MONITOR_URL)")
	token := fs.String("token", getenv("MONITOR_TOKEN"), "an agent token for this flow's name (env MONITOR_TOKEN)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	listen := fs.String("listen", "127.0.0.1:0", "the address to serve the chat page and API on (loopback unless --public)")
	public := fs.Bool("public", false, "allow a --listen address beyond loopback: there is no authentication on a served agent yet")
	detail := fs.String("journal-detail", string(journal.DetailMetadata), "what the journal keeps of each call: metadata, or full (prompts, replies, tool arguments and results)")
	maxBytes := fs.Int64("journal-max-bytes", journal.DefaultMaxBytes, "rotate the journal to journal.jsonl.1 past this many bytes")
	healthEvery := fs.Duration("health-interval", node.DefaultHealthInterval, "how often to run the health checks (1s to 24h); 0 turns them off, and the agent does not announce health")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: %s [--listen ADDR] [--monitor URL] [--token TOKEN] [--health-interval D] DIR", name)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	jd, err := journal.ParseDetail(*detail)
	if err != nil {
		return fmt.Errorf("--journal-detail: %w", err)
	}
	if *maxBytes <= 0 {
		return fmt.Errorf("--journal-max-bytes: %d: want more than 0", *maxBytes)
	}
	if err := serve.CheckListen(*listen, *public); err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	if e := *healthEvery; e != 0 && (e < node.MinHealthInterval || e > node.MaxHealthInterval) {
		return fmt.Errorf("--health-interval: %s: want 0 (off) or from %s to %s", e, node.MinHealthInterval, node.MaxHealthInterval)
	}
	if *monitor != "" && *token == "" {
		return errNoToken
	}
	return reported(stderr, node.Serve(ctx, node.Config{
		Dir:             fs.Arg(0),
		BoardURL:        *monitor,
		Token:           *token,
		Getenv:          getenv,
		Logger:          slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		Stdout:          stdout,
		Stderr:          stderr,
		Listen:          *listen,
		Public:          *public,
		JournalDetail:   jd,
		JournalMaxBytes: *maxBytes,
		LinkUnservable:  plain,
		HealthInterval:  *healthEvery,
		NoHealthChecks:  *healthEvery == 0,
	}))
}
