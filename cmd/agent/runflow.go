package main

import (
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
func newRunCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "run DIR",
		Short: "Run the flow in DIR once, at the terminal",
		Args:  cli.Args("DIR"),
	}
	fs := c.Flags()
	inputs := cli.List(fs, "input", "`NAME=VALUE` written to the run's channel NAME; repeatable (from the environment, comma-separated)", func(kv string) error {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		return nil
	})
	asJSON := fs.Bool("json", false, "print the final state as one JSON object on stdout, and nothing else")
	thread := fs.String("thread", "terminal", "the run's thread: a waiting run on it is resumed")
	link := linkFlags(fs)
	jo := journalFlags(fs)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		jd, maxBytes, err := jo.check()
		if err != nil {
			return err
		}
		in := map[string]string{}
		for _, kv := range *inputs {
			name, value, _ := strings.Cut(kv, "=")
			in[name] = value
		}
		url, token, err := link.resolve(a)
		if err != nil {
			return err
		}
		return reported(a.stderr, node.Run(cmd.Context(), node.Config{
			Dir:      args[0],
			BoardURL: url,
			Token:    token,
			Getenv:   a.getenv,
			Logger:   a.logger(slog.LevelWarn),
			Stdin:    a.stdin,
			Stdout:   a.stdout,
			Stderr:   a.stderr,
			Thread:   *thread,
			Input:    in,
			JSON:     *asJSON,

			JournalDetail:   jd,
			JournalMaxBytes: maxBytes,
		}))
	}
	return c
}
