package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newAlertsCmd is board alerts: the rules on what agents report, and where
// each stands for each agent now.
func newAlertsCmd(a *app) *cobra.Command {
	c := cli.Group("alerts", "Read where alert rules stand for each agent, and change the rules: list, rule")
	co := clientFlags(c.PersistentFlags())
	rules := cli.Group("rule", "Read and change alert rules: put, list, delete")
	rules.AddCommand(alertRulePut(a, co), alertRuleList(a, co), alertRuleDelete(a, co))
	c.AddCommand(alertsList(a, co), rules)
	return c
}

func alertsList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	var quiet bool
	var rule, agent string
	c := &cobra.Command{
		Use:   "list [--quiet]",
		Short: "Evaluate every alert rule for every agent it covers, now: firing and cannot tell (with --quiet, quiet too)",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			as, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.Alert, string, error) {
				res, err := bc.alerts.ListAlerts(cmd.Context(), &boardv1.ListAlertsRequest{RuleId: rule, Agent: agent,
					IncludeQuiet: quiet, PageSize: size, PageToken: token})
				if err != nil {
					return nil, "", bc.explain(err, "")
				}
				return res.GetAlerts(), res.GetNextPageToken(), nil
			})
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"RULE", "AGENT", "STATE", "COUNT", "LAST", "REASON"}}
			for _, al := range as {
				t.Append(clip(al.GetRuleId(), 64), clip(al.GetAgent(), 128), word(al.GetState()), fmt.Sprint(al.GetCount()),
					when(al.GetLastTime()), clip(al.GetReason(), 160))
			}
			if err := out.Print(a.stdout, t, protoJSONs(as)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	c.Flags().BoolVar(&quiet, "quiet", false, "list quiet alerts too")
	c.Flags().StringVar(&rule, "rule", "", "only this rule's")
	c.Flags().StringVar(&agent, "agent", "", "only this agent's")
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	return c
}

// alertRuleTable is rules as a table.
func alertRuleTable(rules ...*boardv1.AlertRule) cli.Table {
	t := cli.Table{Header: []string{"ID", "AGENT", "CONDITION", "WINDOW", "UPDATED BY", "DESCRIPTION"}}
	for _, r := range rules {
		t.Append(r.GetId(), clip(r.GetAgent(), 40), word(r.GetCondition()), span(r.GetWindow()), clip(r.GetUpdatedBy(), 60), clip(r.GetDescription(), 60))
	}
	return t
}

func alertRulePut(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var id, agent, condition, description string
	var window time.Duration
	c := &cobra.Command{
		Use:   "put --agent GLOB --condition delegation-cycle",
		Short: "Store an alert rule; with the id of one, replace it (admins)",
		Example: `  board alerts rule put --agent '*' --condition delegation-cycle
  board alerts rule put --id loops --agent 'refund-*' --condition delegation-cycle --window 1h --description 'circular refunds'`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := &boardv1.AlertRule{Id: id, Agent: agent, Description: description}
			switch condition {
			case "delegation-cycle":
				r.Condition = boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE
			case "":
				return cli.Usagef("--condition: required: delegation-cycle")
			default:
				return cli.Usagef("--condition: %q: want delegation-cycle", condition)
			}
			if agent == "" {
				return cli.Usagef(`--agent: required: "*" for every agent, a name, or a glob`)
			}
			if cmd.Flags().Changed("window") {
				r.Window = durationpb.New(window)
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.alerts.PutAlertRule(cmd.Context(), &boardv1.PutAlertRuleRequest{Rule: r})
			if err != nil {
				return bc.explain(err, "alert rule")
			}
			return out.Print(a.stdout, alertRuleTable(res.GetRule()), protoJSON(res.GetRule()))
		},
	}
	fs := c.Flags()
	fs.StringVar(&id, "id", "", "the rule's id: empty for a new rule the board names; an existing id replaces that rule")
	fs.StringVar(&agent, "agent", "", `which agents: "*", a name, or a glob ("refund-*")`)
	fs.StringVar(&condition, "condition", "", "what it watches for: delegation-cycle")
	fs.DurationVar(&window, "window", 0, "how far back a report counts, 1m to 720h (default 24h)")
	fs.StringVar(&description, "description", "", "what the rule is for (at most 1,000 bytes)")
	out.AddFlag(fs)
	return c
}

func alertRuleList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "list",
		Short: "List the alert rules, by id",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.alerts.ListAlertRules(cmd.Context(), &boardv1.ListAlertRulesRequest{})
			if err != nil {
				return bc.explain(err, "")
			}
			return out.Print(a.stdout, alertRuleTable(res.GetRules()...), protoJSONs(res.GetRules()))
		},
	}
	out.AddFlag(c.Flags())
	return c
}

func alertRuleDelete(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "delete ID",
		Short: "Remove an alert rule (admins)",
		Args:  cli.Args("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			if _, err := bc.alerts.DeleteAlertRule(cmd.Context(), &boardv1.DeleteAlertRuleRequest{Id: args[0]}); err != nil {
				return bc.explain(err, "alert rule "+args[0])
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, map[string]any{"id": args[0], "deleted": true})
			}
			_, err = fmt.Fprintf(a.stdout, "alert rule %s deleted\n", clip(args[0], 64))
			return err
		},
	}
	out.AddFlag(c.Flags())
	return c
}
