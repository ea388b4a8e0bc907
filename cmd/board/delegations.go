package main

import (
	"strings"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newDelegationsCmd is board delegations: the delegations agents' runs
// asked for and did not get.
func newDelegationsCmd(a *app) *cobra.Command {
	c := cli.Group("delegations", "Read the delegations agents' runs did not get: list")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(delegationsList(a, co))
	return c
}

func delegationsList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	var code string
	c := &cobra.Command{
		Use:   "list AGENT [--code CODE]",
		Short: "List an agent's delegation failures, newest first: AGENT_RECURSION is a circular delegation",
		Example: `  board delegations list refund-desk
  board delegations list refund-desk --code AGENT_RECURSION -o json`,
		Args: cli.Args("AGENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			fs, more, err := readPages(limit, 500, func(size int32, token string) ([]*boardv1.DelegationFailure, string, error) {
				res, err := bc.runs.ListDelegationFailures(cmd.Context(), &boardv1.ListDelegationFailuresRequest{
					Agent: args[0], Code: code, PageSize: size, PageToken: token})
				if err != nil {
					return nil, "", bc.explain(err, "agent "+args[0])
				}
				return res.GetFailures(), res.GetNextPageToken(), nil
			})
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"TIME", "RUN", "NODE", "TARGET", "CODE", "CHAIN", "MESSAGE"}}
			for _, f := range fs {
				t.Append(when(f.GetTime()), clip(f.GetRunId(), 64), clip(f.GetNode(), 40), dash(clip(f.GetTarget(), 64)),
					f.GetCode(), dash(clip(strings.Join(f.GetChain(), " → "), 80)), dash(clip(f.GetMessage(), 80)))
			}
			if err := out.Print(a.stdout, t, protoJSONs(fs)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	c.Flags().StringVar(&code, "code", "", "only failures with this code (UNKNOWN_AGENT, AGENT_NOT_PERMITTED, …, AGENT_RECURSION)")
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	return c
}
