package board

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/audit"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/identity"
	"github.com/symphonix/symphonix/store"
)

// capTriggers is the capability an agent announces when it runs triggers:
// it reports them (TriggerReport) and is told which are paused
// (TriggerPauses).
const capTriggers = "triggers"

// Limits on what a trigger report may carry, how often, and on a trigger's
// pause (docs/limits.md).
const (
	maxTriggers           = 64
	maxTriggerID          = 64
	maxTriggerSchedule    = 128
	maxTriggerZone        = 64
	maxTriggerDescription = 256
	maxTriggerMethod      = 16
	maxTriggerPath        = 1024
	maxTriggerError       = 1024
	maxTriggerPauseReason = 1024
	maxDeliveryAttempts   = 1000
	triggerReportsEvery   = time.Second
	triggersFormat        = 1 // the version byte of a stored report and a run's trigger
)

var (
	triggerIDShape     = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	triggerMethodShape = regexp.MustCompile(`^[A-Z]+$`)
)

// validTriggerID checks a trigger's id: 1 to 64 of letters, digits, '-'
// and '_'.
func validTriggerID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("required")
	case len(id) > maxTriggerID:
		return fmt.Errorf("%d bytes, at most %d", len(id), maxTriggerID)
	case !triggerIDShape.MatchString(id):
		return fmt.Errorf("want letters, digits, '-' and '_'")
	}
	return nil
}

// validTriggerKind refuses a kind that is not schedule or webhook.
func validTriggerKind(at string, k boardv1.TriggerKind) error {
	if k != boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE && k != boardv1.TriggerKind_TRIGGER_KIND_WEBHOOK {
		return badRequest("%s: %s, want schedule or webhook", at, enumName(k))
	}
	return nil
}

// validWebhook checks a webhook's method and path; required says whether
// they must be set.
func validWebhook(at, method, path string, required bool) error {
	if method != "" || required {
		if len(method) > maxTriggerMethod || !triggerMethodShape.MatchString(method) {
			return badRequest("%s.method: want 1 to %d upper-case letters", at, maxTriggerMethod)
		}
	}
	if path != "" || required {
		if err := validText(path, maxTriggerPath, true); err != nil {
			return badRequest("%s.path: %v", at, err)
		}
		if !strings.HasPrefix(path, "/") {
			return badRequest("%s.path: want a path starting with '/'", at)
		}
	}
	return nil
}

// validTriggerReport checks a report, naming the field at fault, and makes
// it fit what the board keeps: sorted by id, each occurrence's error cut
// to 1 KiB.
func validTriggerReport(r *boardv1.TriggerReport, now time.Time) error {
	ts := r.GetTriggers()
	if n := len(ts); n > maxTriggers {
		return badRequest("triggers.triggers: %d, at most %d", n, maxTriggers)
	}
	seen := make(map[string]bool, len(ts))
	for i, t := range ts {
		at := fmt.Sprintf("triggers.triggers[%d]", i)
		if t == nil {
			return badRequest("%s: required", at)
		}
		if err := validTriggerID(t.GetId()); err != nil {
			return badRequest("%s.id: %v", at, err)
		}
		if seen[t.GetId()] {
			return badRequest("%s.id: %q twice", at, t.GetId())
		}
		seen[t.GetId()] = true
		if err := validTriggerKind(at+".kind", t.GetKind()); err != nil {
			return err
		}
		schedule := t.GetKind() == boardv1.TriggerKind_TRIGGER_KIND_SCHEDULE
		for _, f := range []struct {
			name     string
			v        string
			max      int
			required bool
		}{
			{"schedule", t.GetSchedule(), maxTriggerSchedule, schedule},
			{"time_zone", t.GetTimeZone(), maxTriggerZone, false},
			{"description", t.GetDescription(), maxTriggerDescription, false},
		} {
			if err := validText(f.v, f.max, f.required); err != nil {
				return badRequest("%s.%s: %v", at, f.name, err)
			}
		}
		if err := validWebhook(at, t.GetMethod(), t.GetPath(), !schedule); err != nil {
			return err
		}
		if o := t.GetOverlap(); o != "" && o != "skip" && o != "queue" {
			return badRequest("%s.overlap: %s, want skip or queue", at, quoted(o))
		}
		if n := t.GetNextRunTime(); n != nil && (!n.IsValid() || n.AsTime().Year() < 2000) {
			return badRequest("%s.next_run_time: not a valid time", at)
		}
		if l := t.GetLast(); l != nil {
			if err := validOccurrence(at+".last", l, now); err != nil {
				return err
			}
		}
	}
	slices.SortFunc(ts, func(a, b *boardv1.Trigger) int { return strings.Compare(a.GetId(), b.GetId()) })
	return nil
}

