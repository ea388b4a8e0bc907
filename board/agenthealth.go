package board

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/healthround"
	"github.com/symphonix/symphonix/store"
)

// What one health report may carry, and how often (docs/limits.md).
const (
	maxHealthChecks    = 100
	maxHealthCheckName = 64
	// maxHealthDetail is what the board keeps of a check's detail; a
	// longer one is cut, and says so.
	maxHealthDetail = 1024
	// maxCheckDuration is the longest duration a line may claim.
	maxCheckDuration = time.Hour
)

// capHealth and capPause are the capabilities an agent announces when it
// runs health checks, and when it can be paused.
const (
	capHealth = "health"
	capPause  = "pause"
)

// healthLine is one line of a round as the store keeps it.
type healthLine struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	DurationNS int64  `json:"duration_ns"`
	Detail     string `json:"detail,omitempty"`
}

// health keeps a round the agent reported, or refuses it in a LinkError
// that names the field; either way the link stays up.
func (l linkService) health(ctx context.Context, s *session, r *boardv1.HealthReport) error {
	now := l.b.now()
	if err := s.healthAllowed(now, l.b.cfg.Limits.HealthEvery); err != nil {
		return l.answerError(ctx, s, "", "health", err)
	}
	lines, status, err := validHealth(r)
	if err != nil {
		return l.answerError(ctx, s, "", "health", err)
	}
	started := now
	if t := r.GetStartTime(); t != nil && t.IsValid() {
		started = t.AsTime()
	}
	outcome := outcomeOf(status, lines)
	if err := l.b.keepHealth(ctx, s.name, status, lines, started, now, outcome != s.lastOutcome); err != nil {
		return l.answerError(ctx, s, "", "health", err)
	}
	s.lastOutcome = outcome
	return nil
}

// healthAllowed refuses a report that comes too soon after the last one
// this link sent, or from a link whose agent did not announce health.
func (s *session) healthAllowed(now time.Time, every time.Duration) error {
	if !slices.Contains(s.caps, capHealth) {
		return &linkRequestError{code: connect.CodeFailedPrecondition,
			msg: "health: this agent did not announce the health capability in its hello"}
	}
	if !s.lastHealth.IsZero() && now.Sub(s.lastHealth) < every {
		return &linkRequestError{code: connect.CodeResourceExhausted,
			msg: fmt.Sprintf("health: %s after the last report; at most one every %s", now.Sub(s.lastHealth).Round(time.Millisecond), every)}
	}
	s.lastHealth = now
	return nil
}

// validHealth checks a report and returns its lines, by name, and the
// round's status as the board reads it from them: degraded when a line is
// an error, unknown when none is but one could not tell, ok otherwise. A
// detail longer than the board keeps is cut, and says so.
func validHealth(r *boardv1.HealthReport) ([]healthLine, string, error) {
	checks := r.GetChecks()
	if n := len(checks); n > maxHealthChecks {
		return nil, "", badRequest("health.checks: %d lines, at most %d", n, maxHealthChecks)
	}
	lines := make([]healthLine, len(checks))
	status := "ok"
	seen := make(map[string]bool, len(checks))
	for i, c := range checks {
		name := c.GetName()
		if err := validText(name, maxHealthCheckName, true); err != nil {
			return nil, "", badRequest("health.checks[%d].name: %v", i, err)
		}
		if seen[name] {
			return nil, "", badRequest("health.checks[%d].name: %q twice", i, name)
		}
		seen[name] = true
		d := c.GetDuration().AsDuration()
		if d < 0 || d > maxCheckDuration || (c.GetDuration() != nil && !c.GetDuration().IsValid()) {
			return nil, "", badRequest("health.checks[%d].duration: want 0 to %s", i, maxCheckDuration)
		}
		ls := checkStatusWord(c.GetStatus())
		switch {
		case ls == "error":
			status = "degraded"
		case ls == "unknown" && status == "ok":
			status = "unknown"
		}
		lines[i] = healthLine{Name: name, Status: ls, DurationNS: int64(d), Detail: cutDetail(c.GetDetail())}
	}
	slices.SortFunc(lines, func(a, b healthLine) int { return strings.Compare(a.Name, b.Name) })
	return lines, status, nil
}

// cutDetail is at most maxHealthDetail bytes of d, cut on a character
// boundary, saying it was cut.
func cutDetail(d string) string {
	if len(d) <= maxHealthDetail {
		return d
	}
	const mark = " … (cut by the board at 1 KiB)"
	n := maxHealthDetail - len(mark)
	for n > 0 && !utf8.RuneStart(d[n]) {
		n--
	}
	return d[:n] + mark
}

// maxHealthBatch is the most health rounds one transaction keeps.
const maxHealthBatch = 500

// healthWrite is one round waiting for its batch (Board.healthWrites):
// rounds are kept many at a time, so that a fleet reporting at once costs
// the store one transaction a batch, not one each.
type healthWrite struct {
	name     string
	status   string
	checks   []byte
	started  time.Time
	received time.Time
	// changed: its outcome differs from the last the link reported, so
	// watchers are told.
	changed bool
	err     error
}

// keepHealth records a round as the agent's latest and in its history, and
// tells watchers when changed.
func (b *Board) keepHealth(ctx context.Context, name, status string, lines []healthLine, started, received time.Time, changed bool) error {
	js, err := json.Marshal(lines)
	if err != nil {
		return err
	}
	w := &healthWrite{
		name: name, status: status, checks: js, changed: changed,
		started:  started.UTC().Truncate(time.Microsecond),
		received: received.UTC().Truncate(time.Microsecond),
	}
	b.healthWrites.add(w)
	return w.err
}

