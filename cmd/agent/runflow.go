package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
)

// runFlow is `agent run DIR` (node.Run): one run at a terminal. Questions
// (asks and approval cards) go to stderr and answers are read line by line
// from stdin; with --json the final state is the only thing on stdout. A
// run left waiting (stdin ended) is resumed by the next `agent run` on the
// same thread, after a restart too; one given --input is refused while a
// run waits there. Its model and tool calls are journalled as a served
// agent's are, in the same file.
func runFlow(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var inputs listFlag
	fs.Var(&inputs, "input", "NAME=VALUE written to the run's channel NAME; repeatable")
	asJSON := fs.Bool("json", false, "print the final state as one JSON object on stdout, and nothing else")
	thread := fs.String("thread", "terminal", "the run's thread: a waiting run on it is resumed")
	monitor := fs.String("monitor", getenv("MONITOR_URL"), "the board's URL (env MONITOR_URL)")
	token := fs.String("token", getenv("MONITOR_TOKEN"), "an agent token (env MONITOR_TOKEN)")
	detail := fs.String("journal-detail", string(journal.DetailMetadata), "what the journal keeps of each call: metadata, or full (prompts, replies, tool arguments and results)")
	maxBytes := fs.Int64("journal-max-bytes", journal.DefaultMaxBytes, "rotate the journal to journal.jsonl.1 past this many bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: agent run [--input NAME=VALUE]... [--json] [--thread T] [--monitor URL] [--journal-detail D] [--journal-max-bytes N] DIR")
	}
	jd, err := journal.ParseDetail(*detail)
	if err != nil {
		return fmt.Errorf("--journal-detail: %w", err)
	}
	if *maxBytes <= 0 {
		return fmt.Errorf("--journal-max-bytes: %d: want more than 0", *maxBytes)
	}
	in := map[string]string{}
	for _, kv := range inputs {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return fmt.Errorf("--input %q: want NAME=VALUE", kv)
		}
		in[name] = value
	}
	if *monitor != "" && *token == "" {
		return errNoToken
	}
	return reported(stderr, node.Run(ctx, node.Config{
		Dir:      fs.Arg(0),
		BoardURL: *monitor,
		Token:    *token,
		Getenv:   getenv,
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Stdin:    stdin,
		Stdout:   stdout,
		Stderr:   stderr,
		Thread:   *thread,
		Input:    in,
		JSON:     *asJSON,

		JournalDetail:   jd,
		JournalMaxBytes: *maxBytes,
	}))
}
