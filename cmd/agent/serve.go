package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/journal"
	"github.com/symphonix/symphonix/node"
	"github.com/symphonix/symphonix/serve"
)

// serveOptions are agent serve's flags.
type serveOptions struct {
	link        *linkOptions
	journal     *journalOptions
	listen      string
	public      bool
	healthEvery time.Duration
	metrics     string
	triggers    string
}

// serveFlags registers agent serve's flags on fs: plain agent and agent
// serve have them. A new flag of the served agent's is one line here.
func serveFlags(fs *pflag.FlagSet) *serveOptions {
	o := &serveOptions{link: linkFlags(fs), journal: journalFlags(fs)}
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "the address to serve the chat page and API on (loopback unless --public)")
	fs.BoolVar(&o.public, "public", false, "allow a --listen address beyond loopback: there is no authentication on a served agent yet")
	fs.DurationVar(&o.healthEvery, "health-interval", node.DefaultHealthInterval, "how often to run the health checks (1s to 24h); 0 turns them off, and the agent does not announce health")
	fs.StringVar(&o.triggers, "trigger-listen", "", "the address to serve the flow's webhooks on, when its triggers.json has any, without the chat's authentication or bind; empty: $TRIGGER_BIND, else 127.0.0.1 on a free port")
	fs.StringVar(&o.metrics, "metrics-listen", "", "an address to serve Prometheus metrics on, at /metrics, without authentication (loopback unless --public); empty: none")
	return o
}

// newServeCmd is `agent serve DIR`: the agent served on loopback, linked
// to the board when a monitor URL is given. Plain `agent DIR` serves what
// it can: a flow this binary cannot run is said so and only linked;
// `agent serve` fails on it.
func newServeCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "serve DIR",
		Short: "Serve the flow in DIR on loopback (chat page and JSON API), linked to the board if given one",
		Args:  cli.Args("DIR"),
	}
	s := serveFlags(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error { return s.serve(cmd.Context(), a, args[0], false) }
	return c
}

func (o *serveOptions) serve(ctx context.Context, a *app, dir string, plain bool) error {
	jd, maxBytes, err := o.journal.check()
	if err != nil {
		return err
	}
	if err := serve.CheckListen(o.listen, o.public); err != nil {
		return cli.Usagef("--listen: %w", err)
	}
	if o.metrics != "" {
		if err := serve.CheckListen(o.metrics, o.public); err != nil {
			return cli.Usagef("--metrics-listen: %w", err)
		}
	}
	if e := o.healthEvery; e != 0 && (e < node.MinHealthInterval || e > node.MaxHealthInterval) {
		return cli.Usagef("--health-interval: %s: want 0 (off) or from %s to %s", e, node.MinHealthInterval, node.MaxHealthInterval)
	}
	url, token, err := o.link.resolve(a)
	if err != nil {
		return err
	}
	log := a.logger(slog.LevelInfo)
	tp, stopTraces, err := cli.Traces(ctx, a.getenv, "symphonix-agent", log)
	if err != nil {
		return err
	}
	defer stopTraces()
	return reported(a.stderr, node.Serve(ctx, node.Config{
		Dir:             dir,
		BoardURL:        url,
		Token:           token,
		Getenv:          a.getenv,
		Logger:          log,
		TracerProvider:  tp,
		Stdout:          a.stdout,
		Stderr:          a.stderr,
		Listen:          o.listen,
		Public:          o.public,
		JournalDetail:   jd,
		JournalMaxBytes: maxBytes,
		LinkUnservable:  plain,
		HealthInterval:  o.healthEvery,
		NoHealthChecks:  o.healthEvery == 0,
		MetricsListen:   o.metrics,
		TriggerListen:   o.triggers,
	}))
}

// journalOptions are the flags of the journal of model and tool calls.
type journalOptions struct {
	detail   string
	maxBytes int64
}

func journalFlags(fs *pflag.FlagSet) *journalOptions {
	o := &journalOptions{}
	fs.StringVar(&o.detail, "journal-detail", string(journal.DetailMetadata), "what the journal keeps of each call: metadata, or full (prompts, replies, tool arguments and results)")
	fs.Int64Var(&o.maxBytes, "journal-max-bytes", journal.DefaultMaxBytes, "rotate the journal to journal.jsonl.1 past this many bytes")
	return o
}

func (o *journalOptions) check() (journal.Detail, int64, error) {
	jd, err := journal.ParseDetail(o.detail)
	if err != nil {
		return "", 0, cli.Usagef("--journal-detail: %w", err)
	}
	if o.maxBytes <= 0 {
		return "", 0, cli.Usagef("--journal-max-bytes: %d: want more than 0", o.maxBytes)
	}
	return jd, o.maxBytes, nil
}
