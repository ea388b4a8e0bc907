package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// approvalStates are --state's words, as the API's ApprovalState names
// them.
var approvalStates = map[string]boardv1.ApprovalState{
	"pending":    boardv1.ApprovalState_APPROVAL_STATE_PENDING,
	"approved":   boardv1.ApprovalState_APPROVAL_STATE_APPROVED,
	"rejected":   boardv1.ApprovalState_APPROVAL_STATE_REJECTED,
	"cancelled":  boardv1.ApprovalState_APPROVAL_STATE_CANCELLED,
	"expired":    boardv1.ApprovalState_APPROVAL_STATE_EXPIRED,
	"superseded": boardv1.ApprovalState_APPROVAL_STATE_SUPERSEDED,
}

// maxHistory is the most decided approvals a watch's snapshot holds: the
// board reads more as this.
const maxHistory = 1000

// newApprovalsCmd is board approvals: read, decide and cancel the
// approvals agents raised.
func newApprovalsCmd(a *app) *cobra.Command {
	c := cli.Group("approvals", "Read, decide and cancel the approvals agents raise: list, get, decide, cancel, watch")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(approvalsList(a, co), approvalsGet(a, co), approvalsDecide(a, co), approvalsCancel(a, co), approvalsWatch(a, co))
	return c
}

func approvalsList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	var agent string
	var state *string
	c := &cobra.Command{
		Use:   "list",
		Short: "List approvals, newest first",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			aps, more, err := readPages(limit, 500, func(size int32, token string) ([]*boardv1.Approval, string, error) {
				res, err := bc.approvals.ListApprovals(cmd.Context(), &boardv1.ListApprovalsRequest{
					State: approvalStates[*state], Agent: agent, PageSize: size, PageToken: token})
				if err != nil {
					return nil, "", bc.explain(err, "")
				}
				return res.GetApprovals(), res.GetNextPageToken(), nil
			})
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"ID", "STATE", "AGENT", "NODE", "ASK", "RULE", "RAISED"}}
			for _, ap := range aps {
				t.Append(ap.GetId(), word(ap.GetState()), clip(ap.GetAgent(), 40), clip(ap.GetNode(), 40), clip(ap.GetAsk(), 60), dash(ap.GetRuleId()), when(ap.GetCreateTime()))
			}
			if err := out.Print(a.stdout, t, protoJSONs(aps)); err != nil {
				return err
			}
			a.more(more, limit)
			return nil
		},
	}
	out.AddFlag(c.Flags())
	limitFlag(c, &limit)
	state = cli.Choice(c.Flags(), "state", "", "only approvals in this state: pending, approved, rejected, cancelled, expired or superseded (default every state)",
		"pending", "approved", "rejected", "cancelled", "expired", "superseded")
	c.Flags().StringVar(&agent, "agent", "", "only approvals raised by this agent")
	return c
}

func approvalsGet(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "get ID",
		Short: "Show one approval: what is shown, the account, the digest, the rule, who raised it",
		Args:  cli.Args("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			ap, err := getApproval(cmd.Context(), bc, args[0])
			if err != nil {
				return err
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, protoJSON(ap))
			}
			return writeCard(a.stdout, ap)
		},
	}
	out.AddFlag(c.Flags())
	return c
}

func getApproval(ctx context.Context, bc *boardClient, id string) (*boardv1.Approval, error) {
	res, err := bc.approvals.GetApproval(ctx, &boardv1.GetApprovalRequest{Id: id})
	if err != nil {
		return nil, bc.explain(err, "approval "+id)
	}
	return res.GetApproval(), nil
}

