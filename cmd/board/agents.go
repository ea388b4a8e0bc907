package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newAgentsCmd is board agents: the fleet as a running board knows it.
func newAgentsCmd(a *app) *cobra.Command {
	c := cli.Group("agents", "Read the agents a running board knows: list, get, watch; forget a stale one")
	co := clientFlags(c.PersistentFlags())

	var out cli.Output
	var limit int
	ls := &cobra.Command{
		Use:   "list",
		Short: "List the agents, by name",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			agents, more, err := listAgents(cmd.Context(), bc, limit)
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"NAME", "STATE", "HEALTH", "PAUSED", "TOOLS", "LAST SEEN"}}
			for _, ag := range agents {
				t.Append(clip(ag.GetName(), 128), word(ag.GetState()), health(ag), paused(ag), fmt.Sprint(len(ag.GetTools())), when(ag.GetLastSeenTime()))
			}
			if err := out.Print(a.stdout, t, protoJSONs(agents)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	out.AddFlag(ls.Flags())
	limitFlag(ls, &limit)

	var getOut cli.Output
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one agent: its state, health, pause, capabilities and tools",
		Args:  cli.Args("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.agents.GetAgent(cmd.Context(), &boardv1.GetAgentRequest{Name: args[0]})
			if err != nil {
				return bc.explain(err, "agent "+args[0])
			}
			return getOut.Print(a.stdout, agentCard(res.GetAgent()), protoJSON(res.GetAgent()))
		},
	}
	getOut.AddFlag(get.Flags())

	var watchOut cli.Output
	watch := &cobra.Command{
		Use:   "watch",
		Short: "Print every agent as it stands, then each change, until interrupted",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			return watchAgents(cmd.Context(), bc, &watchOut, a.stdout)
		},
	}
	watchOut.AddFlag(watch.Flags())

	c.AddCommand(ls, get, watch, agentsForget(a, co))
	return c
}

