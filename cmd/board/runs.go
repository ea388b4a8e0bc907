package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newRunsCmd is board runs: what agents' runs did. For now, the tree of
// delegations a run belongs to.
func newRunsCmd(a *app) *cobra.Command {
	c := cli.Group("runs", "Read agents' runs: tree")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(runsTree(a, co))
	return c
}

func runsTree(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "tree AGENT RUN",
		Short: "Show the tree of runs RUN belongs to: its trigger, the root run, and every run its agent nodes delegated to",
		Long: `Tree finds the run nothing delegated to above RUN (any run of the tree will do) and shows it with
every run delegated to under it, indented, children in the order they started: the node that
delegated, the agent the child ran as, its state and how long it took. At most 1,000 runs and
32 levels are shown; the board says when more were left out.`,
		Example: `  board runs tree refund-desk 7f3a9c2e5b1d4f60
  board runs tree refund-desk 7f3a9c2e5b1d4f60 -o json`,
		Args: cli.Args("AGENT", "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.runs.GetRunTree(cmd.Context(), &boardv1.GetRunTreeRequest{Agent: args[0], Id: args[1]})
			if err != nil {
				return bc.explain(err, "run "+args[1]+" of agent "+args[0])
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, protoJSON(res))
			}
			var b strings.Builder
			if tr := res.GetRoot().GetRun().GetTrigger(); tr != nil {
				fmt.Fprintf(&b, "trigger %s (%s) at %s\n", clip(tr.GetTriggerId(), 64), triggerKind(tr.GetKind()), when(tr.GetOccurrenceTime()))
			}
			writeTree(&b, res.GetRoot(), 0)
			if res.GetTruncated() {
				b.WriteString("… more runs were left out: at most 1,000 runs and 32 levels are shown\n")
			}
			_, err = fmt.Fprint(a.stdout, b.String())
			return err
		},
	}
	out.AddFlag(c.Flags())
	return c
}

// writeTree writes one line for n and, indented, its children's.
func writeTree(b *strings.Builder, n *boardv1.RunTreeNode, depth int) {
	r := n.GetRun()
	fmt.Fprintf(b, "%s%s", strings.Repeat("  ", depth), clip(r.GetId(), 64))
	if d := r.GetDelegation(); d != nil {
		fmt.Fprintf(b, "  %s → %s", clip(d.GetParentNode(), 64), clip(d.GetAgent(), 64))
	} else {
		fmt.Fprintf(b, "  %s", clip(r.GetAgent(), 128))
	}
	fmt.Fprintf(b, "  %s  %s\n", word(r.GetState()), runTook(r))
	for _, c := range n.GetChildren() {
		writeTree(b, c, depth+1)
	}
}

// runTook is how long a run took, or "-" while it goes on.
func runTook(r *boardv1.Run) string {
	if d := r.GetDuration(); d != nil {
		return d.AsDuration().Round(time.Millisecond).String()
	}
	if r.GetEndTime() != nil && r.GetStartTime() != nil {
		return r.GetEndTime().AsTime().Sub(r.GetStartTime().AsTime()).Round(time.Millisecond).String()
	}
	return "-"
}
