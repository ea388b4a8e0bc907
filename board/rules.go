package board

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/api/symphonix/board/v1/boardv1connect"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/rule"
	"github.com/symphonix/symphonix/ent/schema"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// Limits on a rule, so a rule stays something a person can read.
const (
	// maxRuleIDLen is the longest rule id, in bytes.
	maxRuleIDLen = 64
	// maxRulePatternLen is the longest agent or node pattern, in bytes.
	maxRulePatternLen = 256
	// maxRulePeople is how many people a rule may name.
	maxRulePeople = 100
	// maxRuleDescriptionLen is the longest description, in bytes.
	maxRuleDescriptionLen = 1000
	// maxRuleTimeLimit is the longest time limit a rule may set.
	maxRuleTimeLimit = 366 * 24 * time.Hour
	// maxRules is how many rules a board holds: every raise reads them all.
	maxRules = 1000
)

// approvalService is symphonix.board.v1.ApprovalService. For now it
// serves the rules; docs/approvals.md describes them.
type approvalService struct {
	b *Board
}

var _ boardv1connect.ApprovalServiceHandler = approvalService{}

func (s approvalService) PutRule(ctx context.Context, req *boardv1.PutRuleRequest) (*boardv1.PutRuleResponse, error) {
	in, err := ruleFromProto(req.GetRule())
	if err != nil {
		return nil, err
	}
	if in.ID == "" {
		if in.ID, err = newRuleID(); err != nil {
			return nil, err
		}
	}
	actor := identity.ActorOf(ctx, "")
	now := s.b.now().UTC().Truncate(time.Microsecond)
	var out *ent.Rule
	err = store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		other, err := tx.Rule.Query().
			Where(rule.Agent(in.Agent), rule.Node(in.Node), rule.IDNEQ(in.ID)).
			First(ctx)
		switch {
		case err == nil:
			return errRuleTaken(other, in)
		case !ent.IsNotFound(err):
			return err
		}
		old, err := tx.Rule.Get(ctx, in.ID)
		if ent.IsNotFound(err) {
			n, cerr := tx.Rule.Query().Count(ctx)
			if cerr != nil {
				return cerr
			}
			if n >= maxRules {
				return errTooManyRules(n)
			}
		}
		switch {
		case ent.IsNotFound(err):
			c := tx.Rule.Create().
				SetID(in.ID).
				SetAgent(in.Agent).
				SetNode(in.Node).
				SetRole(storedRole(in.Role)).
				SetPeople(in.People).
				SetQuorum(in.Quorum).
				SetTimeLimit(in.TimeLimit).
				SetRequireReason(in.RequireReason).
				SetAllowSelfApproval(in.AllowSelfApproval).
				SetNoStandingConsent(in.NoStandingConsent).
				SetStandingConsentMaxAmount(in.StandingConsentMaxAmount).
				SetDescription(in.Description).
				SetCreatedAt(now).
				SetUpdatedAt(now).
				SetUpdatedBy(actor)
			if len(in.Escalation) > 0 { // none is NULL: escalateDue reads only rules with steps
				c.SetEscalation(in.Escalation)
			}
			out, err = c.Save(ctx)
		case err == nil:
			u := old.Update().
				SetAgent(in.Agent).
				SetNode(in.Node).
				SetRole(storedRole(in.Role)).
				SetPeople(in.People).
				SetQuorum(in.Quorum).
				SetTimeLimit(in.TimeLimit).
				SetRequireReason(in.RequireReason).
				SetAllowSelfApproval(in.AllowSelfApproval).
				SetNoStandingConsent(in.NoStandingConsent).
				SetStandingConsentMaxAmount(in.StandingConsentMaxAmount).
				SetDescription(in.Description).
				SetUpdatedAt(now).
				SetUpdatedBy(actor)
			if len(in.Escalation) > 0 {
				u.SetEscalation(in.Escalation)
			} else {
				u.ClearEscalation()
			}
			out, err = u.Save(ctx)
		}
		if ent.IsConstraintError(err) {
			// Another board put the same id or pattern at the same moment.
			return connect.Errorf(connect.CodeAlreadyExists, "rule: a rule for agent %q at node %q was put at the same moment", in.Agent, in.Node)
		}
		if err != nil {
			return err
		}
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor:   actor,
			Action:  "rule.put",
			Subject: out.ID,
			Detail:  ruleDetail(out),
			At:      now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.PutRuleResponse{Rule: ruleProto(out)}, nil
}

