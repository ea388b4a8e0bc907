package board

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"connectrpc.com/connect/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	boardv1 "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/agent"
	"github.com/symphonix/symphonix/ent/approval"
	"github.com/symphonix/symphonix/ent/fleetsample"
	"github.com/symphonix/symphonix/ent/run"
)

// The fleet's samples, for the web board's dashboard (docs/web.md). Once a
// minute, at the first tick of the board's loop after the minute ends, a
// board samples it: the gauges (agents online, by health, approvals
// pending) as they stand, and what happened within it (decisions and
// their latency, runs started, ended and failed). A sample is one row per
// resolution and start, written insert-or-ignore, so on several boards of
// one store each minute is sampled once, by whichever board gets there
// first; a board finding the minute sampled reads nothing more. At the
// first sample of each hour a board folds the complete hours the store
// holds minutes of and no hour sample into hour samples, and sweeps the
// samples past their retention (docs/limits.md).
const (
	// fleetMinuteKeep and fleetHourKeep are how long minute and hour
	// samples are kept.
	fleetMinuteKeep = 48 * time.Hour
	fleetHourKeep   = 30 * 24 * time.Hour
	// fleetMinuteWindow is the longest window GetFleetHistory answers
	// with minute samples; beyond, up to fleetMaxWindow, with hours.
	fleetMinuteWindow = 24 * time.Hour
	fleetMaxWindow    = 30 * 24 * time.Hour
	// fleetMaxPoints is the most samples one GetFleetHistory returns:
	// 24 h of minutes.
	fleetMaxPoints = 1440
	// fleetLatestWithin is how old the newest minute sample may be to be
	// GetFleetHistory's latest.
	fleetLatestWithin = 10 * time.Minute
	// fleetMaxDecisions is the most decisions of one minute or hour whose
	// latencies are read for its percentiles: past it, the earliest
	// decided.
	fleetMaxDecisions = 100_000

	resolutionMinute = "minute"
	resolutionHour   = "hour"
)

// fleetSampler is what the board's loop remembers of its sampling: the
// last minute it sampled (or found sampled) and the hour it last folded
// at.
type fleetSampler struct {
	minute time.Time
	folded time.Time
}

// sampleFleetDue samples the minute that ended last, if this board has not
// yet, and at the first minute of an hour folds and sweeps. Called by the
// board's loop; failures are logged.
func (b *Board) sampleFleetDue(ctx context.Context, now time.Time) {
	now = now.UTC()
	minute := now.Truncate(time.Minute).Add(-time.Minute)
	if !minute.After(b.fleet.minute) {
		return
	}
	b.fleet.minute = minute
	if err := b.sampleFleet(ctx, minute, now); err != nil {
		b.log.ErrorContext(ctx, "sample the fleet", "err", err.Error())
	}
	if hour := now.Truncate(time.Hour); hour.After(b.fleet.folded) {
		b.fleet.folded = hour
		if err := b.foldFleet(ctx, now); err != nil {
			b.log.ErrorContext(ctx, "fold the fleet's samples", "err", err.Error())
		}
	}
}

// sampleFleet records the sample of the minute starting at minute, its
// gauges read now, unless the store holds it already.
func (b *Board) sampleFleet(ctx context.Context, minute, now time.Time) error {
	minute = minute.UTC().Truncate(time.Minute)
	done, err := b.db.FleetSample.Query().
		Where(fleetsample.Resolution(resolutionMinute), fleetsample.At(minute)).Exist(ctx)
	if err != nil || done {
		return err
	}
	end := minute.Add(time.Minute)
	c := b.db.FleetSample.Create().SetResolution(resolutionMinute).SetAt(minute).SetMinutes(1)

	// The agents online, by health: one pass over the online index.
	var health []struct {
		HealthStatus string `json:"health_status"`
		Count        int    `json:"count"`
	}
	err = b.db.Agent.Query().Where(agent.Online(true)).
		GroupBy(agent.FieldHealthStatus).Aggregate(ent.Count()).Scan(ctx, &health)
	if err != nil {
		return fmt.Errorf("agents online: %w", err)
	}
	var online, ok, degraded, unknown, none int
	for _, h := range health {
		online += h.Count
		switch h.HealthStatus {
		case "ok":
			ok += h.Count
		case "degraded":
			degraded += h.Count
		case "":
			none += h.Count
		default:
			unknown += h.Count
		}
	}
	c.SetAgentsOnline(online).SetHealthOk(ok).SetHealthDegraded(degraded).SetHealthUnknown(unknown).SetHealthNone(none)

	pending, err := b.db.Approval.Query().Where(approval.State(StatePending)).Count(ctx)
	if err != nil {
		return fmt.Errorf("approvals pending: %w", err)
	}
	c.SetApprovalsPending(pending)

	lat, err := b.decisionLatencies(ctx, minute, end)
	if err != nil {
		return err
	}
	decisions := len(lat)
	if decisions == fleetMaxDecisions { // the percentiles are of those; the count is not cut
		decisions, err = b.db.Approval.Query().
			Where(approval.DecidedAtGTE(minute), approval.DecidedAtLT(end), approval.StateIn(StateApproved, StateRejected)).Count(ctx)
		if err != nil {
			return fmt.Errorf("decisions: %w", err)
		}
	}
	c.SetDecisions(decisions).SetLatencyP50Ms(percentile(lat, 50)).SetLatencyP99Ms(percentile(lat, 99))

	started, err := b.db.Run.Query().Where(run.StartTimeGTE(minute), run.StartTimeLT(end)).Count(ctx)
	if err != nil {
		return fmt.Errorf("runs started: %w", err)
	}
	var ended []struct {
		State string `json:"state"`
		Count int    `json:"count"`
	}
	err = b.db.Run.Query().Where(run.EndTimeGTE(minute), run.EndTimeLT(end)).
		GroupBy(run.FieldState).Aggregate(ent.Count()).Scan(ctx, &ended)
	if err != nil {
		return fmt.Errorf("runs ended: %w", err)
	}
	var nEnded, failed int
	for _, e := range ended {
		nEnded += e.Count
		if e.State == runFailed {
			failed += e.Count
		}
	}
	c.SetRunsStarted(started).SetRunsEnded(nEnded).SetRunsFailed(failed)
	return insertSample(ctx, c)
}

