package board

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/alertrule"
	"github.com/symphonix/symphonix/ent/delegationfailure"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// alertService is symphonix.board.v1.AlertService: the board's alert rules
// and what they say of each agent now (docs/alerts.md).
type alertService struct {
	boardv1connect.UnimplementedAlertServiceHandler
	b *Board
}

var _ boardv1connect.AlertServiceHandler = alertService{}

// Limits of alert rules (docs/limits.md).
const (
	// maxAlertRules is how many alert rules a board holds: ListAlerts
	// reads them all.
	maxAlertRules = 100
	// maxAlertDescription is the longest description of a rule, in bytes.
	maxAlertDescription = 1000
	// The window of a rule: at least a minute, at most 30 days, 24 hours
	// when not given.
	minAlertWindow     = time.Minute
	maxAlertWindow     = 30 * 24 * time.Hour
	defaultAlertWindow = 24 * time.Hour

	defaultAlertPageSize = 100
	maxAlertPageSize     = 1000
)

// Conditions as the store keeps them.
const conditionDelegationCycle = "delegation_cycle"

func conditionWord(c boardv1.AlertCondition) string {
	if c == boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE {
		return conditionDelegationCycle
	}
	return ""
}

func conditionProto(s string) boardv1.AlertCondition {
	if s == conditionDelegationCycle {
		return boardv1.AlertCondition_ALERT_CONDITION_DELEGATION_CYCLE
	}
	return boardv1.AlertCondition_ALERT_CONDITION_UNSPECIFIED
}

// alertRuleInput is a rule as PutAlertRule validated it.
type alertRuleInput struct {
	id, agent, condition, description string
	window                            time.Duration
}

// alertRuleFromProto checks a rule, naming the field at fault.
func alertRuleFromProto(r *boardv1.AlertRule) (alertRuleInput, error) {
	bad := func(format string, a ...any) (alertRuleInput, error) {
		return alertRuleInput{}, connect.NewError(connect.CodeInvalidArgument, fmt.Sprintf(format, a...))
	}
	if r == nil {
		return bad("rule: required")
	}
	in := alertRuleInput{id: r.GetId(), agent: r.GetAgent(), description: r.GetDescription(), window: defaultAlertWindow}
	if err := validRuleID(in.id); err != nil {
		return bad("rule.id: %v", err)
	}
	if err := validPattern(in.agent); err != nil {
		return bad("rule.agent: %v", err)
	}
	if err := enumIn("rule.condition", r.GetCondition(), true); err != nil {
		return alertRuleInput{}, err
	}
	in.condition = conditionWord(r.GetCondition())
	if w := r.GetWindow(); w != nil {
		if err := w.CheckValid(); err != nil {
			return bad("rule.window: %v", err)
		}
		in.window = w.AsDuration()
		if in.window < minAlertWindow || in.window > maxAlertWindow {
			return bad("rule.window: %s, want 1 minute to 30 days", durationString(in.window))
		}
	}
	if err := validText(in.description, maxAlertDescription, false); err != nil {
		return bad("rule.description: %v", err)
	}
	return in, nil
}

// PutAlertRule stores a rule, new or in the place of the one with its id,
// and writes it to the audit log in the same transaction.
func (s alertService) PutAlertRule(ctx context.Context, req *boardv1.PutAlertRuleRequest) (*boardv1.PutAlertRuleResponse, error) {
	in, err := alertRuleFromProto(req.GetRule())
	if err != nil {
		return nil, err
	}
	if in.id == "" {
		if in.id, err = newRuleID(); err != nil {
			return nil, err
		}
		in.id = "alert-" + strings.TrimPrefix(in.id, "rule-")
	}
	actor := identity.ActorOf(ctx, "")
	now := storedTime(s.b.now())
	var out *ent.AlertRule
	err = store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		old, err := tx.AlertRule.Get(ctx, in.id)
		switch {
		case ent.IsNotFound(err):
			n, cerr := tx.AlertRule.Query().Count(ctx)
			if cerr != nil {
				return cerr
			}
			if n >= maxAlertRules {
				return connect.Errorf(connect.CodeResourceExhausted,
					"rule: the board holds %d alert rules, at most %d: put one in the place of another, or delete one", n, maxAlertRules)
			}
			out, err = tx.AlertRule.Create().SetID(in.id).SetAgent(in.agent).SetCondition(in.condition).
				SetWindow(int64(in.window)).SetDescription(in.description).SetCreatedAt(now).SetUpdatedAt(now).
				SetUpdatedBy(actor).Save(ctx)
			if ent.IsConstraintError(err) {
				return connect.Errorf(connect.CodeAlreadyExists, "rule.id: %s was put at the same moment", quoted(in.id))
			}
		case err == nil:
			out, err = old.Update().SetAgent(in.agent).SetCondition(in.condition).SetWindow(int64(in.window)).
				SetDescription(in.description).SetUpdatedAt(now).SetUpdatedBy(actor).Save(ctx)
		}
		if err != nil {
			return err
		}
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor: actor, Action: "alert_rule.put", Subject: out.ID, Detail: alertRuleDetail(out), At: now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.PutAlertRuleResponse{Rule: alertRuleProto(out)}, nil
}