// errRuleTaken is PutRule's refusal of in when other, another rule,
// already has its agent and node patterns.
func errRuleTaken(other *ent.Rule, in ruleInput) error {
	return connect.Errorf(connect.CodeAlreadyExists,
		"rule: rule %q already governs agent %q at node %q; put that one instead", other.ID, in.Agent, in.Node)
}

// errTooManyRules is PutRule's refusal of a new rule when the board holds
// n rules, maxRules or more.
func errTooManyRules(n int) error {
	return connect.Errorf(connect.CodeResourceExhausted,
		"rule: the board holds %d rules, at most %d: put one in the place of another, or delete one", n, maxRules)
}

// ListRules is a page of rules in match order. The board holds at most
// maxRules, and every raise reads them all, so a page reads them all too
// and starts after the last one sent: its token holds that rule's sort
// key (ruleKey), so a rule put or deleted meanwhile moves nothing.
func (s approvalService) ListRules(ctx context.Context, req *boardv1.ListRulesRequest) (*boardv1.ListRulesResponse, error) {
	pg, err := s.b.page("ListRules", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 6)
	if err != nil {
		return nil, err
	}
	var after *ruleKey
	if pg.after != nil {
		k, err := ruleKeyFrom(pg.after)
		if err != nil {
			return nil, err
		}
		after = &k
	}
	rows, err := s.b.db.Rule.Query().All(ctx)
	if err != nil {
		return nil, err
	}
	sortRules(rows)
	res := &boardv1.ListRulesResponse{Rules: []*boardv1.Rule{}}
	for _, r := range rows {
		k := keyOfRule(r)
		if after != nil && k.compare(*after) <= 0 {
			continue
		}
		p := ruleProto(r)
		if !pg.take(p, k.strings()...) {
			break
		}
		res.Rules = append(res.Rules, p)
	}
	res.NextPageToken = pg.next()
	return res, nil
}

