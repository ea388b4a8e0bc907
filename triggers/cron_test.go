package triggers

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	_ "time/tzdata" // the zones the tests use, on a machine without its own

	"github.com/robfig/cron/v3"
)

// at parses a wall-clock time in a zone, for test tables.
func at(t *testing.T, zone, wall string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", wall, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNextRun(t *testing.T) {
	for _, c := range []struct {
		name, schedule, zone, after string // after: RFC 3339
		want                        string // RFC 3339; "" for "cannot tell"
	}{
		{"every minute", "* * * * *", "", "2026-01-05T10:00:00Z", "2026-01-05T10:01:00Z"},
		{"strictly after", "30 9 * * *", "UTC", "2026-01-05T09:30:00Z", "2026-01-06T09:30:00Z"},
		{"seconds round up", "30 9 * * *", "UTC", "2026-01-05T09:29:59Z", "2026-01-05T09:30:00Z"},
		{"weekday skips the weekend", "30 9 * * 1-5", "UTC", "2026-01-09T10:00:00Z", "2026-01-12T09:30:00Z"}, // Fri → Mon
		{"every 15 minutes", "*/15 * * * *", "UTC", "2026-01-05T10:07:00Z", "2026-01-05T10:15:00Z"},
		{"zone", "0 9 * * *", "Europe/Paris", "2026-01-05T00:00:00Z", "2026-01-05T08:00:00Z"},
		{"zone in summer", "0 9 * * *", "Europe/Paris", "2026-07-05T00:00:00Z", "2026-07-05T07:00:00Z"},
		{"day of month", "0 0 1 * *", "UTC", "2026-01-15T00:00:00Z", "2026-02-01T00:00:00Z"},
		{"29 February waits for a leap year", "0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"29 February across a century", "0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", "2104-02-29T00:00:00Z"},
		{"either day field (cron's or)", "0 0 13 * 5", "UTC", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"}, // Friday 2 Jan before the 13th
		{"day names", "0 8 * * MON", "UTC", "2026-01-06T00:00:00Z", "2026-01-12T08:00:00Z"},
		{"month names", "0 8 1 JUN *", "UTC", "2026-01-06T00:00:00Z", "2026-06-01T08:00:00Z"},

		// Spring forward in New York, 8 March 2026: 02:00 EST becomes 03:00 EDT (07:00Z).
		{"skipped time runs once when the clocks jump", "30 2 * * *", "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		{"skipped time, the day after, is itself again", "30 2 * * *", "America/New_York", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"},
		{"several skipped times run once", "*/20 2 * * *", "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z"},
		{"after the jump, nothing more that night", "*/20 2 * * *", "America/New_York", "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"},
		{"every 15 minutes across the jump", "*/15 * * * *", "America/New_York", "2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z"},
		{"every 15 minutes after the jump", "*/15 * * * *", "America/New_York", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"},
		// Fall back in New York, 1 November 2026: 02:00 EDT becomes 01:00 EST (06:00Z).
		{"repeated time runs the first time", "30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"},
		{"repeated time does not run again", "30 1 * * *", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
		{"every hour runs in both passes", "30 * * * *", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"},
		{"every 15 minutes through the repeated hour", "*/15 * * * *", "America/New_York", "2026-11-01T05:45:00Z", "2026-11-01T06:00:00Z"},
		{"first pass before second", "*/15 * * * *", "America/New_York", "2026-11-01T05:10:00Z", "2026-11-01T05:15:00Z"},
		// London, 29 March and 25 October 2026, at 01:00Z both.
		{"London: skipped", "30 1 * * *", "Europe/London", "2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"},
		{"London: repeated, first", "30 1 * * *", "Europe/London", "2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z"},
		{"London: repeated, once", "30 1 * * *", "Europe/London", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
		// Sydney, the other way round: back on 5 April, forward on 4 October 2026.
		{"Sydney: repeated, first", "30 2 * * *", "Australia/Sydney", "2026-04-04T12:00:00Z", "2026-04-04T15:30:00Z"},
		{"Sydney: repeated, once", "30 2 * * *", "Australia/Sydney", "2026-04-04T15:30:00Z", "2026-04-05T16:30:00Z"},
		{"Sydney: skipped", "30 2 * * *", "Australia/Sydney", "2026-10-03T12:00:00Z", "2026-10-03T16:00:00Z"},
		// Lord Howe moves by half an hour.
		{"half-hour shift", "15 2 * * *", "Australia/Lord_Howe", "2026-10-03T14:00:00Z", "2026-10-03T15:30:00Z"},

		{"never: 30 February", "0 0 30 2 *", "UTC", "2026-01-01T00:00:00Z", ""},
		{"never: 31 April and June", "0 0 31 4,6 *", "UTC", "2026-01-01T00:00:00Z", ""},
		{"unknown zone", "0 9 * * *", "Mars/Olympus_Mons", "2026-01-01T00:00:00Z", ""},
		{"Local is not a zone", "0 9 * * *", "Local", "2026-01-01T00:00:00Z", ""},
		{"unreadable", "0 9 * *", "UTC", "2026-01-01T00:00:00Z", ""},
		{"TZ prefix", "TZ=UTC 0 9 * * *", "UTC", "2026-01-01T00:00:00Z", ""},
		{"lone TZ", "TZ=UTC", "UTC", "2026-01-01T00:00:00Z", ""},
		{"descriptor", "@daily", "UTC", "2026-01-01T00:00:00Z", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := NextRun(c.schedule, c.zone, utc(t, c.after))
			if c.want == "" {
				if ok {
					t.Fatalf("NextRun(%q, %q) = %v, want cannot tell", c.schedule, c.zone, got)
				}
				return
			}
			if !ok || !got.Equal(utc(t, c.want)) {
				t.Fatalf("NextRun(%q, %q, %s) = %v %v, want %s", c.schedule, c.zone, c.after, got.UTC(), ok, c.want)
			}
		})
	}
}

// TestNextRunDSTDays counts the runs of a day's schedule over the days the
// clocks change: exactly one each day, where robfig/cron's own Next (which
// this package does not use for that reason) runs a skipped time never and
// a repeated time twice.
func TestNextRunDSTDays(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		schedule string
		from, to time.Time
		robfig   int // what robfig/cron's Next makes of the same day
	}{
		{"30 2 * * *", at(t, "America/New_York", "2026-03-08 00:00"), at(t, "America/New_York", "2026-03-09 00:00"), 0},
		{"30 1 * * *", at(t, "America/New_York", "2026-11-01 00:00"), at(t, "America/New_York", "2026-11-02 00:00"), 2},
	} {
		count := func(next func(time.Time) (time.Time, bool)) int {
			n := 0
			for t0, ok := next(c.from); ok && t0.Before(c.to); t0, ok = next(t0) {
				n++
			}
			return n
		}
		ours := count(func(a time.Time) (time.Time, bool) { return NextRun(c.schedule, "America/New_York", a) })
		if ours != 1 {
			t.Errorf("%s on %s: %d runs, want 1", c.schedule, c.from.Format("2006-01-02"), ours)
		}
		spec, err := cron.ParseStandard(c.schedule)
		if err != nil {
			t.Fatal(err)
		}
		spec.(*cron.SpecSchedule).Location = ny
		theirs := count(func(a time.Time) (time.Time, bool) { n := spec.Next(a); return n, !n.IsZero() })
		if theirs != c.robfig {
			t.Logf("robfig/cron now runs %s %d time(s) on %s (was %d): NextRun may no longer need its own walk", c.schedule, theirs, c.from.Format("2006-01-02"), c.robfig)
		}
	}
}

// TestNextRunAgreesWithRobfig: away from clock changes, the walk agrees
// with robfig/cron's Next, run after run.
func TestNextRunAgreesWithRobfig(t *testing.T) {
	for _, s := range []string{"* * * * *", "*/7 * * * *", "30 9 * * 1-5", "0 0 1,15 * *", "0 12 13 * 5", "5 4 * JAN,JUL SUN", "0 */6 * * *", "59 23 31 12 *"} {
		spec, err := cron.ParseStandard(s)
		if err != nil {
			t.Fatal(err)
		}
		spec.(*cron.SpecSchedule).Location = time.UTC
		a := utc(t, "2026-01-01T00:00:00Z")
		b := a
		for i := range 200 {
			ours, ok := NextRun(s, "UTC", a)
			theirs := spec.Next(b)
			if !ok || !ours.Equal(theirs) {
				t.Fatalf("%q run %d: NextRun = %v, robfig = %v", s, i, ours, theirs)
			}
			a, b = ours, theirs
		}
	}
}

func TestCronProblem(t *testing.T) {
	for _, c := range []struct {
		schedule, field, says string
	}{
		{"61 * * * *", "minute", "above maximum"},
		{"0 24 * * *", "hour", "above maximum"},
		{"0 0 0 * *", "day of month", "below minimum"},
		{"0 0 * 13 *", "month", "above maximum"},
		{"0 0 * * 7", "day of week", "Sunday is 0"},
		{"0 0 * * FUNDAY", "day of week", "FUNDAY"},
		{"x 0 * * *", "minute", "x"},
		{"*/0 0 * * *", "minute", ""},
		{"0 0 * *", "", "4 field(s), want five"},
		{"0 0 0 * * *", "", "6 field(s)"},
		{"@hourly", "", "descriptors are not accepted"},
		{"TZ=Europe/Paris 0 9 * * *", "", "6 field(s)"},
		{"CRON_TZ=Europe/Paris 0 9 * * *", "", "6 field(s)"},
		{"TZ=UTC", "", "1 field(s)"},
		{"TZ=UTC * * * *", "minute", "timeZone"},
		{"", "", "empty"},
		{strings.Repeat("1,", 100) + "1 * * * *", "", "at most 128"},
	} {
		err := CronProblem(c.schedule)
		var se *ScheduleError
		if !errors.As(err, &se) {
			t.Errorf("CronProblem(%q) = %v, want a *ScheduleError", c.schedule, err)
			continue
		}
		if se.Field != c.field || !strings.Contains(err.Error(), c.says) {
			t.Errorf("CronProblem(%q) = field %q, %q; want field %q saying %q", c.schedule, se.Field, err, c.field, c.says)
		}
		if c.field != "" && !strings.Contains(err.Error(), "the "+c.field+" field") {
			t.Errorf("CronProblem(%q) = %q does not name the %s field", c.schedule, err, c.field)
		}
	}
	for _, ok := range []string{"* * * * *", "0 0 30 2 *", "30 9 * * mon-fri", " 0  9 * * * "} {
		if err := CronProblem(ok); err != nil {
			t.Errorf("CronProblem(%q) = %v, want nil", ok, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ schedule, want string }{
		{"30 9 * * 1-5", "Every weekday at 09:30"},
		{"30 9 * * MON-FRI", "Every weekday at 09:30"},
		{"0 7 * * *", "Every day at 07:00"},
		{"*/15 * * * *", "Every 15 minutes"},
		{"* * * * *", "Every minute"},
		{"0 8 * * 1", "Every Monday at 08:00"},
		{"0 8 * * mon", "Every Monday at 08:00"},
		{"0 8 * * 1,4", "Every Monday and Thursday at 08:00"},
		{"0 10 * * 0,6", "Every weekend day at 10:00"},
		{"0 0 1 * *", "At 00:00 on day 1 of every month"},
		{"0 * * * *", "Every hour"},
		{"15 * * * *", "Every hour at 15 minutes past"},
		{"0 */6 * * *", "Every 6 hours"},
		{"0 */1 * * *", "Every hour"},
		{"*/1 * * * *", "Every minute"},
		// anything else as written
		{"0 9 1 1 *", "0 9 1 1 *"},
		{"0 9,17 * * *", "0 9,17 * * *"},
		{"0 9 * * 1,3,5", "0 9 * * 1,3,5"},
		{"not a schedule", "not a schedule"},
		{"0 0 30 2 *", "0 0 30 2 *"},
	} {
		if got := Describe(c.schedule); got != c.want {
			t.Errorf("Describe(%q) = %q, want %q", c.schedule, got, c.want)
		}
	}
}

func TestNeverRuns(t *testing.T) {
	for s, want := range map[string]bool{
		"0 0 30 2 *": true, "0 0 31 4,6,9,11 *": true, "0 0 29 2 *": false, "0 0 31 * *": false,
		"0 0 30 2 1": false, // cron's or: every Monday in February
		"0 0 * 2 *":  false, "bad": false,
	} {
		if got := NeverRuns(s); got != want {
			t.Errorf("NeverRuns(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestScheduleWaits arms a schedule the way a runtime does — sleep until
// NextRun, then ask again — under synctest's clock, and checks the
// instants it wakes at, across a spring-forward night.
func TestScheduleWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// synctest's clock starts at 2000-01-01 00:00 UTC; 2 April 2000 is
		// New York's spring-forward day (02:00 EST → 03:00 EDT, 07:00Z).
		start := time.Now()
		if start.Year() != 2000 {
			t.Fatalf("synctest clock starts at %v", start)
		}
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		from := time.Date(2000, 4, 1, 12, 0, 0, 0, ny)
		time.Sleep(time.Until(from))
		var woke []string
		for range 3 {
			next, ok := NextRun("30 2 * * *", "America/New_York", time.Now())
			if !ok {
				t.Fatal("NextRun cannot tell")
			}
			time.Sleep(time.Until(next))
			woke = append(woke, time.Now().In(ny).Format("2006-01-02 15:04 MST"))
		}
		want := []string{"2000-04-02 03:00 EDT", "2000-04-03 02:30 EDT", "2000-04-04 02:30 EDT"}
		if strings.Join(woke, ", ") != strings.Join(want, ", ") {
			t.Fatalf("woke at %v, want %v", woke, want)
		}
	})
}

// FuzzNextRun: whatever the schedule and zone, NextRun and the others
// answer without panicking, and an answer is after the instant asked
// about, and is a time the schedule names or the jump of a clock change.
func FuzzNextRun(f *testing.F) {
	for _, s := range []string{"* * * * *", "30 2 * * *", "0 0 30 2 *", "TZ=UTC", "TZ=", "CRON_TZ=x", "*/0 * * * *", "1-0 * * * *",
		"99999999999999999999 * * * *", "@every 1s", "0 0 29 2 1", "5-59/7 1,2,3 */3 JAN-MAR sun-sat"} {
		f.Add(s, "America/New_York", int64(1772960400))
		f.Add(s, "Nowhere", int64(0))
	}
	f.Fuzz(func(t *testing.T, schedule, zone string, unix int64) {
		after := time.Unix(unix%(1<<34), 0) // within a few centuries
		_ = CronProblem(schedule)
		_ = Describe(schedule)
		_ = NeverRuns(schedule)
		next, ok := NextRun(schedule, zone, after)
		if ok && !next.After(after) {
			t.Fatalf("NextRun(%q, %q, %v) = %v, not after", schedule, zone, after, next)
		}
		if prev, ok := PrevRun(schedule, zone, after); ok && prev.After(after) {
			t.Fatalf("PrevRun(%q, %q, %v) = %v, after", schedule, zone, after, prev)
		}
		if ok && CronProblem(schedule) != nil {
			t.Fatalf("NextRun(%q) answered a schedule CronProblem refuses", schedule)
		}
	})
}

func TestPrevRun(t *testing.T) {
	for _, c := range []struct{ schedule, zone, before, want string }{
		{"30 9 * * 1-5", "UTC", "2026-01-12T09:00:00Z", "2026-01-09T09:30:00Z"}, // Monday morning → Friday
		{"30 9 * * *", "UTC", "2026-01-12T09:30:00Z", "2026-01-12T09:30:00Z"},   // at or before
		{"30 2 * * *", "America/New_York", "2026-03-08T08:00:00Z", "2026-03-08T07:00:00Z"},
		{"30 1 * * *", "America/New_York", "2026-11-01T07:00:00Z", "2026-11-01T05:30:00Z"},
		{"30 * * * *", "America/New_York", "2026-11-01T06:45:00Z", "2026-11-01T06:30:00Z"},
		{"0 0 29 2 *", "UTC", "2027-01-01T00:00:00Z", "2024-02-29T00:00:00Z"},
		{"0 0 30 2 *", "UTC", "2027-01-01T00:00:00Z", ""},
		{"0 9 * * *", "Nowhere/Else", "2027-01-01T00:00:00Z", ""},
	} {
		got, ok := PrevRun(c.schedule, c.zone, utc(t, c.before))
		if c.want == "" {
			if ok {
				t.Errorf("PrevRun(%q, %q) = %v, want cannot tell", c.schedule, c.zone, got)
			}
			continue
		}
		if !ok || !got.Equal(utc(t, c.want)) {
			t.Errorf("PrevRun(%q, %q, %s) = %v %v, want %s", c.schedule, c.zone, c.before, got.UTC(), ok, c.want)
		}
	}
}

// TestPrevNextAgree: no run falls between PrevRun(x) and x, and the run
// after PrevRun(x) is NextRun's, around clock changes too.
func TestPrevNextAgree(t *testing.T) {
	for _, s := range []string{"30 2 * * *", "30 1 * * *", "*/15 * * * *", "*/20 1-3 * * *", "0 * * * *"} {
		for x := utc(t, "2026-11-01T03:00:00Z"); x.Before(utc(t, "2026-11-01T09:00:00Z")); x = x.Add(7 * time.Minute) {
			p, ok := PrevRun(s, "America/New_York", x)
			if !ok || p.After(x) {
				t.Fatalf("PrevRun(%q, %v) = %v %v", s, x, p, ok)
			}
			if n, _ := NextRun(s, "America/New_York", p); !n.After(x) {
				t.Fatalf("%q: a run at %v falls between PrevRun(%v) = %v and it", s, n, x, p)
			}
		}
		for x := utc(t, "2026-03-08T04:00:00Z"); x.Before(utc(t, "2026-03-08T09:00:00Z")); x = x.Add(7 * time.Minute) {
			p, ok := PrevRun(s, "America/New_York", x)
			if !ok || p.After(x) {
				t.Fatalf("PrevRun(%q, %v) = %v %v", s, x, p, ok)
			}
			if n, _ := NextRun(s, "America/New_York", p); !n.After(x) {
				t.Fatalf("%q: a run at %v falls between PrevRun(%v) = %v and it", s, n, x, p)
			}
		}
	}
}
