package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newEvalsCmd is board evals: what each agent's builds scored in their
// evals, and whether the build an agent runs now scored worse.
func newEvalsCmd(a *app) *cobra.Command {
	c := cli.Group("evals", "Read what agents' builds scored in their evals, and what to look at: list")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(evalsList(a, co))
	return c
}

func evalsList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	var only string
	c := &cobra.Command{
		Use:   "list [--agent NAME]",
		Short: "List every agent's eval suites, or one agent's: each build's score, the deployed build marked (*), and its flags",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			subject := ""
			if only != "" {
				subject = "agent " + only
			}
			suites, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.AgentEvalSuite, string, error) {
				res, err := bc.evals.ListEvalScores(cmd.Context(), &boardv1.ListEvalScoresRequest{Agent: only, PageSize: size, PageToken: token})
				if err != nil {
					return nil, "", bc.explain(err, subject)
				}
				return res.GetSuites(), res.GetNextPageToken(), nil
			})
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"AGENT", "SUITE", "BUILD", "DEPLOYED", "SCORE", "PASSED", "WHEN", "FLAGS"}}
			for _, s := range suites {
				flags := evalFlags(s.GetFlags())
				if s.GetDeployedBuild() != "" && !hasDeployed(s) && flags != "-" {
					// Not scored: the deployed build has a row of its own.
					t.Append(clip(s.GetAgent(), 128), clip(s.GetSuite(), 128), shortBuild(s.GetDeployedBuild()), "*", "-", "-", "-", flags)
					flags = "-"
				}
				for _, b := range s.GetBuilds() {
					mark, f := "", "-"
					if b.GetDeployed() {
						mark, f = "*", flags
					}
					t.Append(clip(s.GetAgent(), 128), clip(s.GetSuite(), 128), shortBuild(b.GetBuild()), mark,
						fmt.Sprintf("%.2f", b.GetScore()), yesNo(b.GetPassed(), "yes", "no"), when(b.GetScoreTime()), f)
				}
			}
			if err := out.Print(a.stdout, t, protoJSONs(suites)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	c.Flags().StringVar(&only, "agent", "", "only this agent's suites")
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	return c
}

func hasDeployed(s *boardv1.AgentEvalSuite) bool {
	for _, b := range s.GetBuilds() {
		if b.GetDeployed() {
			return true
		}
	}
	return false
}

// shortBuild is a build's first 12 hex digits; "-" for none.
func shortBuild(b string) string {
	h := strings.TrimPrefix(b, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return clip(h, 12)
}

// evalFlags is a suite's flags in words: "regressed", "below threshold",
// "not scored"; "-" for none.
func evalFlags(fs []boardv1.EvalFlag) string {
	var w []string
	for _, f := range fs {
		switch f {
		case boardv1.EvalFlag_EVAL_FLAG_REGRESSED:
			w = append(w, "regressed")
		case boardv1.EvalFlag_EVAL_FLAG_BELOW_THRESHOLD:
			w = append(w, "below threshold")
		case boardv1.EvalFlag_EVAL_FLAG_NOT_SCORED:
			w = append(w, "not scored")
		}
	}
	if len(w) == 0 {
		return "-"
	}
	return strings.Join(w, ", ")
}
