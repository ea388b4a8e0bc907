package board

import (
	"context"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/healthround"
)

// How much health history the board keeps per agent (docs/limits.md): the
// rounds of the last healthKeep, and of those at most healthKeepRounds.
// The sweep runs when the board starts and every hour on the hour, so an
// agent holds at most what it can report in an hour beyond them.
const (
	healthKeep       = 7 * 24 * time.Hour
	healthKeepRounds = 10_000
	healthSweepSpec  = "@hourly"
)

// startHealthSweep schedules the sweeps of health history and of runs
// (runsweep.go), and runs them now; stop ends the schedule and waits for a
// sweep under way.
func (b *Board) startHealthSweep() (stop func()) {
	sweep := func() {
		b.sweepHealthLogged()
		b.sweepRunsLogged()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		b.sweepNotifications(ctx, b.now())
		b.sweepActionLinks(ctx, b.now())
		cancel()
	}
	c := cron.New(cron.WithLocation(time.UTC))
	if _, err := c.AddFunc(healthSweepSpec, sweep); err != nil {
		panic(err) // the spec is a constant
	}
	c.Start()
	go func() {
		defer close(b.sweptAtStart)
		sweep()
	}()
	return func() {
		<-c.Stop().Done()
		<-b.sweptAtStart
	}
}

func (b *Board) sweepHealthLogged() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, err := b.sweepHealth(ctx)
	if err != nil {
		b.log.ErrorContext(ctx, "sweep health history", "err", err.Error())
		return
	}
	if n > 0 {
		b.log.InfoContext(ctx, "health history swept", "rounds", n)
	}
}

// sweepHealth deletes the rounds older than healthKeep, and every agent's
// beyond its newest healthKeepRounds, and says how many went.
func (b *Board) sweepHealth(ctx context.Context) (int, error) {
	n, err := b.db.HealthRound.Delete().Where(healthround.ReceivedLT(b.now().Add(-healthKeep))).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("old rounds: %w", err)
	}
	var counts []struct {
		Agent string `json:"agent"`
		Count int    `json:"count"`
	}
	err = b.db.HealthRound.Query().GroupBy(healthround.FieldAgent).Aggregate(ent.Count()).Scan(ctx, &counts)
	if err != nil {
		return n, fmt.Errorf("count rounds: %w", err)
	}
	for _, c := range counts {
		if c.Count <= healthKeepRounds {
			continue
		}
		ids, err := b.db.HealthRound.Query().Where(healthround.Agent(c.Agent)).
			Order(ent.Desc(healthround.FieldID)).Offset(healthKeepRounds - 1).Limit(1).IDs(ctx)
		if err != nil || len(ids) == 0 {
			return n, fmt.Errorf("rounds of %s: %v", c.Agent, err)
		}
		m, err := b.db.HealthRound.Delete().Where(healthround.Agent(c.Agent), healthround.IDLT(ids[0])).Exec(ctx)
		if err != nil {
			return n, fmt.Errorf("rounds of %s: %w", c.Agent, err)
		}
		n += m
	}
	return n, nil
}