func approvalsDecide(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var reason string
	var yes bool
	c := &cobra.Command{
		Use:   "decide ID approve|reject",
		Short: "Approve or reject a pending approval, after showing it and asking",
		Long: `Decide shows the approval's card (what is shown, the account, the digest, the rule, who
raised it) on stderr, then asks for confirmation on the terminal. Without a terminal it
refuses unless --yes is given on the command line. The decision is made for the digest
shown: if the agent raised something else meanwhile, the board refuses it.`,
		Args: cli.Args("ID", "approve|reject"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			var say boardv1.Say
			switch args[1] {
			case "approve", "yes":
				say = boardv1.Say_SAY_YES
			case "reject", "no":
				say = boardv1.Say_SAY_NO
			default:
				return cli.Usagef("%s: %q: want approve or reject", cmd.CommandPath(), args[1])
			}
			// --yes counts only on the command line: an environment
			// variable or a config file never decides for anyone.
			yes = yes && cmd.Flags().Changed("yes")
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			ap, err := getApproval(cmd.Context(), bc, id)
			if err != nil {
				return err
			}
			if ap.GetState() != boardv1.ApprovalState_APPROVAL_STATE_PENDING {
				return fmt.Errorf("approval %s is already %s%s: nothing to decide", id, word(ap.GetState()), decidedBy(ap))
			}
			if err := writeCard(a.stderr, ap); err != nil {
				return err
			}
			if !yes {
				if err := confirm(cmd.InOrStdin(), a.stderr, id, verbOf(say), ap.GetAsk()); err != nil {
					return err
				}
			}
			res, err := bc.approvals.Decide(cmd.Context(), &boardv1.DecideRequest{Id: id, Say: say, Digest: ap.GetDigest(), Reason: reason})
			if err != nil {
				return bc.explain(err, "approval "+id)
			}
			return printOutcome(a.stdout, &out, res.GetApproval())
		},
	}
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&reason, "reason", "", "why (required when the approval's rule says so; at most 4,096 bytes)")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "decide without asking (for scripts); only on the command line (env SYMPHONIX_YES and the config file are ignored)")
	return c
}

func approvalsCancel(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var reason string
	c := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a pending approval: the agent's run ends, without its onReject",
		Args:  cli.Args("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.approvals.Cancel(cmd.Context(), &boardv1.CancelRequest{Id: args[0], Reason: reason})
			if err != nil {
				return bc.explain(err, "approval "+args[0])
			}
			return printOutcome(a.stdout, &out, res.GetApproval())
		},
	}
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&reason, "reason", "", "why (required when the approval's rule says so; at most 4,096 bytes)")
	return c
}

func approvalsWatch(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var agent string
	var history int
	c := &cobra.Command{
		Use:   "watch",
		Short: "Print the pending and latest decided approvals, then each change, until interrupted",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if history < 0 || history > maxHistory {
				return cli.Usagef("--history: %d, want 0 to %d", history, maxHistory)
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			h := int32(history)
			return watchApprovals(cmd.Context(), bc, &boardv1.WatchApprovalsRequest{Agent: agent, History: &h}, out.JSON(), a.stdout)
		},
	}
	out.AddFlag(c.Flags())
	c.Flags().StringVar(&agent, "agent", "", "only approvals raised by this agent")
	c.Flags().IntVar(&history, "history", 20, fmt.Sprintf("how many decided approvals to print first, newest first (0 to %d)", maxHistory))
	return c
}

// errSilent: a watch heard nothing, not even a heartbeat, for
// boardClient.silence.
var errSilent = errors.New("the watch went silent (not even a heartbeat from the board): watch again")

// watchApprovals prints one line (or JSON object) per message of
// WatchApprovals, heartbeats aside, until ctx ends, the board ends the
// watch, or nothing at all arrives for bc.silence.
func watchApprovals(ctx context.Context, bc *boardClient, req *boardv1.WatchApprovalsRequest, asJSON bool, w io.Writer) error {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	silent := time.AfterFunc(bc.silence, func() { cancel(errSilent) })
	defer silent.Stop()
	stream, err := bc.approvals.WatchApprovals(sctx, req)
	if err != nil {
		return watchEnd(ctx, bc, silentOr(sctx, err))
	}
	defer stream.Close()
	for {
		msg, err := stream.Receive()
		if err != nil {
			return watchEnd(ctx, bc, silentOr(sctx, err))
		}
		silent.Reset(bc.silence)
		if msg.GetEvent() == boardv1.ApprovalEvent_APPROVAL_EVENT_HEARTBEAT {
			continue // only keeps the stream known alive
		}
		if asJSON {
			err = jsonLine(w, protoJSON(msg))
		} else {
			err = approvalLine(w, msg)
		}
		if err != nil {
			return err
		}
	}
}

// silentOr is errSilent when the watch was ended for its silence, else err.
func silentOr(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errSilent) {
		return errSilent
	}
	return err
}

// approvalLine is one event of a watch, on one line.
func approvalLine(w io.Writer, msg *boardv1.WatchApprovalsResponse) error {
	ap := msg.GetApproval()
	if ap == nil {
		_, err := fmt.Fprintf(w, "%s\n", word(msg.GetEvent()))
		return err
	}
	_, err := fmt.Fprintf(w, "%s  %s  %s  %s  %s  %s\n", word(msg.GetEvent()), ap.GetId(), word(ap.GetState()),
		clip(ap.GetAgent(), 40), clip(ap.GetNode(), 40), clip(ap.GetAsk(), 80))
	return err
}

