package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// FleetSample is one sample of the fleet, for the web board's dashboard
// (board/fleet.go, docs/web.md): a minute's, taken by one board of the
// store at the end of the minute, or an hour's, folded from the hour's
// minutes. The board keeps minutes 48 h and hours 30 days (docs/limits.md).
// One row per resolution and start: a second board sampling the same
// minute adds nothing.
type FleetSample struct {
	ent.Schema
}

// Fields of the FleetSample.
func (FleetSample) Fields() []ent.Field {
	return []ent.Field{
		// resolution is "minute" or "hour"; at is the start of the minute
		// or hour it covers, UTC.
		field.String("resolution").NotEmpty().MaxLen(8).Immutable(),
		field.Time("at").Immutable(),
		// minutes is how many minute samples it holds: 1 for a minute,
		// up to 60 for an hour.
		field.Int("minutes").Default(1),
		// Gauges, read when the minute ended (an hour's: the mean of its
		// minutes, rounded): agents online, approvals pending, and the
		// agents online by their latest health report (ok, degraded,
		// unknown, or none reported).
		field.Int("agents_online").Default(0),
		field.Int("approvals_pending").Default(0),
		field.Int("health_ok").Default(0),
		field.Int("health_degraded").Default(0),
		field.Int("health_unknown").Default(0),
		field.Int("health_none").Default(0),
		// decisions is how many approvals were approved or rejected within
		// it; latency_p50_ms and latency_p99_ms the percentiles of their
		// time from raise to decision, in milliseconds (0 without any).
		field.Int("decisions").Default(0),
		field.Int64("latency_p50_ms").Default(0),
		field.Int64("latency_p99_ms").Default(0),
		// Runs that started within it, and that ended within it, of
		// which failed.
		field.Int("runs_started").Default(0),
		field.Int("runs_ended").Default(0),
		field.Int("runs_failed").Default(0),
	}
}

// Indexes of the FleetSample: one per resolution and start, read in order
// by the dashboard and swept by age.
func (FleetSample) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("resolution", "at").Unique(),
	}
}