// writeHealth keeps a batch of rounds in one transaction: every round in
// the history, and each agent's newest as its latest (one upsert); a
// failure fails them all. Watchers are told of the agents whose outcome
// changed, if anybody watches.
func writeHealth(b *Board, batch []*healthWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	latest := make(map[string]*healthWrite, len(batch))
	var changed []string
	for _, w := range batch {
		latest[w.name] = w // the last in the batch is the newest
		if w.changed && !slices.Contains(changed, w.name) {
			changed = append(changed, w.name)
		}
	}
	err := store.InTx(ctx, b.db, func(tx *ent.Tx) error {
		rounds := make([]*ent.HealthRoundCreate, len(batch))
		for i, w := range batch {
			rounds[i] = tx.HealthRound.Create().SetAgent(w.name).SetStatus(w.status).SetChecks(w.checks).
				SetStarted(w.started).SetReceived(w.received)
		}
		if err := tx.HealthRound.CreateBulk(rounds...).Exec(ctx); err != nil {
			return fmt.Errorf("keep health rounds: %w", err)
		}
		agents := make([]*ent.AgentCreate, 0, len(latest))
		for _, w := range latest {
			// Every agent that reports has linked, so its row is there:
			// the insert is never taken, only its update.
			agents = append(agents, tx.Agent.Create().SetName(w.name).SetFirstSeen(w.received).SetLastSeen(w.received).
				SetHealthStatus(w.status).SetHealthChecks(w.checks).SetHealthStarted(w.started).SetHealthReceived(w.received))
		}
		err := tx.Agent.CreateBulk(agents...).
			OnConflictColumns(agent.FieldName).
			Update(func(u *ent.AgentUpsert) {
				u.UpdateHealthStatus().UpdateHealthChecks().UpdateHealthStarted().UpdateHealthReceived()
			}).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("keep the latest health: %w", err)
		}
		return nil
	})
	for _, w := range batch {
		w.err = err
	}
	if err != nil || len(changed) == 0 || !b.hub.watched() {
		return
	}
	rows, err := b.db.Agent.Query().Where(agent.NameIn(changed...)).All(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "read agents whose health changed", "err", err.Error())
		return
	}
	for _, r := range rows {
		b.hub.publish(&boardv1.WatchAgentsResponse{Agent: agentProto(r)})
	}
}

// outcomeOf is what a round says, but for how long each check took: two
// rounds of one outcome have the same.
func outcomeOf(status string, lines []healthLine) string {
	var sb strings.Builder
	sb.WriteString(status)
	for _, l := range lines {
		fmt.Fprintf(&sb, "\x00%s\x00%s\x00%s", l.Name, l.Status, l.Detail)
	}
	return sb.String()
}

// GetHealthHistory is a page of an agent's rounds, newest first; its token
// holds the last round's id.
func (s agentService) GetHealthHistory(ctx context.Context, req *boardv1.GetHealthHistoryRequest) (*boardv1.GetHealthHistoryResponse, error) {
	if req.GetName() == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, "name: required")
	}
	pg, err := s.b.page("GetHealthHistory", req.GetPageSize(), req.GetPageToken(), defaultPageSize, maxPageSize, 1, req.GetName())
	if err != nil {
		return nil, err
	}
	known, err := s.b.db.Agent.Query().Where(agent.Name(req.GetName())).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !known {
		return nil, connect.Errorf(connect.CodeNotFound, "agent %s: not found", quoted(req.GetName()))
	}
	q := s.b.db.HealthRound.Query().Where(healthround.Agent(req.GetName()))
	if pg.after != nil {
		id, err := positionInt(pg.after[0])
		if err != nil {
			return nil, err
		}
		q = q.Where(healthround.IDLT(int(id)))
	}
	rows, err := q.Order(ent.Desc(healthround.FieldID)).Limit(pg.budget.max + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	res := &boardv1.GetHealthHistoryResponse{Rounds: []*boardv1.HealthRound{}}
	for _, r := range rows {
		round := healthRoundProto(r.Status, r.Checks, r.Started, r.Received)
		if !pg.take(round, int64String(int64(r.ID))) {
			break
		}
		res.Rounds = append(res.Rounds, round)
	}
	res.NextPageToken = pg.next()
	return res, nil
}

// healthRoundProto is the API's view of a stored round.
func healthRoundProto(status string, checks []byte, started, received time.Time) *boardv1.HealthRound {
	var lines []healthLine
	_ = json.Unmarshal(checks, &lines)
	r := &boardv1.HealthRound{
		Status:      healthStatusProto(status),
		Checks:      make([]*boardv1.HealthCheck, len(lines)),
		StartTime:   timestamppb.New(started),
		ReceiveTime: timestamppb.New(received),
	}
	for i, l := range lines {
		r.Checks[i] = &boardv1.HealthCheck{
			Name: l.Name, Status: checkStatusProto(l.Status),
			Duration: durationpb.New(time.Duration(l.DurationNS)), Detail: l.Detail,
		}
	}
	return r
}

// agentHealthProto is an agent's latest round; nil when it never reported
// one.
func agentHealthProto(r *ent.Agent) *boardv1.HealthRound {
	if r.HealthStatus == "" || r.HealthStarted == nil || r.HealthReceived == nil {
		return nil
	}
	return healthRoundProto(r.HealthStatus, r.HealthChecks, *r.HealthStarted, *r.HealthReceived)
}
