package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/internal/cli"
)

// maxRuleFileBytes is the most a rules put --file may hold: a rule's
// fields are at most a few KiB, 100 people of 256 bytes included.
const maxRuleFileBytes = 64 << 10

// newRulesCmd is board rules: which approvals the organisation governs and
// who decides them.
func newRulesCmd(a *app) *cobra.Command {
	c := cli.Group("rules", "Read and change the rules that govern approvals: list, put, delete")
	co := clientFlags(c.PersistentFlags())
	c.AddCommand(rulesList(a, co), rulesPut(a, co), rulesDelete(a, co))
	return c
}

func rulesList(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var limit int
	c := &cobra.Command{
		Use:   "list",
		Short: "List the rules, in the order they are matched",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			rules, more, err := readPages(limit, 1000, func(size int32, token string) ([]*boardv1.Rule, string, error) {
				res, err := bc.approvals.ListRules(cmd.Context(), &boardv1.ListRulesRequest{PageSize: size, PageToken: token})
				if err != nil {
					return nil, "", bc.explain(err, "")
				}
				return res.GetRules(), res.GetNextPageToken(), nil
			})
			if err != nil {
				return err
			}
			t := cli.Table{Header: []string{"ID", "AGENT", "NODE", "WHO", "QUORUM", "TIME LIMIT", "REASON", "SELF", "DESCRIPTION"}}
			for _, r := range rules {
				t.Append(r.GetId(), clip(r.GetAgent(), 40), clip(r.GetNode(), 40), who(r), fmt.Sprint(quorum(r)),
					span(r.GetTimeLimit()), required(r.GetRequireReason()), yesNo(r.GetAllowSelfApproval(), "yes", "no"), clip(r.GetDescription(), 60))
			}
			if err := out.Print(a.stdout, t, protoJSONs(rules)); err != nil {
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

// who is who may decide under a rule.
func who(r *boardv1.Rule) string {
	if len(r.GetPeople()) > 0 {
		return clip(strings.Join(r.GetPeople(), ","), 60)
	}
	return word(r.GetRole()) + "s"
}

// quorum is a rule's quorum: 1 when absent.
func quorum(r *boardv1.Rule) int32 {
	if r.Quorum == nil {
		return 1
	}
	return r.GetQuorum()
}

func required(b bool) string {
	if b {
		return "required"
	}
	return "-"
}

// ruleFlags are rules put's flags, one for each field of a rule an
// operator sets.
type ruleFlags struct {
	id, agent, node, role, description string
	people                             []string
	quorum                             int32
	timeLimit                          time.Duration
	requireReason, allowSelf           bool
}

// ruleFlagNames are the flags that make a rule; --file is instead of them.
var ruleFlagNames = []string{"id", "agent", "node", "role", "person", "quorum", "time-limit", "require-reason", "allow-self-approval", "description"}

func rulesPut(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	var f ruleFlags
	var file string
	c := &cobra.Command{
		Use:   "put",
		Short: "Store a rule, from flags or from a JSON file; with the id of one, replace it",
		Long: `Put stores a rule. Without --id the board assigns one; with the id of a rule it replaces it.
The rule comes from flags, or from --file: a JSON object with a Rule's fields as the API
names them (what rules list -o json prints for each rule; the fields the board sets are
ignored). --file - reads standard input.`,
		Example: `  board rules put --agent 'refund-*' --node approve --role approver --quorum 2 --time-limit 24h --require-reason
  board rules put --id refunds --agent refund-bot --node '*' --person ann@example.com --person bob@example.com
  board rules put --file rule.json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var rule *boardv1.Rule
			if cmd.Flags().Changed("file") {
				for _, n := range ruleFlagNames {
					if cmd.Flags().Changed(n) {
						return cli.Usagef("--file and --%s: give the rule in the file or in flags, not both", n)
					}
				}
				var err error
				if rule, err = readRule(cmd, file); err != nil {
					return err
				}
			} else {
				var err error
				if rule, err = f.rule(cmd); err != nil {
					return err
				}
			}
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			res, err := bc.approvals.PutRule(cmd.Context(), &boardv1.PutRuleRequest{Rule: rule})
			if err != nil {
				return bc.explain(err, "rule")
			}
			r := res.GetRule()
			t := cli.Table{Header: []string{"ID", "AGENT", "NODE", "WHO", "QUORUM", "TIME LIMIT", "REASON", "SELF", "DESCRIPTION"}}
			t.Append(r.GetId(), clip(r.GetAgent(), 40), clip(r.GetNode(), 40), who(r), fmt.Sprint(quorum(r)),
				span(r.GetTimeLimit()), required(r.GetRequireReason()), yesNo(r.GetAllowSelfApproval(), "yes", "no"), clip(r.GetDescription(), 60))
			return out.Print(a.stdout, t, protoJSON(r))
		},
	}
	out.AddFlag(c.Flags())
	fs := c.Flags()
	fs.StringVar(&file, "file", "", "read the rule from this JSON file (- for standard input) instead of flags")
	fs.StringVar(&f.id, "id", "", "the rule's id: empty for a new rule the board names; an existing id replaces that rule")
	fs.StringVar(&f.agent, "agent", "", `which agents: "*", a name, or a glob ("refund-*")`)
	fs.StringVar(&f.node, "node", "", `which nodes of their flows: "*", a node id, or a glob`)
	fs.StringVar(&f.role, "role", "", "who decides, by role: approver (approvers and admins) or admin; or give --person")
	fs.StringArrayVar(&f.people, "person", nil, "who decides, by name: a person's address or an operator token's name; repeatable (at most 100)")
	fs.Int32Var(&f.quorum, "quorum", 0, "how many distinct people must say yes (default 1)")
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "how long an approval may wait before it expires, such as 30m or 24h (default no limit)")
	fs.BoolVar(&f.requireReason, "require-reason", false, "a decision must give a reason")
	fs.BoolVar(&f.allowSelf, "allow-self-approval", false, "a person in the approval's conversation may decide it")
	fs.StringVar(&f.description, "description", "", "what the rule is for (at most 1,000 bytes)")
	return c
}

// rule is the rule the flags describe. The board checks it in full; here
// only what the flags themselves must say.
func (f *ruleFlags) rule(cmd *cobra.Command) (*boardv1.Rule, error) {
	r := &boardv1.Rule{
		Id: f.id, Agent: f.agent, Node: f.node, People: f.people,
		RequireReason: f.requireReason, AllowSelfApproval: f.allowSelf, Description: f.description,
	}
	switch f.role {
	case "":
	case "approver":
		r.Role = boardv1.Role_ROLE_APPROVER
	case "admin":
		r.Role = boardv1.Role_ROLE_ADMIN
	default:
		return nil, cli.Usagef("--role: %q: want approver or admin", f.role)
	}
	if f.agent == "" {
		return nil, cli.Usagef(`--agent: required: "*" for every agent, a name, or a glob`)
	}
	if f.node == "" {
		return nil, cli.Usagef(`--node: required: "*" for every node, a node id, or a glob`)
	}
	if (f.role == "") == (len(f.people) == 0) {
		return nil, cli.Usagef("--role or --person: give exactly one of them (who decides)")
	}
	if cmd.Flags().Changed("quorum") {
		q := f.quorum
		r.Quorum = &q
	}
	if cmd.Flags().Changed("time-limit") {
		r.TimeLimit = durationpb.New(f.timeLimit)
	}
	return r, nil
}

// readRule reads --file: a Rule as protojson, unknown fields refused.
func readRule(cmd *cobra.Command, path string) (*boardv1.Rule, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = readAllBounded(cmd.InOrStdin(), maxRuleFileBytes, "standard input")
	} else {
		b, err = readBounded(path, maxRuleFileBytes)
	}
	if err != nil {
		return nil, cli.Usagef("--file: %v", err)
	}
	var r boardv1.Rule
	if err := protojson.Unmarshal(b, &r); err != nil {
		msg := strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\u00a0", " "), "proto: ")
		return nil, cli.Usagef("--file %s: not a rule: %s", path, msg)
	}
	return &r, nil
}

func rulesDelete(a *app, co *clientOptions) *cobra.Command {
	var out cli.Output
	c := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a rule",
		Args:  cli.Args("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			bc, err := a.dial(co)
			if err != nil {
				return err
			}
			if _, err := bc.approvals.DeleteRule(cmd.Context(), &boardv1.DeleteRuleRequest{Id: args[0]}); err != nil {
				return bc.explain(err, "rule "+args[0])
			}
			if out.JSON() {
				return cli.PrintJSON(a.stdout, map[string]any{"id": args[0], "deleted": true})
			}
			_, err = fmt.Fprintf(a.stdout, "rule %s deleted\n", args[0])
			return err
		},
	}
	out.AddFlag(c.Flags())
	return c
}
