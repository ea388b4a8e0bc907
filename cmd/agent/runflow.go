package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/node"
)

// newRunCmd is `agent run DIR` (node.Run): one run at a terminal.
// Questions (asks and approval cards) go to stderr and answers are read
// line by line from stdin; with --json the final state is the only thing
// on stdout. A run left waiting (stdin ended) is resumed by the next
// `agent run` on the same thread, after a restart too; one given --input
// is refused while a run waits there. Its model and tool calls are
// journalled as a served agent's are, in the same file.
//
// `agent run FILE.af --input JSON` runs an Agent Flow workflow instead
// (runAF).
func newRunCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "run DIR|FILE.af",
		Short: "Run the flow in DIR once, at the terminal; or an Agent Flow workflow",
		Args:  cli.Args("DIR"),
	}
	fs := c.Flags()
	inputs := cli.List(fs, "input", "`NAME=VALUE` written to the run's channel NAME; repeatable (from the environment, comma-separated); for FILE.af, once, the input as a JSON object", func(kv string) error {
		if looksJSON(kv) {
			return nil // FILE.af's input, read by runAF; refused for DIR below
		}
		return nameValue(kv)
	})
	workflow := fs.String("workflow", "", "for FILE.af: the workflow to run (needed when the file has several)")
	afContext := fs.String("context", "", "for FILE.af: the workflow's context, a JSON value held to its context type")
	asJSON := fs.Bool("json", false, "print the final state as one JSON object on stdout, and nothing else")
	thread := fs.String("thread", "terminal", "the run's thread: a waiting run on it is resumed")
	link := linkFlags(fs)
	jo := journalFlags(fs)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if isAF(args[0]) {
			for _, name := range []string{"json", "thread"} {
				if cmd.Flags().Changed(name) {
					return cli.Usagef("--%s: not for an Agent Flow file", name)
				}
			}
			jd, maxBytes, err := jo.check()
			if err != nil {
				return err
			}
			url, token, err := link.resolve(a)
			if err != nil {
				return err
			}
			var ctxJSON *string
			if cmd.Flags().Changed("context") {
				ctxJSON = afContext
			}
			return runAF(cmd.Context(), a, afRun{
				path: args[0], workflow: *workflow, inputs: *inputs, context: ctxJSON,
				boardURL: url, token: token, journalDetail: jd, journalMaxBytes: maxBytes,
			})
		}
		if *workflow != "" {
			return cli.Usagef("--workflow: only for an Agent Flow file (FILE.af)")
		}
		if cmd.Flags().Changed("context") {
			return cli.Usagef("--context: only for an Agent Flow file (FILE.af)")
		}
		jd, maxBytes, err := jo.check()
		if err != nil {
			return err
		}
		in := map[string]string{}
		for _, kv := range *inputs {
			if err := nameValue(kv); err != nil {
				return cli.Usagef("--input: %v", err)
			}
			name, value, _ := strings.Cut(kv, "=")
			in[name] = value
		}
		url, token, err := link.resolve(a)
		if err != nil {
			return err
		}
		log := a.logger(slog.LevelWarn)
		tp, stopTraces, err := cli.Traces(cmd.Context(), a.getenv, "symphonix-agent", log)
		if err != nil {
			return err
		}
		defer stopTraces()
		return reported(a.stderr, node.Run(cmd.Context(), node.Config{
			Dir:            args[0],
			BoardURL:       url,
			Token:          token,
			Getenv:         a.getenv,
			Logger:         log,
			TracerProvider: tp,
			Stdin:          a.stdin,
			Stdout:         a.stdout,
			Stderr:         a.stderr,
			Thread:         *thread,
			Input:          in,
			JSON:           *asJSON,

			JournalDetail:   jd,
			JournalMaxBytes: maxBytes,
		}))
	}
	return c
}

func nameValue(kv string) error {
	if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
		return fmt.Errorf("%q: want NAME=VALUE", kv)
	}
	return nil
}

// looksJSON: kv is meant as JSON (agent run FILE.af's --input), not
// NAME=VALUE.
func looksJSON(kv string) bool {
	s := strings.TrimSpace(kv)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") || json.Valid([]byte(s))
}