// validOccurrence checks a trigger's latest occurrence and cuts its error.
func validOccurrence(at string, o *boardv1.TriggerOccurrence, now time.Time) error {
	if err := validRunTime(o.GetTime(), now); err != nil {
		return badRequest("%s.time: %v", at, err)
	}
	if id := o.GetRunId(); id != "" {
		if err := validRunID(id); err != nil {
			return badRequest("%s.run_id: %v", at, err)
		}
	}
	if d := o.GetDuration(); d != nil && (!d.IsValid() || d.AsDuration() < 0) {
		return badRequest("%s.duration: want a duration of 0 or more", at)
	}
	if err := linkEnum(at+".delivery", o.GetDelivery()); err != nil {
		return err
	}
	o.Error = cutText(strings.ToValidUTF8(o.GetError(), "\uFFFD"), maxTriggerError)
	return nil
}

// validRunTrigger checks the trigger a run event or summary says started
// the run, naming the field under at.
func validRunTrigger(at string, t *boardv1.RunTrigger, now time.Time) error {
	if err := validTriggerID(t.GetTriggerId()); err != nil {
		return badRequest("%s.trigger_id: %v", at, err)
	}
	if err := validTriggerKind(at+".kind", t.GetKind()); err != nil {
		return err
	}
	if err := validRunTime(t.GetOccurrenceTime(), now); err != nil {
		return badRequest("%s.occurrence_time: %v", at, err)
	}
	if err := validWebhook(at, t.GetMethod(), t.GetPath(), false); err != nil {
		return err
	}
	if err := linkEnum(at+".delivery", t.GetDelivery()); err != nil {
		return err
	}
	if n := t.GetDeliveryAttempts(); n < 0 || n > maxDeliveryAttempts {
		return badRequest("%s.delivery_attempts: %d, want 0 to %d", at, n, maxDeliveryAttempts)
	}
	return nil
}

// encodeVersioned is m as the store keeps a report or a run's trigger: a
// version byte, then m in protobuf's binary form.
func encodeVersioned(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend([]byte{triggersFormat}, m)
}

// decodeVersioned reads what encodeVersioned wrote into m; false when b
// holds nothing this board reads.
func decodeVersioned(b []byte, m proto.Message) bool {
	if len(b) == 0 || b[0] != triggersFormat {
		return false
	}
	return proto.Unmarshal(b[1:], m) == nil
}

// runTriggerBytes is a run's trigger as the store keeps it; nil for none.
func runTriggerBytes(t *boardv1.RunTrigger) []byte {
	if t == nil {
		return nil
	}
	b, err := encodeVersioned(t)
	if err != nil {
		return nil
	}
	return b
}

// runTriggerProto reads what runTriggerBytes wrote; nil for none.
func runTriggerProto(b []byte) *boardv1.RunTrigger {
	var t boardv1.RunTrigger
	if !decodeVersioned(b, &t) {
		return nil
	}
	return &t
}

// triggerReport keeps the triggers an agent reports, or refuses the report
// in a LinkError that names the field; either way the link stays up. A
// report that comes within a second of the last this link sent, kept or
// refused, is dropped and counted (TriggerReportsDropped).
func (l linkService) triggerReport(ctx context.Context, s *session, r *boardv1.TriggerReport) error {
	b := l.b
	if !slices.Contains(s.caps, capTriggers) {
		return l.answerError(ctx, s, "", "triggers", &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: "triggers: this agent did not announce the triggers capability in its hello"})
	}
	now := b.now()
	if !s.lastTriggers.IsZero() && now.Sub(s.lastTriggers) < triggerReportsEvery {
		b.triggerDrops.Add(1)
		return nil
	}
	s.lastTriggers = now // a refused report counts too: refusing costs the board as well
	if err := validTriggerReport(r, now); err != nil {
		return l.answerError(ctx, s, "", "triggers", err)
	}
	enc, err := encodeVersioned(r)
	if err == nil {
		err = b.db.Agent.Update().Where(agent.Name(s.name)).SetTriggers(enc).SetTriggersTime(storedTime(now)).Exec(ctx)
	}
	if err != nil {
		return l.answerError(ctx, s, "", "triggers", err)
	}
	return nil
}

// triggerDrops counts the trigger reports dropped for coming too soon, and
// what the last log line said of them (the board's loop only).
type triggerDrops struct {
	atomic.Int64
	logged   int64
	loggedAt time.Time
}

// TriggerReportsDropped counts, since the board started, the trigger
// reports it dropped for coming within a second of the link's last.
func (b *Board) TriggerReportsDropped() int64 { return b.triggerDrops.Load() }