// insertSample writes a sample unless its resolution and start are there
// already (another board wrote it first).
func insertSample(ctx context.Context, c *ent.FleetSampleCreate) error {
	err := c.OnConflictColumns(fleetsample.FieldResolution, fleetsample.FieldAt).DoNothing().Exec(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // the conflict: nothing inserted, nothing returned
	}
	return err
}

// decisionLatencies are the times from raise to decision, in
// milliseconds, of the approvals approved or rejected within [from, to),
// sorted; read from the index on decided_at, state and created_at alone.
func (b *Board) decisionLatencies(ctx context.Context, from, to time.Time) ([]int64, error) {
	var rows []struct {
		CreatedAt time.Time `json:"created_at"`
		DecidedAt time.Time `json:"decided_at"`
	}
	err := b.db.Approval.Query().
		Where(approval.DecidedAtGTE(from), approval.DecidedAtLT(to), approval.StateIn(StateApproved, StateRejected)).
		Order(ent.Asc(approval.FieldDecidedAt)).Limit(fleetMaxDecisions).
		Select(approval.FieldCreatedAt, approval.FieldDecidedAt).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("decisions: %w", err)
	}
	lat := make([]int64, len(rows))
	for i, r := range rows {
		lat[i] = max(0, r.DecidedAt.Sub(r.CreatedAt).Milliseconds())
	}
	slices.Sort(lat)
	return lat, nil
}

// percentile is the p-th percentile of sorted by the nearest rank; 0 for
// none.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// foldFleet folds every complete hour of the last fleetMinuteKeep that
// has minute samples and no hour sample yet into one, and sweeps the
// samples past their retention. An hour's gauges are the mean of its
// minutes', rounded; its counts their sums; its latency percentiles those
// of every decision within the hour, read again from the approvals.
func (b *Board) foldFleet(ctx context.Context, now time.Time) error {
	now = now.UTC()
	end := now.Truncate(time.Hour)
	start := end.Add(-fleetMinuteKeep)
	last, err := b.db.FleetSample.Query().Where(fleetsample.Resolution(resolutionHour)).
		Order(ent.Desc(fleetsample.FieldAt)).First(ctx)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("last hour: %w", err)
	case !last.At.Add(time.Hour).Before(start):
		start = last.At.UTC().Add(time.Hour)
	}
	if start.Before(end) {
		minutes, err := b.db.FleetSample.Query().
			Where(fleetsample.Resolution(resolutionMinute), fleetsample.AtGTE(start), fleetsample.AtLT(end)).
			Order(ent.Asc(fleetsample.FieldAt)).All(ctx)
		if err != nil {
			return fmt.Errorf("minutes: %w", err)
		}
		for len(minutes) > 0 {
			hour := minutes[0].At.UTC().Truncate(time.Hour)
			n := 1
			for n < len(minutes) && minutes[n].At.UTC().Truncate(time.Hour).Equal(hour) {
				n++
			}
			if err := b.foldHour(ctx, hour, minutes[:n]); err != nil {
				return err
			}
			minutes = minutes[n:]
		}
	}
	if _, err := b.db.FleetSample.Delete().
		Where(fleetsample.Resolution(resolutionMinute), fleetsample.AtLT(now.Add(-fleetMinuteKeep))).Exec(ctx); err != nil {
		return fmt.Errorf("sweep minutes: %w", err)
	}
	if _, err := b.db.FleetSample.Delete().
		Where(fleetsample.Resolution(resolutionHour), fleetsample.AtLT(now.Add(-fleetHourKeep))).Exec(ctx); err != nil {
		return fmt.Errorf("sweep hours: %w", err)
	}
	return nil
}

