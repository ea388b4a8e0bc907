package board

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/symphonix/symphonix/ent"
	"github.com/symphonix/symphonix/ent/healthround"
)

// addRounds stores n rounds of agent received at at, one microsecond apart.
func addRounds(t *testing.T, b *Board, agent string, n int, at time.Time) {
	t.Helper()
	for start := 0; start < n; start += 1000 {
		creates := make([]*ent.HealthRoundCreate, 0, 1000)
		for i := start; i < min(n, start+1000); i++ {
			when := at.Add(time.Duration(i) * time.Microsecond)
			creates = append(creates, b.db.HealthRound.Create().SetAgent(agent).SetStatus("ok").
				SetChecks([]byte("[]")).SetStarted(when).SetReceived(when))
		}
		if err := b.db.HealthRound.CreateBulk(creates...).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func roundsOf(t *testing.T, b *Board, agent string) int {
	t.Helper()
	n, err := b.db.HealthRound.Query().Where(healthround.Agent(agent)).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHealthSweep: the sweep removes rounds older than 7 days, and each
// agent's beyond its newest 10,000, keeping the newest.
func TestHealthSweep(t *testing.T) {
	b := bubbleBoard(t) // outside a bubble: the wall clock
	<-b.sweptAtStart
	now := b.now()
	addRounds(t, b, "busy", 5, now.Add(-8*24*time.Hour))
	addRounds(t, b, "busy", healthKeepRounds+7, now.Add(-time.Hour))
	addRounds(t, b, "quiet", 3, now.Add(-6*24*time.Hour))
	n, err := b.sweepHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 12 || roundsOf(t, b, "busy") != healthKeepRounds || roundsOf(t, b, "quiet") != 3 {
		t.Errorf("swept %d; busy %d, quiet %d; want 12 swept, %d and 3 kept", n, roundsOf(t, b, "busy"), roundsOf(t, b, "quiet"), healthKeepRounds)
	}
	oldest, err := b.db.HealthRound.Query().Where(healthround.Agent("busy")).Order(ent.Asc(healthround.FieldReceived)).First(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-time.Hour).Add(7 * time.Microsecond); !oldest.Received.Equal(want) {
		t.Errorf("oldest kept %s, want %s (the newest 10,000 kept)", oldest.Received, want)
	}
}

// TestHealthSweepHourly: the sweep is scheduled every hour, not only at
// start.
func TestHealthSweepHourly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := bubbleBoard(t)
		synctest.Wait() // the sweep at start found nothing
		addRounds(t, b, "a", 2, b.now().Add(-7*24*time.Hour).Add(30*time.Minute))
		time.Sleep(29 * time.Minute)
		synctest.Wait()
		if n := roundsOf(t, b, "a"); n != 2 {
			t.Fatalf("after 29 minutes: %d rounds, want 2 (not 7 days old yet, or no sweep yet)", n)
		}
		time.Sleep(time.Until(b.now().Truncate(time.Hour).Add(time.Hour)) + time.Second)
		synctest.Wait()
		if n := roundsOf(t, b, "a"); n != 0 {
			t.Errorf("after the hour: %d rounds, want 0", n)
		}
	})
}
