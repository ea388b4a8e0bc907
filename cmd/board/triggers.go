package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// newTriggersCmd is board triggers: the schedules and webhooks agents run,
// as they report them, and the switch that pauses one.
func newTriggersCmd(a *app) *cobra.Command {
	c := cli.Group("triggers", "Read the triggers agents run, and pause or resume one: list, pause, resume")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(triggersList(a, co), triggersPause(a, co), triggersResume(a, co))
	return c
}

func triggersList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	c := &cobra.Command{
		Use:   "list [AGENT]",
		Short: "List every agent's triggers, or one agent's: kind, schedule or path, next run, last occurrence, pause",
		Args:  cli.MaxArgs("AGENT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			only, subject := "", ""
			if len(args) == 1 {
				only, subject = args[0], "agent "+args[0]
			}
			ts, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.AgentTrigger, string, error) {
				res, err := bc.triggers.ListTriggers(cmd.Context(), &boardv1.ListTriggersRequest{Agent: only, PageSize: size, PageToken: token})
				if err != nil {
					return nil, "", bc.explain(err, subject)
				}
				return res.GetTriggers(), res.GetNextPageToken(), nil
			})
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"AGENT", "TRIGGER", "KIND", "WHEN", "NEXT RUN", "LAST", "PAUSED"}}
			for _, at := range ts {
				tr := at.GetTrigger()
				next := when(tr.GetNextRunTime())
				if tr.GetKind() == boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE && tr.GetNextRunTime() == nil {
					next = "cannot tell"
				}
				if !at.GetOnline() && tr.GetKind() == boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE {
					next = "agent offline"
				}
				t.Append(clip(at.GetAgent(), 128), clip(tr.GetId(), 64), triggerKind(tr.GetKind()), clip(triggerWhen(tr), 80),
					next, clip(lastOccurrence(tr.GetLast()), 80), clip(triggerPaused(at.GetPause()), 80))
			}
			if err := out.Print(a.stdout, t, protoJSONs(ts)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	return c
}

func triggersPause(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var reason string
	c := &cobra.Command{
		Use:   "pause AGENT TRIGGER --reason R",
		Short: "Stop one trigger of one agent from starting runs until it is resumed (admins)",
		Args:  cli.Args("AGENT", "TRIGGER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return cli.Usagef("%s: --reason: required: say why, for the audit log and the other operators", cmd.CommandPath())
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.triggers.PauseTrigger(cmd.Context(), &boardv1.PauseTriggerRequest{Agent: args[0], TriggerId: args[1], Reason: reason})
			if err != nil {
				return bc.explain(err, "agent "+args[0])
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, protoJSON(res))
			}
			return printTriggerSwitch(a, args[0], args[1], "paused", res.GetPushed())
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why (required, at most 1 KiB)")
	out.AddFlag(c.Flags())
	return c
}

func triggersResume(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "resume AGENT TRIGGER",
		Short: "Let one paused trigger start runs again, from its next occurrence (admins)",
		Args:  cli.Args("AGENT", "TRIGGER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.triggers.ResumeTrigger(cmd.Context(), &boardv1.ResumeTriggerRequest{Agent: args[0], TriggerId: args[1]})
			if err != nil {
				return bc.explain(err, "agent "+args[0])
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, protoJSON(res))
			}
			return printTriggerSwitch(a, args[0], args[1], "resumed", res.GetPushed())
		},
	}
	out.AddFlag(c.Flags())
	return c
}

// printTriggerSwitch says where a trigger stands after a pause or resume.
func printTriggerSwitch(a *app, agent, id, what string, pushed bool) error {
	told := "the agent is told when it next links"
	if pushed {
		told = "the agent was told now"
	}
	_, err := fmt.Fprintf(a.stdout, "%s: trigger %s %s; %s\n", clip(agent, 128), clip(id, 64), what, told)
	return err
}

func triggerKind(k boardv1.TriggerKind) string {
	switch k {
	case boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE:
		return "schedule"
	case boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK:
		return "webhook"
	}
	return "-"
}

// triggerWhen is when a trigger occurs: a schedule in words with its zone,
// or a webhook's method and path.
func triggerWhen(t *boardv1.Trigger) string {
	switch t.GetKind() {
	case boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE:
		d := t.GetDescription()
		if d == "" {
			d = t.GetSchedule()
		}
		if z := t.GetTimeZone(); z != "" {
			d += " (" + z + ")"
		}
		return d
	case boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK:
		return t.GetMethod() + " " + t.GetPath()
	}
	return "-"
}

// lastOccurrence is a trigger's latest occurrence in a few words.
func lastOccurrence(o *boardv1.TriggerOccurrence) string {
	if o == nil {
		return "-"
	}
	outcome := "failed"
	switch {
	case o.GetRunId() == "":
		outcome = "skipped"
	case o.GetOk():
		outcome = "ok"
	}
	s := when(o.GetTime()) + " " + outcome
	if o.GetRunId() != "" {
		s += " " + o.GetRunId()
	}
	switch o.GetDelivery() {
	case boardv1.DeliveryState_DELIVERY_STATE_PENDING:
		s += ", delivery pending"
	case boardv1.DeliveryState_DELIVERY_STATE_DELIVERED:
		s += ", delivered"
	case boardv1.DeliveryState_DELIVERY_STATE_FAILED:
		s += ", delivery failed"
	}
	return s
}

func triggerPaused(p *boardv1.TriggerPause) string {
	if !p.GetPaused() {
		return "no"
	}
	return fmt.Sprintf("by %s: %s", p.GetBy(), p.GetReason())
}