// foldHour writes the sample of the hour starting at hour from its
// minutes, unless the store holds it already.
func (b *Board) foldHour(ctx context.Context, hour time.Time, minutes []*ent.FleetSample) error {
	var online, pending, ok, degraded, unknown, none, decisions, started, ended, failed int
	for _, m := range minutes {
		online += m.AgentsOnline
		pending += m.ApprovalsPending
		ok += m.HealthOk
		degraded += m.HealthDegraded
		unknown += m.HealthUnknown
		none += m.HealthNone
		decisions += m.Decisions
		started += m.RunsStarted
		ended += m.RunsEnded
		failed += m.RunsFailed
	}
	n := len(minutes)
	mean := func(sum int) int { return int(math.Round(float64(sum) / float64(n))) }
	lat, err := b.decisionLatencies(ctx, hour, hour.Add(time.Hour))
	if err != nil {
		return err
	}
	c := b.db.FleetSample.Create().SetResolution(resolutionHour).SetAt(hour).SetMinutes(n).
		SetAgentsOnline(mean(online)).SetApprovalsPending(mean(pending)).
		SetHealthOk(mean(ok)).SetHealthDegraded(mean(degraded)).SetHealthUnknown(mean(unknown)).SetHealthNone(mean(none)).
		SetDecisions(decisions).SetLatencyP50Ms(percentile(lat, 50)).SetLatencyP99Ms(percentile(lat, 99)).
		SetRunsStarted(started).SetRunsEnded(ended).SetRunsFailed(failed)
	if err := insertSample(ctx, c); err != nil {
		return fmt.Errorf("hour %s: %w", hour.Format(time.RFC3339), err)
	}
	return nil
}

// GetFleetHistory is the fleet's samples over a window ending now.
func (s agentService) GetFleetHistory(ctx context.Context, req *boardv1.GetFleetHistoryRequest) (*boardv1.GetFleetHistoryResponse, error) {
	w := req.GetWindow()
	if w == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, "window: required")
	}
	if err := w.CheckValid(); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, "window: not a valid duration")
	}
	d := w.AsDuration()
	if d < time.Minute || d > fleetMaxWindow {
		return nil, connect.Errorf(connect.CodeInvalidArgument, "window: %v is outside 1m to 720h", d)
	}
	res := &boardv1.GetFleetHistoryResponse{Resolution: boardv1.FleetResolution_FLEET_RESOLUTION_MINUTE, Samples: []*boardv1.FleetSample{}}
	resolution := resolutionMinute
	if d > fleetMinuteWindow {
		res.Resolution, resolution = boardv1.FleetResolution_FLEET_RESOLUTION_HOUR, resolutionHour
	}
	now := s.b.now().UTC()
	rows, err := s.b.db.FleetSample.Query().
		Where(fleetsample.Resolution(resolution), fleetsample.AtGTE(now.Add(-d)), fleetsample.AtLTE(now)).
		Order(ent.Desc(fleetsample.FieldAt)).Limit(fleetMaxPoints).All(ctx)
	if err != nil {
		return nil, err
	}
	for i := len(rows) - 1; i >= 0; i-- {
		res.Samples = append(res.Samples, fleetSampleProto(rows[i]))
	}
	latest, err := s.b.db.FleetSample.Query().
		Where(fleetsample.Resolution(resolutionMinute), fleetsample.AtGTE(now.Add(-fleetLatestWithin)), fleetsample.AtLTE(now)).
		Order(ent.Desc(fleetsample.FieldAt)).First(ctx)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return nil, err
	default:
		res.Latest = fleetSampleProto(latest)
	}
	return res, nil
}

// fleetSampleProto is the API's view of a stored sample.
func fleetSampleProto(r *ent.FleetSample) *boardv1.FleetSample {
	return &boardv1.FleetSample{
		Time:               timestamppb.New(r.At),
		Minutes:            int32(r.Minutes),
		AgentsOnline:       int32(r.AgentsOnline),
		ApprovalsPending:   int32(r.ApprovalsPending),
		HealthOk:           int32(r.HealthOk),
		HealthDegraded:     int32(r.HealthDegraded),
		HealthUnknown:      int32(r.HealthUnknown),
		HealthNone:         int32(r.HealthNone),
		Decisions:          int32(r.Decisions),
		DecisionLatencyP50: durationpb.New(time.Duration(r.LatencyP50Ms) * time.Millisecond),
		DecisionLatencyP99: durationpb.New(time.Duration(r.LatencyP99Ms) * time.Millisecond),
		RunsStarted:        int32(r.RunsStarted),
		RunsEnded:          int32(r.RunsEnded),
		RunsFailed:         int32(r.RunsFailed),
	}
}