// ListAlertRules is every rule, by id.
func (s alertService) ListAlertRules(ctx context.Context, _ *boardv1.ListAlertRulesRequest) (*boardv1.ListAlertRulesResponse, error) {
	rows, err := s.b.db.AlertRule.Query().Order(ent.Asc(alertrule.FieldID)).Limit(maxAlertRules).All(ctx)
	if err != nil {
		return nil, err
	}
	res := &boardv1.ListAlertRulesResponse{Rules: make([]*boardv1.AlertRule, len(rows))}
	for i, r := range rows {
		res.Rules[i] = alertRuleProto(r)
	}
	return res, nil
}

// DeleteAlertRule removes a rule and writes it to the audit log in the same
// transaction.
func (s alertService) DeleteAlertRule(ctx context.Context, req *boardv1.DeleteAlertRuleRequest) (*boardv1.DeleteAlertRuleResponse, error) {
	id := req.GetId()
	if err := ruleIDArg(id); err != nil {
		return nil, err
	}
	err := store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		old, err := tx.AlertRule.Get(ctx, id)
		if ent.IsNotFound(err) {
			return connect.Errorf(connect.CodeNotFound, "alert rule %s: not found", quoted(id))
		}
		if err != nil {
			return err
		}
		if err := tx.AlertRule.DeleteOne(old).Exec(ctx); err != nil {
			return err
		}
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor: identity.ActorOf(ctx, ""), Action: "alert_rule.delete", Subject: id, Detail: alertRuleDetail(old),
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.DeleteAlertRuleResponse{}, nil
}