// logTriggerDrops logs the count when it moved since the last line, at
// most once a minute. The board's loop calls it.
func (b *Board) logTriggerDrops(now time.Time) {
	d := &b.triggerDrops
	n := d.Load()
	if n == d.logged || now.Sub(d.loggedAt) < time.Minute {
		return
	}
	d.logged, d.loggedAt = n, now
	b.log.Warn("trigger reports dropped since the board started: sent within a second of the link's last", "dropped", n)
}

// triggerPause is one operator's pause of one trigger, as the store keeps
// it (Agent.trigger_pauses, by trigger id).
type triggerPause struct {
	Reason string    `json:"reason"`
	By     string    `json:"by"`
	Time   time.Time `json:"time"`
}

// triggerPausesOf reads an agent's stored pauses.
func triggerPausesOf(a *ent.Agent) map[string]triggerPause {
	m := map[string]triggerPause{}
	if len(a.TriggerPauses) > 0 {
		_ = json.Unmarshal(a.TriggerPauses, &m)
	}
	return m
}

// reportOf reads an agent's stored report; nil when it has none.
func reportOf(a *ent.Agent) *boardv1.TriggerReport {
	var r boardv1.TriggerReport
	if !decodeVersioned(a.Triggers, &r) {
		return nil
	}
	return &r
}

