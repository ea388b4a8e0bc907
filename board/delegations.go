package board

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/delegationfailure"
)

// The capabilities of delegation (docs/runs.md): an agent announcing
// "delegation" may say, in a run's start, which run delegated to it, and
// may report the delegations its runs did not get; one announcing
// "delegation-cycle" reports every delegation refused as circular, so its
// silence means none was.
const (
	capDelegation      = "delegation"
	capDelegationCycle = "delegation-cycle"
)

// Limits on delegation (docs/limits.md).
const (
	// maxChain is how many agents a delegation's chain may name.
	maxChain = 32
	// maxDelegationName is the longest agent name in a chain, a target
	// or RunDelegation.agent.
	maxDelegationName = 64
	// maxInvocationID is the longest invocation id.
	maxInvocationID = 64
	// maxFailureMessage is the longest message of a delegation failure.
	maxFailureMessage = 1024
	// maxFailuresPerAgent is how many delegation failures of one agent the
	// board keeps: the latest; older ones are swept as new ones come.
	maxFailuresPerAgent = 1000
	// maxRunFailures is how many delegation failures one run summary may
	// list.
	maxRunFailures = 64
)

// codeRecursion is the agent code of a delegation refused as circular.
const codeRecursion = "AGENT_RECURSION"

// agentCodes are the codes a delegation failure may carry: every code an
// agent error can (the seeds' AGENT_CODES).
var agentCodes = []string{
	"UNKNOWN_AGENT", "DUPLICATE_AGENT", "INVALID_REGISTRY", "INVALID_REGISTRY_ENTRY",
	"AGENT_FLOW_UNREADABLE", "AGENT_FLOW_INVALID", "AGENT_NOT_PERMITTED", "AGENT_DECISION_INVALID",
	"AGENT_INPUT_INVALID", "AGENT_OUTPUT_INVALID", "AGENT_FAILED", codeRecursion,
}

// delegationNameShape is the shape of an agent's name in a delegation: the
// registry's names, and the shape of an invocation id.
var delegationNameShape = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// validDelegationName checks an agent name of a delegation: 1 to 64 bytes
// of letters, digits, '.', '_' and '-'.
func validDelegationName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("required")
	case len(s) > maxDelegationName:
		return fmt.Errorf("%d bytes, at most %d", len(s), maxDelegationName)
	case !delegationNameShape.MatchString(s):
		return fmt.Errorf("%s: want letters, digits, '.', '_' and '-'", quoted(s))
	}
	return nil
}

// validInvocationID checks an invocation id; "" is allowed.
func validInvocationID(s string) error {
	switch {
	case s == "":
		return nil
	case len(s) > maxInvocationID:
		return fmt.Errorf("%d bytes, at most %d", len(s), maxInvocationID)
	case !delegationNameShape.MatchString(s):
		return fmt.Errorf("want letters, digits, '.', '_' and '-'")
	}
	return nil
}

// validChain checks a chain of agents, naming the field at fault.
func validChain(at string, chain []string) error {
	if n := len(chain); n > maxChain {
		return badRequest("%s: %d names, at most %d", at, n, maxChain)
	}
	for i, c := range chain {
		if err := validDelegationName(c); err != nil {
			return badRequest("%s[%d]: %v", at, i, err)
		}
	}
	return nil
}

// validRunDelegation checks the delegation a run's start or summary
// carries, naming the field under at.
func validRunDelegation(at, runID string, d *boardv1.RunDelegation) error {
	if err := validRunID(d.GetParentRunId()); err != nil {
		return badRequest("%s.parent_run_id: %v", at, err)
	}
	if d.GetParentRunId() == runID {
		return badRequest("%s.parent_run_id: the run itself", at)
	}
	if err := validText(d.GetParentNode(), maxRunNode, true); err != nil {
		return badRequest("%s.parent_node: %v", at, err)
	}
	if err := validInvocationID(d.GetInvocationId()); err != nil {
		return badRequest("%s.invocation_id: %v", at, err)
	}
	if err := validDelegationName(d.GetAgent()); err != nil {
		return badRequest("%s.agent: %v", at, err)
	}
	return validChain(at+".chain", d.GetChain())
}

// validDelegationFailure checks a delegation_failed of the run runID,
// naming the field at fault. Nothing of it is cut: a failure out of
// bounds is refused whole.
func validDelegationFailure(at, runID string, f *boardv1.DelegationFailure) error {
	if f == nil {
		return badRequest("%s: required", at)
	}
	if f.GetAgent() != "" {
		return badRequest("%s.agent: set by the board; leave it empty", at)
	}
	if f.GetTime() != nil {
		return badRequest("%s.time: set by the board; leave it unset", at)
	}
	if id := f.GetRunId(); id != "" && id != runID {
		return badRequest("%s.run_id: %s, not the event's run %s", at, quoted(id), quoted(runID))
	}
	if err := validText(f.GetNode(), maxRunNode, true); err != nil {
		return badRequest("%s.node: %v", at, err)
	}
	if err := validText(f.GetTarget(), maxDelegationName, false); err != nil {
		return badRequest("%s.target: %v", at, err)
	}
	if !slices.Contains(agentCodes, f.GetCode()) {
		return badRequest("%s.code: %s, want one of the agent codes (UNKNOWN_AGENT, …, AGENT_RECURSION)", at, quoted(f.GetCode()))
	}
	if err := validText(f.GetMessage(), maxFailureMessage, false); err != nil {
		return badRequest("%s.message: %v", at, err)
	}
	if err := validInvocationID(f.GetInvocationId()); err != nil {
		return badRequest("%s.invocation_id: %v", at, err)
	}
	return validChain(at+".chain", f.GetChain())
}