// ListAlerts evaluates each rule for each agent it covers, now, by rule id
// then agent name; its token holds the last pair sent.
func (s alertService) ListAlerts(ctx context.Context, req *boardv1.ListAlertsRequest) (*boardv1.ListAlertsResponse, error) {
	if id := req.GetRuleId(); id != "" {
		if err := validRuleID(id); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "rule_id: %v", err)
		}
	}
	if a := req.GetAgent(); a != "" {
		if err := identity.ValidName(a); err != nil {
			return nil, connect.Errorf(connect.CodeInvalidArgument, "agent: %v", err)
		}
	}
	quiet := "0"
	if req.GetIncludeQuiet() {
		quiet = "1"
	}
	pg, err := s.b.page("ListAlerts", req.GetPageSize(), req.GetPageToken(), defaultAlertPageSize, maxAlertPageSize, 2,
		req.GetRuleId(), req.GetAgent(), quiet)
	if err != nil {
		return nil, err
	}
	q := s.b.db.AlertRule.Query()
	if id := req.GetRuleId(); id != "" {
		q.Where(alertrule.ID(id))
	}
	var afterRule, afterAgent string
	if pg.after != nil {
		afterRule, afterAgent = pg.after[0], pg.after[1]
		q.Where(alertrule.IDGTE(afterRule))
	}
	rules, err := q.Order(ent.Asc(alertrule.FieldID)).Limit(maxAlertRules).All(ctx)
	if err != nil {
		return nil, err
	}
	now := s.b.now()
	res := &boardv1.ListAlertsResponse{Alerts: []*boardv1.Alert{}}
	full := false
	for _, rl := range rules {
		from := ""
		if rl.ID == afterRule {
			from = afterAgent
		}
		err := s.b.agentsNamed(ctx, req.GetAgent(), from, func(a *ent.Agent) (bool, error) {
			if !patternMatches(rl.Agent, a.Name) {
				return true, nil
			}
			al, err := s.b.evaluate(ctx, rl, a, now)
			if err != nil {
				return false, err
			}
			if al.GetState() == boardv1.AlertState_ALERT_STATE_QUIET && !req.GetIncludeQuiet() {
				return true, nil
			}
			if !pg.take(al, rl.ID, a.Name) {
				full = true
				return false, nil
			}
			res.Alerts = append(res.Alerts, al)
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		if full {
			break
		}
	}
	res.NextPageToken = pg.next()
	return res, nil
}

// agentsNamed is agentRows, or, when name is given, only the agent of
// that name (when it sorts after after).
func (b *Board) agentsNamed(ctx context.Context, name, after string, f func(*ent.Agent) (bool, error)) error {
	if name == "" {
		return b.agentRows(ctx, after, f)
	}
	if name <= after {
		return nil
	}
	a, err := b.db.Agent.Query().Where(agent.Name(name)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f(a)
	return err
}

// evaluate is where rule r stands for agent a at now. A cycle reported
// within the window fires it; otherwise it is quiet only when the agent's
// last hello announced delegation-cycle, so that its silence means none.
func (b *Board) evaluate(ctx context.Context, r *ent.AlertRule, a *ent.Agent, now time.Time) (*boardv1.Alert, error) {
	window := time.Duration(r.Window)
	since := storedTime(now.Add(-window))
	al := &boardv1.Alert{RuleId: r.ID, Agent: a.Name}
	if r.Condition != conditionDelegationCycle {
		al.State, al.Reason = boardv1.AlertState_ALERT_STATE_CANNOT_TELL, "this board does not know the rule's condition"
		return al, nil
	}
	if a.CycleCount > 0 && a.CycleLast != nil && !a.CycleLast.Before(since) {
		n, err := b.db.DelegationFailure.Query().Where(delegationfailure.Agent(a.Name),
			delegationfailure.Code(codeRecursion), delegationfailure.TimeGTE(since)).Count(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			al.State, al.Count, al.LastTime = boardv1.AlertState_ALERT_STATE_FIRING, int64(n), timestamppb.New(*a.CycleLast)
			al.Reason = fmt.Sprintf("%d circular delegation(s) (AGENT_RECURSION) reported in the last %s, the latest at %s",
				n, windowWords(window), a.CycleLast.UTC().Format(time.RFC3339))
			return al, nil
		}
	}
	if !slices.Contains(a.Capabilities, capDelegationCycle) {
		al.State = boardv1.AlertState_ALERT_STATE_CANNOT_TELL
		al.Reason = "the agent's last hello did not announce delegation-cycle: it would not report a circular delegation, so its silence says nothing"
		return al, nil
	}
	al.State = boardv1.AlertState_ALERT_STATE_QUIET
	al.Reason = fmt.Sprintf("no circular delegation reported in the last %s; the agent announces delegation-cycle", windowWords(window))
	return al, nil
}

// windowWords is a window as people say it: "24h0m0s" reads "24h".
func windowWords(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// alertRuleProto is the API's view of a stored rule.
func alertRuleProto(r *ent.AlertRule) *boardv1.AlertRule {
	return &boardv1.AlertRule{
		Id:          r.ID,
		Agent:       r.Agent,
		Condition:   conditionProto(r.Condition),
		Window:      durationpb.New(time.Duration(r.Window)),
		Description: r.Description,
		CreateTime:  timestamppb.New(r.CreatedAt),
		UpdateTime:  timestamppb.New(r.UpdatedAt),
		UpdatedBy:   r.UpdatedBy,
	}
}

// alertRuleDetail is what the audit log keeps of a rule.
func alertRuleDetail(r *ent.AlertRule) map[string]any {
	d := map[string]any{
		"agent":     r.Agent,
		"condition": r.Condition,
		"window":    durationString(time.Duration(r.Window)),
	}
	if r.Description != "" {
		d["description"] = r.Description
	}
	return d
}
