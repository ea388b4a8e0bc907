package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/symphonix/symphonix/agentlink"
)

// run is the whole command, so tests can run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return runValidate(args[1:], stdout)
		case "check":
			return runCheck(args[1:], stdout)
		case "run":
			return runFlow(ctx, args[1:], getenv, stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	monitor := fs.String("monitor", getenv("MONITOR_URL"), "the board's URL (env MONITOR_URL)")
	token := fs.String("token", getenv("MONITOR_TOKEN"), "an agent token for this flow's name (env MONITOR_TOKEN)")
	var caps listFlag
	fs.Var(&caps, "capability", "an optional capability to claim (health, pause); repeatable")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: agent [--monitor URL] [--token TOKEN] DIR")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	id, err := agentlink.ReadIdentity(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "agent %s: build %s\n", id.Name, id.Build)
	if *monitor == "" {
		fmt.Fprintf(stdout, "agent %s: no board configured (--monitor or MONITOR_URL): running without a board\n", id.Name)
		<-ctx.Done()
		return nil
	}
	if *token == "" {
		return fmt.Errorf("--token or MONITOR_TOKEN: required with a monitor URL")
	}
	link, err := agentlink.New(agentlink.Config{
		BoardURL:     *monitor,
		Token:        *token,
		Identity:     id,
		Capabilities: caps,
		Logger:       log,
		OnState: func(s agentlink.State) {
			if s.Up {
				fmt.Fprintf(stdout, "agent %s: linked to %s (session %s)\n", id.Name, *monitor, s.Session)
			} else {
				fmt.Fprintf(stdout, "agent %s: link down: %v\n", id.Name, s.Err)
			}
		},
	})
	if err != nil {
		return err
	}
	return link.Run(ctx)
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