// runDelegationProto is a stored run's delegation; nil for a run nothing
// delegated.
func runDelegationProto(r *ent.Run) *boardv1.RunDelegation {
	if r.ParentRunID == "" {
		return nil
	}
	return &boardv1.RunDelegation{
		ParentRunId:  r.ParentRunID,
		ParentNode:   r.ParentNode,
		InvocationId: r.InvocationID,
		Agent:        r.DelegatedAgent,
		Chain:        r.Chain,
	}
}

// delegationFailureProto is the API's view of a stored failure.
func delegationFailureProto(f *ent.DelegationFailure) *boardv1.DelegationFailure {
	return &boardv1.DelegationFailure{
		Agent:        f.Agent,
		RunId:        f.RunID,
		Node:         f.Node,
		Target:       f.Target,
		Code:         f.Code,
		Message:      f.Message,
		Chain:        f.Chain,
		InvocationId: f.InvocationID,
		Time:         timestamppb.New(f.Time),
	}
}

// delegationCyclesProto is what the board can tell of an agent's circular
// delegations: nothing when its last hello did not announce
// delegation-cycle, whatever it reported before.
func delegationCyclesProto(r *ent.Agent) *boardv1.DelegationCycles {
	c := &boardv1.DelegationCycles{Count: r.CycleCount}
	if r.CycleLast != nil {
		c.LastTime = timestamppb.New(*r.CycleLast)
	}
	switch {
	case !slices.Contains(r.Capabilities, capDelegationCycle):
		c.Knowledge = boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_CANNOT_TELL
	case r.CycleCount > 0:
		c.Knowledge = boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_REPORTED
	default:
		c.Knowledge = boardv1.CycleKnowledge_CYCLE_KNOWLEDGE_NONE_REPORTED
	}
	return c
}

// writeFailures stores the live delegation failures of a batch that the
// board does not hold yet — one of the same run, node, target, code and
// invocation is already there when the run's summary listed it first —
// keeps each agent's latest maxFailuresPerAgent, and brings its count of
// cycles up to date. It returns the failures it wrote, and the agents
// whose count changed, to be published.
func writeFailures(ctx context.Context, tx *ent.Tx, ws []*runWrite, now time.Time) ([]*runWrite, []string, error) {
	if len(ws) == 0 {
		return nil, nil, nil
	}
	var written []*runWrite
	var creates []*ent.DelegationFailureCreate
	cycles := map[string]bool{}
	var agents []string
	seen := map[string]bool{}
	for _, w := range ws {
		f := w.failure
		k := w.agent + "\x00" + w.run.GetId() + "\x00" + failureKey(f.GetNode(), f.GetTarget(), f.GetCode(), f.GetInvocationId())
		if seen[k] {
			continue
		}
		seen[k] = true
		held, err := tx.DelegationFailure.Query().Where(delegationfailure.Agent(w.agent), delegationfailure.RunID(w.run.GetId()),
			delegationfailure.Node(f.GetNode()), delegationfailure.Target(f.GetTarget()), delegationfailure.Code(f.GetCode()),
			delegationfailure.InvocationID(f.GetInvocationId())).Exist(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("read delegation failures: %w", err)
		}
		if held {
			continue
		}
		written = append(written, w)
		creates = append(creates, tx.DelegationFailure.Create().SetAgent(w.agent).SetRunID(w.run.GetId()).SetNode(f.GetNode()).
			SetTarget(f.GetTarget()).SetCode(f.GetCode()).SetMessage(f.GetMessage()).SetChain(f.GetChain()).
			SetInvocationID(f.GetInvocationId()).SetTime(now))
		if !slices.Contains(agents, w.agent) {
			agents = append(agents, w.agent)
		}
		if f.GetCode() == codeRecursion {
			cycles[w.agent] = true
		}
	}
	if len(creates) == 0 {
		return nil, nil, nil
	}
	if err := tx.DelegationFailure.CreateBulk(creates...).Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("write delegation failures: %w", err)
	}
	var changed []string
	for _, a := range agents {
		swept, err := sweepFailures(ctx, tx, a)
		if err != nil {
			return nil, nil, err
		}
		if !cycles[a] && !swept {
			continue
		}
		if err := countCycles(ctx, tx, a); err != nil {
			return nil, nil, err
		}
		changed = append(changed, a)
	}
	return written, changed, nil
}

