package board

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/predicate"
)

// Limits on a preview (docs/limits.md).
const (
	// previewWindow is how far back a preview looks for approvals.
	previewWindow = 30 * 24 * time.Hour
	// maxPreviewAgents is how many agents a preview lists.
	maxPreviewAgents = 1000
	// maxPreviewMatches is how many (agent, node) pairs a preview lists.
	maxPreviewMatches = 1000
	// previewGroupPage is how many (agent, node) groups of approvals a
	// preview reads from the store at once.
	previewGroupPage = 1000
	// maxPreviewGroups is how many (agent, node) groups of approvals a
	// preview reads in all before it stops and says the list is cut short.
	maxPreviewGroups = 100_000
)

// PreviewRule says what a rule would govern if it were put now: the rule
// is checked as PutRule checks it (ruleFromProto, then the same refusals
// of a rule whose patterns another has and of one rule too many), then matched against the agents the
// board knows and the (agent, node) pairs approvals came from in the last
// previewWindow. Nothing is written.
func (s approvalService) PreviewRule(ctx context.Context, req *boardv1.PreviewRuleRequest) (*boardv1.PreviewRuleResponse, error) {
	in, err := ruleFromProto(req.GetRule())
	if err != nil {
		return nil, err
	}
	now := s.b.now().UTC().Truncate(time.Microsecond)
	rules, err := s.b.db.Rule.Query().All(ctx)
	if err != nil {
		return nil, err
	}
	// With the rule put: it replaces the rule of its id, keeping that
	// rule's creation time as PutRule does, or it is a new rule created now.
	previewed := &ent.Rule{ID: in.ID, Agent: in.Agent, Node: in.Node, CreatedAt: now}
	if previewed.ID == "" {
		// An id no stored rule has: PutRule's ids are "rule-" and hex, and
		// validRuleID refuses a space. A new rule created now sorts after
		// every stored rule of its kind, as it would once put.
		previewed.ID = "~ new rule"
	}
	// Refused as PutRule would refuse it: another rule with its patterns,
	// or one rule too many.
	replaces := false
	with := make([]*ent.Rule, 0, len(rules)+1)
	for _, r := range rules {
		if r.ID == previewed.ID {
			previewed.CreatedAt = r.CreatedAt
			replaces = true
			continue
		}
		if r.Agent == in.Agent && r.Node == in.Node {
			return nil, errRuleTaken(r, in)
		}
		with = append(with, r)
	}
	if !replaces && len(rules) >= maxRules {
		return nil, errTooManyRules(len(rules))
	}
	with = append(with, previewed)
	sortRules(rules)
	sortRules(with)

	res := &boardv1.PreviewRuleResponse{Agents: []string{}, Matches: []*boardv1.RuleMatch{}}
	err = s.b.agentRows(ctx, "", func(a *ent.Agent) (bool, error) {
		if !patternMatches(in.Agent, a.Name) {
			return true, nil
		}
		if len(res.Agents) == maxPreviewAgents {
			res.AgentsTruncated = true
			return false, nil
		}
		res.Agents = append(res.Agents, a.Name)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	err = s.b.approvalGroups(ctx, in.Agent, in.Node, now.Add(-previewWindow), func(g approvalGroup) bool {
		if !patternMatches(in.Agent, g.Agent) || !patternMatches(in.Node, g.Node) {
			return true
		}
		if len(res.Matches) == maxPreviewMatches {
			res.MatchesTruncated = true
			return false
		}
		m := &boardv1.RuleMatch{Agent: g.Agent, Node: g.Node, Approvals: int32(min(g.Count, 1<<31-1))}
		if r := firstMatch(rules, g.Agent, g.Node); r != nil {
			m.GovernedBy = r.ID
		}
		m.WouldGovern = firstMatch(with, g.Agent, g.Node) == previewed
		res.Matches = append(res.Matches, m)
		return true
	}, func() { res.MatchesTruncated = true })
	if err != nil {
		return nil, err
	}
	return res, nil
}

// approvalGroup is how many approvals one agent raised at one node.
type approvalGroup struct {
	Agent string `json:"agent"`
	Node  string `json:"node"`
	Count int    `json:"count"`
}

// approvalGroups calls f with each (agent, node) pair approvals were
// raised at since since, by agent then node, a page of previewGroupPage
// groups at a time (GROUP BY in the store), until f says stop. A pattern
// with no glob narrows the query to that name. After maxPreviewGroups
// groups it stops and calls cut.
func (b *Board) approvalGroups(ctx context.Context, agentPattern, nodePattern string, since time.Time, f func(approvalGroup) bool, cut func()) error {
	where := []predicate.Approval{approval.CreatedAtGTE(since)}
	if patternKind(agentPattern) == patternExact {
		where = append(where, approval.Agent(agentPattern))
	}
	if patternKind(nodePattern) == patternExact {
		where = append(where, approval.Node(nodePattern))
	}
	var after *approvalGroup
	read := 0
	for {
		q := b.db.Approval.Query().Where(where...)
		if after != nil {
			a := *after
			q = q.Where(approval.Or(
				approval.AgentGT(a.Agent),
				approval.And(approval.Agent(a.Agent), approval.NodeGT(a.Node)),
			))
		}
		var page []approvalGroup
		err := q.
			Order(approval.ByAgent(sql.OrderAsc()), approval.ByNode(sql.OrderAsc())).
			Limit(previewGroupPage).
			GroupBy(approval.FieldAgent, approval.FieldNode).
			Aggregate(ent.As(ent.Count(), "count")).
			Scan(ctx, &page)
		if err != nil {
			return err
		}
		for _, g := range page {
			if read == maxPreviewGroups {
				cut()
				return nil
			}
			read++
			if !f(g) {
				return nil
			}
		}
		if len(page) < previewGroupPage {
			return nil
		}
		after = &page[len(page)-1]
	}
}