func (s approvalService) DeleteRule(ctx context.Context, req *boardv1.DeleteRuleRequest) (*boardv1.DeleteRuleResponse, error) {
	id := req.GetId()
	if err := ruleIDArg(id); err != nil {
		return nil, err
	}
	err := store.InTx(ctx, s.b.db, func(tx *ent.Tx) error {
		old, err := tx.Rule.Get(ctx, id)
		if ent.IsNotFound(err) {
			return connect.Errorf(connect.CodeNotFound, "rule %q: not found", id)
		}
		if err != nil {
			return err
		}
		if err := tx.Rule.DeleteOne(old).Exec(ctx); err != nil {
			return err
		}
		err = s.b.audit.Append(ctx, tx, audit.Record{
			Actor:   identity.ActorOf(ctx, ""),
			Action:  "rule.delete",
			Subject: id,
			Detail:  ruleDetail(old),
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &boardv1.DeleteRuleResponse{}, nil
}

// ruleFor returns the rule that governs an approval the agent named
// agentName raises at node, or nil when no rule matches: the approval is
// not governed and the agent's chat decides it. When several rules match,
// the most specific wins (see sortRules).
func (b *Board) ruleFor(ctx context.Context, agentName, node string) (*ent.Rule, error) {
	rows, err := b.db.Rule.Query().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return matchRule(rows, agentName, node), nil
}

// matchRule is the first of rules, in sortRules order, that matches agent
// and node; nil when none does.
func matchRule(rules []*ent.Rule, agentName, node string) *ent.Rule {
	rules = slices.Clone(rules)
	sortRules(rules)
	return firstMatch(rules, agentName, node)
}

// firstMatch is matchRule over rules already in sortRules order.
func firstMatch(sorted []*ent.Rule, agentName, node string) *ent.Rule {
	for _, r := range sorted {
		if patternMatches(r.Agent, agentName) && patternMatches(r.Node, node) {
			return r
		}
	}
	return nil
}

// patternMatches reports whether name matches a rule's pattern: "*" matches
// everything (even a name with a "/", which a path.Match "*" would not); a
// pattern with no glob characters matches only itself; anything else is a
// path.Match glob. A pattern that is not a valid glob matches nothing
// (PutRule refuses them, so none is stored).
func patternMatches(pattern, name string) bool {
	if pattern == "*" {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// Pattern kinds, from the least to the most specific.
const (
	patternAll   = iota // "*"
	patternGlob         // "refund-*"
	patternExact        // "refund-desk"
)

func patternKind(p string) int {
	switch {
	case p == "*":
		return patternAll
	case strings.ContainsAny(p, `*?[\`):
		return patternGlob
	}
	return patternExact
}

// literalLen is how many characters of a glob are not glob syntax: with
// two globs of one kind, the one with more literal characters is the more
// specific ("refund-desk-*" before "refund-*").
func literalLen(p string) int {
	return len(p) - strings.Count(p, "*") - strings.Count(p, "?")
}

// sortRules puts rules in the order they are matched, the most specific
// first: by the agent pattern's kind (exact, then glob, then "*"), then the
// node pattern's kind, then the agent glob's literal length, then the node
// glob's, then the oldest, then the id. So an exact agent and exact node
// beats everything, a rule naming the agent beats every rule for all
// agents whatever their node, and the rule for "*" and "*" comes last.
func sortRules(rules []*ent.Rule) {
	slices.SortStableFunc(rules, func(a, b *ent.Rule) int { return keyOfRule(a).compare(keyOfRule(b)) })
}

// ruleKey is where a rule falls in the order sortRules puts rules in: the
// more specific first. The id makes it a total order.
type ruleKey struct {
	agentKind, nodeKind int
	agentLen, nodeLen   int
	created             int64 // microseconds since the epoch
	id                  string
}

func keyOfRule(r *ent.Rule) ruleKey {
	return ruleKey{
		agentKind: patternKind(r.Agent), nodeKind: patternKind(r.Node),
		agentLen: literalLen(r.Agent), nodeLen: literalLen(r.Node),
		created: r.CreatedAt.UnixMicro(), id: r.ID,
	}
}

// compare is negative when a comes before b in match order.
func (a ruleKey) compare(b ruleKey) int {
	return cmp.Or(
		-cmp.Compare(a.agentKind, b.agentKind),
		-cmp.Compare(a.nodeKind, b.nodeKind),
		-cmp.Compare(a.agentLen, b.agentLen),
		-cmp.Compare(a.nodeLen, b.nodeLen),
		cmp.Compare(a.created, b.created),
		strings.Compare(a.id, b.id),
	)
}

// strings is k as a page token's position.
func (k ruleKey) strings() []string {
	return []string{strconv.Itoa(k.agentKind), strconv.Itoa(k.nodeKind), strconv.Itoa(k.agentLen), strconv.Itoa(k.nodeLen),
		strconv.FormatInt(k.created, 10), k.id}
}

// ruleKeyFrom reads a position strings wrote.
func ruleKeyFrom(p []string) (ruleKey, error) {
	var n [5]int64
	for i := range n {
		v, err := positionInt(p[i])
		if err != nil {
			return ruleKey{}, err
		}
		n[i] = v
	}
	return ruleKey{agentKind: int(n[0]), nodeKind: int(n[1]), agentLen: int(n[2]), nodeLen: int(n[3]), created: n[4], id: p[5]}, nil
}

// ruleInput is a rule as PutRule received it, checked.
type ruleInput struct {
	ID            string
	Agent         string
	Node          string
	Role          identity.Role // RoleNone when People name who decides
	People        []string
	Quorum        int
	TimeLimit     int64 // nanoseconds; 0 is none
	RequireReason bool
	// AllowSelfApproval: a person in the approval's conversation may
	// decide it.
	AllowSelfApproval bool
	// NoStandingConsent, StandingConsentMaxAmount: whether, and below what
	// amount, a yes may stand for later operations (consent.go).
	NoStandingConsent        bool
	StandingConsentMaxAmount float64
	Description              string
	// Escalation: its steps, checked (escalation.go).
	Escalation []schema.EscalationStep
}

// ruleFromProto checks a rule from the wire. Its error is an
// invalid_argument naming the field.
func ruleFromProto(r *boardv1.Rule) (ruleInput, error) {
	bad := func(format string, args ...any) (ruleInput, error) {
		return ruleInput{}, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(format, args...).Error())
	}
	if r == nil {
		return bad("rule: required")
	}
	role, err := roleFrom("rule.role", r.GetRole(), false)
	if err != nil {
		return ruleInput{}, err
	}
	in := ruleInput{
		ID:                r.GetId(),
		Agent:             r.GetAgent(),
		Node:              r.GetNode(),
		Role:              role,
		People:            r.GetPeople(),
		Quorum:            1,
		RequireReason:     r.GetRequireReason(),
		AllowSelfApproval: r.GetAllowSelfApproval(),
		Description:       r.GetDescription(),

		NoStandingConsent:        r.GetNoStandingConsent(),
		StandingConsentMaxAmount: r.GetStandingConsentMaxAmount(),
	}
	if m := in.StandingConsentMaxAmount; m < 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return bad("rule.standing_consent_max_amount: %g, want 0 (no limit) or more", m)
	}
	if in.ID != "" {
		if err := validRuleID(in.ID); err != nil {
			return bad("rule.id: %w", err)
		}
	}
	if err := validPattern(in.Agent); err != nil {
		return bad("rule.agent: %w", err)
	}
	if err := validPattern(in.Node); err != nil {
		return bad("rule.node: %w", err)
	}
	switch {
	case in.Role != identity.RoleNone && len(in.People) > 0:
		return bad("rule: give a role or people, not both")
	case in.Role == identity.RoleNone && len(in.People) == 0:
		return bad("rule: give a role or people to decide")
	case in.Role != identity.RoleNone && in.Role != identity.RoleApprover && in.Role != identity.RoleAdmin:
		// A viewer reads the board and never decides.
		return bad("rule.role: must be ROLE_APPROVER or ROLE_ADMIN, not %s", enumName(r.GetRole()))
	case len(in.People) > maxRulePeople:
		return bad("rule.people: %d people, at most %d", len(in.People), maxRulePeople)
	}
	seen := make(map[string]int, len(in.People))
	in.People = make([]string, len(r.GetPeople()))
	for i, p := range r.GetPeople() {
		if p == "" {
			return bad("rule.people[%d]: empty", i)
		}
		if err := identity.ValidName(p); err != nil {
			return bad("rule.people[%d]: %w", i, err)
		}
		c, err := canonicalPerson(p)
		if err != nil {
			return bad("rule.people[%d]: %s is not an email address (a name with an @ is a person's address; an operator token's name has none)", i, quoted(p))
		}
		if j, ok := seen[c]; ok {
			return bad("rule.people[%d]: %q is rule.people[%d] too", i, c, j)
		}
		seen[c] = i
		in.People[i] = c
	}
	if r.Quorum != nil {
		in.Quorum = int(r.GetQuorum())
		if in.Quorum < 1 {
			return bad("rule.quorum: must be at least 1")
		}
	}
	switch {
	case len(in.People) > 0 && in.Quorum > len(in.People):
		return bad("rule.quorum: %d, more than the %d named in rule.people: the approval could never be approved", in.Quorum, len(in.People))
	case in.Quorum > maxRulePeople:
		return bad("rule.quorum: %d, more than %d, the most people a rule may count on", in.Quorum, maxRulePeople)
	}
	if tl := r.GetTimeLimit(); tl != nil {
		if err := tl.CheckValid(); err != nil {
			return bad("rule.time_limit: %w", err)
		}
		d := tl.AsDuration()
		switch {
		case d <= 0:
			return bad("rule.time_limit: must be positive")
		case d > maxRuleTimeLimit:
			return bad("rule.time_limit: at most %s", durationString(maxRuleTimeLimit))
		}
		in.TimeLimit = int64(d)
	}
	if len(in.Description) > maxRuleDescriptionLen {
		return bad("rule.description: %d bytes, at most %d", len(in.Description), maxRuleDescriptionLen)
	}
	if in.Escalation, err = escalationFrom(r.GetEscalation(), time.Duration(in.TimeLimit)); err != nil {
		return ruleInput{}, err
	}
	return in, nil
}

// storedRole is a rule's role as the store keeps it: "" for none.
func storedRole(r identity.Role) string {
	if r == identity.RoleNone {
		return ""
	}
	return r.String()
}

// canonicalPerson is who a rule names, as the board compares them: a
// person's address (any name with an @) in its canonical form, or an
// operator token's name as it is.
func canonicalPerson(p string) (string, error) {
	if !strings.Contains(p, "@") {
		return p, nil
	}
	return identity.CanonicalEmail(p)
}

// validPattern checks an agent or node pattern.
func validPattern(p string) error {
	switch {
	case p == "":
		return fmt.Errorf(`required ("*" for all)`)
	case len(p) > maxRulePatternLen:
		return fmt.Errorf("%d bytes, at most %d", len(p), maxRulePatternLen)
	case strings.TrimSpace(p) != p:
		return fmt.Errorf("leading or trailing space")
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("not a valid glob")
	}
	return nil
}

// validRuleID checks an id given to PutRule: letters, digits, '.', '_'
// and '-', so it reads well in a URL, a log line and the audit log.
// ruleIDArg checks the id a request names a rule by (an approval rule or
// an alert rule): required, and of a rule id's shape.
func ruleIDArg(id string) error {
	if id == "" {
		return connect.NewError(connect.CodeInvalidArgument, "id: required")
	}
	if err := validRuleID(id); err != nil {
		return connect.Errorf(connect.CodeInvalidArgument, "id: %v", err)
	}
	return nil
}

func validRuleID(id string) error {
	if len(id) > maxRuleIDLen {
		return fmt.Errorf("%d bytes, at most %d", len(id), maxRuleIDLen)
	}
	for _, c := range id {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return fmt.Errorf("want letters, digits, '.', '_' or '-'")
		}
	}
	return nil
}

// newRuleID is an id for a rule put without one.
func newRuleID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("rule id: %w", err)
	}
	return "rule-" + hex.EncodeToString(b), nil
}

// ruleProto is the API's view of a stored rule.
func ruleProto(r *ent.Rule) *boardv1.Rule {
	q := int32(r.Quorum)
	p := &boardv1.Rule{
		Id:                r.ID,
		Agent:             r.Agent,
		Node:              r.Node,
		Role:              storedRoleProto(r.Role),
		People:            r.People,
		Quorum:            &q,
		RequireReason:     r.RequireReason,
		AllowSelfApproval: r.AllowSelfApproval,
		Description:       r.Description,

		NoStandingConsent:        r.NoStandingConsent,
		StandingConsentMaxAmount: r.StandingConsentMaxAmount,
		Escalation:               escalationProto(r.Escalation),
		CreateTime:               timestamppb.New(r.CreatedAt),
		UpdateTime:               timestamppb.New(r.UpdatedAt),
		UpdatedBy:                r.UpdatedBy,
	}
	if r.TimeLimit > 0 {
		p.TimeLimit = durationpb.New(time.Duration(r.TimeLimit))
	}
	return p
}

// ruleDetail is what the audit log keeps about a rule: everything that
// says what it governs and who decides.
func ruleDetail(r *ent.Rule) map[string]any {
	d := map[string]any{
		"agent":          r.Agent,
		"node":           r.Node,
		"quorum":         r.Quorum,
		"require_reason": r.RequireReason,
	}
	if r.Role != "" {
		d["role"] = r.Role
	}
	if len(r.People) > 0 {
		d["people"] = r.People
	}
	if r.TimeLimit > 0 {
		d["time_limit"] = durationString(time.Duration(r.TimeLimit))
	}
	if r.Description != "" {
		d["description"] = r.Description
	}
	if r.AllowSelfApproval {
		d["allow_self_approval"] = true
	}
	return d
}

// durationString is d as the JSON form of a google.protobuf.Duration:
// seconds with a trailing "s" ("3600s", "1.5s").
func durationString(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