// mergeFailures adds to the failures the board keeps of one run those its
// kept summary lists that it does not hold yet (each summary holds the
// run's whole list, so a failure whose live event was lost arrives, and one
// whose event did arrive is not kept twice). Nothing is removed: a summary
// that lists fewer (from an agent that does not list them) loses nothing
// the board was told. It returns the codes of the failures it added, and
// whether the agent's cycles changed.
func mergeFailures(ctx context.Context, tx *ent.Tx, name, runID string, fs []*boardv1.DelegationFailure, now time.Time) ([]string, bool, error) {
	if len(fs) == 0 {
		return nil, false, nil
	}
	where := delegationfailure.And(delegationfailure.Agent(name), delegationfailure.RunID(runID))
	old, err := tx.DelegationFailure.Query().Where(where).All(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("read a run's delegation failures: %w", err)
	}
	held := map[string]int{}
	for _, o := range old {
		held[failureKey(o.Node, o.Target, o.Code, o.InvocationID)]++
	}
	var fresh []string
	cycled := false
	var creates []*ent.DelegationFailureCreate
	for _, f := range fs {
		k := failureKey(f.GetNode(), f.GetTarget(), f.GetCode(), f.GetInvocationId())
		if held[k] > 0 {
			held[k]--
			continue
		}
		at := now
		if t := f.GetTime(); t != nil && t.AsTime().Before(now) {
			at = storedTime(t.AsTime())
		}
		fresh = append(fresh, f.GetCode())
		cycled = cycled || f.GetCode() == codeRecursion
		creates = append(creates, tx.DelegationFailure.Create().SetAgent(name).SetRunID(runID).SetNode(f.GetNode()).
			SetTarget(f.GetTarget()).SetCode(f.GetCode()).SetMessage(f.GetMessage()).SetChain(f.GetChain()).
			SetInvocationID(f.GetInvocationId()).SetTime(at))
	}
	if len(creates) == 0 {
		return nil, false, nil
	}
	if err := tx.DelegationFailure.CreateBulk(creates...).Exec(ctx); err != nil {
		return nil, false, fmt.Errorf("write a run's delegation failures: %w", err)
	}
	swept, err := sweepFailures(ctx, tx, name)
	if err != nil {
		return nil, false, err
	}
	if cycled || swept {
		if err := countCycles(ctx, tx, name); err != nil {
			return nil, false, err
		}
	}
	return fresh, cycled || swept, nil
}

// failureKey is what tells one failure of a run from another.
func failureKey(node, target, code, invocation string) string {
	return node + "\x00" + target + "\x00" + code + "\x00" + invocation
}

// sweepFailures removes an agent's failures past the latest
// maxFailuresPerAgent, and says whether it removed any.
func sweepFailures(ctx context.Context, tx *ent.Tx, name string) (bool, error) {
	old, err := tx.DelegationFailure.Query().Where(delegationfailure.Agent(name)).
		Order(ent.Desc(delegationfailure.FieldTime), ent.Desc(delegationfailure.FieldID)).
		Offset(maxFailuresPerAgent).IDs(ctx)
	if err != nil {
		return false, fmt.Errorf("old delegation failures: %w", err)
	}
	if len(old) > 0 {
		if _, err := tx.DelegationFailure.Delete().Where(delegationfailure.IDIn(old...)).Exec(ctx); err != nil {
			return false, fmt.Errorf("sweep delegation failures: %w", err)
		}
	}
	return len(old) > 0, nil
}

// validSummaryFailures checks the delegation failures a run summary
// lists: at most maxRunFailures, each as a live event's would be, with the
// time it happened (not in the future).
func validSummaryFailures(r *boardv1.Run, now time.Time) error {
	fs := r.GetDelegationFailures()
	if len(fs) > maxRunFailures {
		return badRequest("run_summary.run.delegation_failures: %d, at most %d", len(fs), maxRunFailures)
	}
	for i, f := range fs {
		t := f.GetTime()
		if t == nil {
			return badRequest("run_summary.run.delegation_failures[%d].time: required", i)
		}
		if err := validRunTime(t, now); err != nil {
			return badRequest("run_summary.run.delegation_failures[%d].time: %v", i, err)
		}
		c := proto.CloneOf(f)
		c.Time = nil
		if err := validDelegationFailure(fmt.Sprintf("run_summary.run.delegation_failures[%d]", i), r.GetId(), c); err != nil {
			return err
		}
	}
	return nil
}

// countCycles writes on an agent's row how many cycles of it the board
// keeps, and the time of the latest.
func countCycles(ctx context.Context, tx *ent.Tx, name string) error {
	where := delegationfailure.And(delegationfailure.Agent(name), delegationfailure.Code(codeRecursion))
	n, err := tx.DelegationFailure.Query().Where(where).Count(ctx)
	if err != nil {
		return fmt.Errorf("count cycles: %w", err)
	}
	u := tx.Agent.Update().Where(agent.Name(name)).SetCycleCount(int64(n))
	last, err := tx.DelegationFailure.Query().Where(where).Order(ent.Desc(delegationfailure.FieldTime)).First(ctx)
	switch {
	case err == nil:
		u.SetCycleLast(last.Time)
	case ent.IsNotFound(err):
		u.ClearCycleLast()
	default:
		return fmt.Errorf("latest cycle: %w", err)
	}
	return u.Exec(ctx)
}