// verbOf is what a say does, for the prompt.
func verbOf(say boardv1.Say) string {
	if say == boardv1.Say_SAY_YES {
		return "approve"
	}
	return "reject"
}

// confirm asks on the terminal, when stdin is one, whether to decide an
// approval; see askYes.
func confirm(stdin io.Reader, prompt io.Writer, id, verb, ask string) error {
	what := strings.TrimRight(clip(ask, 200), "?")
	if what == "-" {
		what = "approval " + id
	}
	return askYes(stdin, prompt, "approval "+id, "not decided", verb+" "+what, verb)
}

// askYes asks question on the terminal, when stdin is one, and goes ahead
// on y or yes; anything else, or the end of input, is an error saying
// subject and undone ("approval 1", "not decided"). Without a terminal it
// refuses, as a usage error: a script passes --yes (to verb).
func askYes(stdin io.Reader, prompt io.Writer, subject, undone, question, verb string) error {
	if !isTerminal(stdin) {
		return cli.Usagef("%s: %s: no terminal to confirm on; pass --yes to %s without asking", subject, undone, verb)
	}
	fmt.Fprintf(prompt, "%s? [y/N] ", question)
	line, err := bufio.NewReader(io.LimitReader(stdin, 1024)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: reading the answer: %w", subject, err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("%s: %s (answered %q, not y)", subject, undone, clip(strings.TrimSpace(line), 20))
}

// printOutcome prints an approval after a decision or a cancel: one line,
// or the approval as JSON.
func printOutcome(w io.Writer, out *cli.Output, ap *boardv1.Approval) error {
	if out.JSON() {
		return cli.PrintJSON(w, protoJSON(ap))
	}
	if ap.GetState() == boardv1.ApprovalState_APPROVAL_STATE_PENDING {
		_, err := fmt.Fprintf(w, "approval %s: vote counted, still pending (yes so far: %s)\n", ap.GetId(), list(ap.GetVotes()))
		return err
	}
	_, err := fmt.Fprintf(w, "approval %s: %s%s\n", ap.GetId(), word(ap.GetState()), decidedBy(ap))
	return err
}

// decidedBy is " by NAMES at TIME" for an approval no longer pending.
func decidedBy(ap *boardv1.Approval) string {
	d := ap.GetDecision()
	if d == nil {
		return ""
	}
	s := ""
	if len(d.GetWho()) > 0 {
		s += " by " + sanitize(strings.Join(d.GetWho(), ", "), false)
	}
	if d.GetDecideTime() != nil {
		s += " at " + when(d.GetDecideTime())
	}
	return s
}

// writeCard writes an approval as a person reads it before deciding: who
// raised it, what is shown (the JSON the digest covers, indented), the
// account, the digest and the rule. What the agent wrote is printed
// without control characters, so it cannot move the cursor or fake a
// prompt.
func writeCard(w io.Writer, ap *boardv1.Approval) error {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-10s %s\n", k, v) }
	line("approval", ap.GetId()+"  ("+word(ap.GetState())+")")
	line("ask", sanitize(ap.GetAsk(), false))
	line("raised by", fmt.Sprintf("agent %s, run %s, node %s, thread %s, at %s",
		sanitize(ap.GetAgent(), false), dash(sanitize(ap.GetRun(), false)), dash(sanitize(ap.GetNode(), false)),
		dash(sanitize(ap.GetThread(), false)), when(ap.GetCreateTime())))
	rule := ap.GetRuleId()
	if rule == "" {
		rule = "- (not governed: the agent's chat decides it)"
	}
	line("rule", rule)
	line("digest", ap.GetDigest())
	if ap.GetExpireTime() != nil {
		line("expires", when(ap.GetExpireTime()))
	}
	if len(ap.GetVotes()) > 0 {
		line("votes", sanitize(strings.Join(ap.GetVotes(), ", "), false))
	}
	if d := ap.GetDecision(); d != nil {
		line("decided", word(d.GetSay())+decidedBy(ap))
		if d.GetReason() != "" {
			line("reason", sanitize(d.GetReason(), false))
		}
	}
	b.WriteString("show\n")
	b.WriteString(indent(showText(ap)))
	b.WriteString("account\n")
	b.WriteString(indent(sanitize(ap.GetAccount(), true)))
	_, err := io.WriteString(w, b.String())
	return err
}

// showText is what an approval shows, indented JSON when it is JSON.
func showText(ap *boardv1.Approval) string {
	s := ap.GetShowJson()
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") == nil {
		s = buf.String()
	}
	return sanitize(s, true)
}

// indent prefixes every line of s with four spaces; "    -" when empty.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    -\n"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}