// pausesMessage is which of an agent's triggers are paused, as the link
// carries it.
func pausesMessage(pauses map[string]triggerPause) *boardv1.LinkResponse {
	ids := make([]string, 0, len(pauses))
	for id := range pauses {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return &boardv1.LinkResponse{Kind: &boardv1.LinkResponse_TriggerPauses{TriggerPauses: &boardv1.TriggerPauses{Paused: ids}}}
}

// sendTriggerPauses tells a session that has just been welcomed which of
// its triggers are paused, when it announced triggers. row is the agent as
// its arrival read it back: a change kept after that read is pushed to the
// session and follows this word.
func sendTriggerPauses(s *session, row *ent.Agent) {
	if slices.Contains(s.caps, capTriggers) {
		_ = s.out.send(pausesMessage(triggerPausesOf(row)))
	}
}

// agentTriggerProto is one trigger of a as the API shows it; t is nil for
// a paused trigger the agent no longer reports.
func agentTriggerProto(a *ent.Agent, id string, t *boardv1.Trigger, pauses map[string]triggerPause) *boardv1.AgentTrigger {
	if t == nil {
		t = &boardv1.Trigger{Id: id}
	}
	at := &boardv1.AgentTrigger{Agent: a.Name, Trigger: t, Online: a.Online}
	if p, ok := pauses[id]; ok {
		at.Pause = &boardv1.TriggerPause{Paused: true, Reason: p.Reason, By: p.By, Time: timestamppb.New(p.Time)}
	}
	if a.TriggersTime != nil {
		at.ReportTime = timestamppb.New(*a.TriggersTime)
	}
	return at
}

// triggersOf is every trigger of a the board lists, by id: those its
// latest report holds, and those paused that it no longer reports. An
// agent whose last hello did not announce triggers has none.
func triggersOf(a *ent.Agent) []*boardv1.AgentTrigger {
	if !slices.Contains(a.Capabilities, capTriggers) {
		return nil
	}
	pauses := triggerPausesOf(a)
	byID := map[string]*boardv1.Trigger{}
	for _, t := range reportOf(a).GetTriggers() {
		byID[t.GetId()] = t
	}
	ids := make([]string, 0, len(byID)+len(pauses))
	for id := range byID {
		ids = append(ids, id)
	}
	for id := range pauses {
		if byID[id] == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := make([]*boardv1.AgentTrigger, len(ids))
	for i, id := range ids {
		out[i] = agentTriggerProto(a, id, byID[id], pauses)
	}
	return out
}

// triggerAgentPage is how many agents one read of ListTriggers takes.
const triggerAgentPage = 100

// ListTriggers is a page of agents' triggers, by agent and trigger id; its
// token holds the last agent and id.
func (s triggerService) ListTriggers(ctx context.Context, req *boardv1.ListTriggersRequest) (*boardv1.ListTriggersResponse, error) {
	only := req.GetAgent()
	if only != "" {
		if err := identity.ValidName(only); err != nil {
			return nil, refusal(connect.CodeInvalidArgument, "agent: %v", err)
		}
	}
	pg, err := s.b.page("ListTriggers", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 2, only)
	if err != nil {
		return nil, err
	}
	afterAgent, afterID := "", ""
	if pg.after != nil {
		afterAgent, afterID = pg.after[0], pg.after[1]
	}
	out := &boardv1.ListTriggersResponse{Triggers: []*boardv1.AgentTrigger{}}
	from := afterAgent
	first := true
	for {
		q := s.b.db.Agent.Query()
		if only != "" {
			q = q.Where(agent.Name(only))
		}
		if first {
			q = q.Where(agent.NameGTE(from))
		} else {
			q = q.Where(agent.NameGT(from))
		}
		first = false
		rows, err := q.Order(ent.Asc(agent.FieldName)).Limit(triggerAgentPage).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range rows {
			for _, t := range triggersOf(a) {
				id := t.GetTrigger().GetId()
				if a.Name == afterAgent && id <= afterID {
					continue
				}
				if !pg.take(t, a.Name, id) {
					out.NextPageToken = pg.next()
					return out, nil
				}
				out.Triggers = append(out.Triggers, t)
			}
		}
		if len(rows) < triggerAgentPage {
			break
		}
		from = rows[len(rows)-1].Name
	}
	out.NextPageToken = pg.next()
	return out, nil
}

// PauseTrigger keeps an operator's pause of one trigger and pushes it.
func (s triggerService) PauseTrigger(ctx context.Context, req *boardv1.PauseTriggerRequest) (*boardv1.PauseTriggerResponse, error) {
	if err := validText(req.GetReason(), maxTriggerPauseReason, true); err != nil {
		return nil, refusal(connect.CodeInvalidArgument, "reason: %v", err)
	}
	t, pushed, err := s.b.setTriggerPause(ctx, req.GetAgent(), req.GetTriggerId(), true, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &boardv1.PauseTriggerResponse{Trigger: t, Pushed: pushed}, nil
}

// ResumeTrigger drops an operator's pause of one trigger and pushes it.
func (s triggerService) ResumeTrigger(ctx context.Context, req *boardv1.ResumeTriggerRequest) (*boardv1.ResumeTriggerResponse, error) {
	t, pushed, err := s.b.setTriggerPause(ctx, req.GetAgent(), req.GetTriggerId(), false, "")
	if err != nil {
		return nil, err
	}
	return &boardv1.ResumeTriggerResponse{Trigger: t, Pushed: pushed}, nil
}

// setTriggerPause pauses or resumes one trigger of the named agent, keeps
// it with its audit entry in one transaction, and pushes every pause of
// the agent to its live link. Under the agent's lock, so a link coming up
// at the same moment never gets an older word after this one. Pausing a
// paused trigger, or resuming one that is not, changes and audits nothing
// (the first reason stays), and is pushed again.
func (b *Board) setTriggerPause(ctx context.Context, name, id string, paused bool, reason string) (*boardv1.AgentTrigger, bool, error) {
	if err := identity.ValidName(name); err != nil {
		return nil, false, refusal(connect.CodeInvalidArgument, "agent: %v", err)
	}
	if err := validTriggerID(id); err != nil {
		return nil, false, refusal(connect.CodeInvalidArgument, "trigger_id: %v", err)
	}
	actor := identity.ActorOf(ctx, "")
	now := storedTime(b.now())
	unlock := b.triggerLocks.lock(name)
	defer unlock()
	var out *ent.Agent
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		a, err := tx.Agent.Query().Where(agent.Name(name), store.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return refusal(connect.CodeNotFound, "agent: %s has never linked to this board", quoted(name))
		}
		if err != nil {
			return err
		}
		pauses := triggerPausesOf(a)
		_, was := pauses[id]
		reported := slices.ContainsFunc(reportOf(a).GetTriggers(), func(t *boardv1.Trigger) bool { return t.GetId() == id })
		if !reported && !was {
			return refusal(connect.CodeNotFound, "trigger_id: %s: agent %s has not reported such a trigger", quoted(id), quoted(name))
		}
		if was == paused {
			out = a
			return nil
		}
		action := "trigger.resume"
		detail := map[string]any{"agent": name, "trigger": id}
		if paused {
			action = "trigger.pause"
			pauses[id] = triggerPause{Reason: reason, By: actor, Time: now}
			detail["reason"] = reason
		} else {
			detail["paused_by"], detail["paused_reason"] = pauses[id].By, pauses[id].Reason
			delete(pauses, id)
		}
		enc, err := json.Marshal(pauses)
		if err != nil {
			return err
		}
		if out, err = a.Update().SetTriggerPauses(enc).Save(ctx); err != nil {
			return err
		}
		err = b.audit.Append(ctx, tx, audit.Record{Actor: actor, Action: action, Subject: name, Detail: detail, At: now})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	pauses := triggerPausesOf(out)
	pushed := b.presence.sendLiveTo(name, capTriggers, pausesMessage(pauses))
	var t *boardv1.Trigger
	for _, r := range reportOf(out).GetTriggers() {
		if r.GetId() == id {
			t = r
		}
	}
	return agentTriggerProto(out, id, t, pauses), pushed, nil
}