// agentsForget is board agents forget: an admin removes a stale agent.
func agentsForget(a *app, co *clientOptions) *cobra.Command {
	var (
		out    cli.Output
		reason string
		yes    bool
	)
	c := &cobra.Command{
		Use:   "forget NAME --reason TEXT",
		Short: "Forget a stale agent (admins): its switches, triggers, health and eval scores go; its history stays",
		Long: `Forget removes an agent that has been offline for longer than the board's --forget-after (1h by
default): its row and tool switches, the triggers and pause it reported, its health rounds and eval scores.
Its runs, approvals, conversations and audit entries stay. An agent that links again appears as new, with
every tool off. At a terminal it asks for confirmation; a script passes --yes.`,
		Args: cli.Args("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return cli.Usagef("--reason: required: say why the agent is forgotten (it is kept in the audit log)")
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			// --yes counts only on the command line, as for decide.
			if !(yes && cmd.Flags().Changed("yes")) {
				if err := askYes(cmd.InOrStdin(), a.stderr, "agent "+args[0], "not forgotten", "forget agent "+clip(args[0], 128), "forget"); err != nil {
					return err
				}
			}
			res, err := bc.agents.ForgetAgent(cmd.Context(), &boardv1.ForgetAgentRequest{Name: args[0], Reason: reason})
			if err != nil {
				return bc.explain(err, "agent "+args[0])
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, protoJSON(res.GetAgent()))
			}
			_, err = fmt.Fprintf(a.stdout, "agent %s forgotten (last seen %s)\n", clip(args[0], 128), when(res.GetAgent().GetLastSeenTime()))
			return err
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why (required; kept in the audit log)")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "forget without asking (for scripts); only on the command line")
	out.AddFlag(c.Flags())
	return c
}

// listAgents reads up to limit agents, a page at a time; more says there
// were more.
func listAgents(ctx context.Context, bc *boardClient, limit int) (agents []*boardv1.Agent, more bool, err error) {
	return readPages(limit, 1000, func(size int32, token string) ([]*boardv1.Agent, string, error) {
		res, err := bc.agents.ListAgents(ctx, &boardv1.ListAgentsRequest{PageSize: size, PageToken: token})
		if err != nil {
			return nil, "", bc.explain(err, "")
		}
		return res.GetAgents(), res.GetNextPageToken(), nil
	})
}

// watchAgents prints one line (or JSON object) per message of
// WatchAgents until ctx ends or the board ends the watch.
func watchAgents(ctx context.Context, bc *boardClient, out *cli.Output, w io.Writer) error {
	stream, err := bc.agents.WatchAgents(ctx, &boardv1.WatchAgentsRequest{})
	if err != nil {
		return watchEnd(ctx, bc, err)
	}
	defer stream.Close()
	for {
		msg, err := stream.Receive()
		if err != nil {
			return watchEnd(ctx, bc, err)
		}
		ag := msg.GetAgent()
		switch {
		case out.JSON():
			err = jsonLine(w, protoJSON(msg))
		case msg.GetForgotten():
			_, err = fmt.Fprintf(w, "%s  %s  forgotten\n", when(ag.GetLastSeenTime()), clip(ag.GetName(), 128))
		default:
			_, err = fmt.Fprintf(w, "%s  %s  %s  health=%s  paused=%s\n", when(ag.GetLastSeenTime()), clip(ag.GetName(), 128), word(ag.GetState()), health(ag), paused(ag))
		}
		if err != nil {
			return err
		}
	}
}

// agentCard is one agent as a two-column table.
func agentCard(ag *boardv1.Agent) cli.Table {
	t := cli.Table{Header: []string{"FIELD", "VALUE"}}
	t.Append("name", clip(ag.GetName(), 128))
	t.Append("description", clip(ag.GetDescription(), 200))
	t.Append("state", word(ag.GetState()))
	t.Append("health", health(ag))
	for _, ch := range ag.GetHealth().GetChecks() {
		t.Append("  "+ch.GetName(), strings.TrimSpace(word(ch.GetStatus())+" "+clip(ch.GetDetail(), 120)))
	}
	t.Append("paused", paused(ag))
	if p := ag.GetPause(); p != nil {
		t.Append("  reason", clip(p.GetReason(), 200))
		t.Append("  by", fmt.Sprintf("%s (%s), %s", dash(p.GetBy()), word(p.GetOrigin()), when(p.GetTime())))
		t.Append("  delivered", yesNo(p.GetDelivered(), "yes", "no"))
	}
	t.Append("protocol", clip(ag.GetProtocol(), 64))
	t.Append("build", clip(ag.GetBuild(), 80))
	if p := ag.GetPackage(); p != nil {
		t.Append("package", sanitize(clip(p.GetName(), 200)+"@"+clip(p.GetVersion(), 64)+" ("+clip(p.GetDigest(), 80)+")", false))
	} else {
		t.Append("package", "-")
	}
	t.Append("capabilities", sanitize(list(ag.GetCapabilities()), false))
	t.Append("tools", sanitize(list(ag.GetTools()), false))
	var inputs []string
	for _, in := range ag.GetInputs() {
		inputs = append(inputs, in.GetName())
	}
	t.Append("inputs", sanitize(list(inputs), false))
	t.Append("session", clip(ag.GetSession(), 64))
	t.Append("first seen", when(ag.GetFirstSeenTime()))
	t.Append("last seen", when(ag.GetLastSeenTime()))
	t.Append("runs dropped", fmt.Sprint(ag.GetRunsDropped()))
	return t
}

// health is an agent's latest health, or "-" when it never reported.
func health(ag *boardv1.Agent) string {
	if ag.GetHealth() == nil {
		return "-"
	}
	return word(ag.GetHealth().GetStatus())
}

// paused says whether an agent takes work: "no", "yes", or "asked" while
// an operator's pause has not reached it yet.
func paused(ag *boardv1.Agent) string {
	p := ag.GetPause()
	switch {
	case p == nil || (!p.GetPaused() && p.GetDelivered()):
		return "no"
	case !p.GetDelivered():
		if p.GetPaused() {
			return "asked"
		}
		return "yes (resume asked)"
	}
	return "yes"
}
