package triggers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// A schedule is five cron fields, read by robfig/cron's parser: minute
// (0-59), hour (0-23), day of month (1-31), month (1-12 or JAN-DEC), day of
// week (0-6 or SUN-SAT, Sunday 0). Each field is *, a number, a range a-b,
// a step */n or a-b/n, or a list of those. No seconds field, no
// descriptors (@daily), no TZ= prefix: the zone is the trigger's timeZone.
// When both day fields are restricted a day matching either runs (as in
// cron); when either is *, a day must match both.

// MaxScheduleBytes bounds a schedule's text.
const MaxScheduleBytes = 128

// fieldNames names the five fields, in order, for messages.
var fieldNames = [5]string{"minute", "hour", "day of month", "month", "day of week"}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ScheduleError is why a schedule cannot be read. Field names the field at
// fault ("minute", "hour", "day of month", "month", "day of week"), or is
// empty when the schedule as a whole is at fault (the wrong number of
// fields, a descriptor).
type ScheduleError struct {
	Field  string
	Value  string // the field as written
	Reason string
}

func (e *ScheduleError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return fmt.Sprintf("the %s field %q: %s", e.Field, e.Value, e.Reason)
}

// CronProblem says why a schedule cannot be read, naming the field at
// fault, as a *ScheduleError; nil when it can. A schedule that can be read
// may still never come round (0 0 30 2 *): that is NeverRuns.
func CronProblem(schedule string) error {
	_, err := parseSchedule(schedule)
	return err
}

// parseSchedule reads a schedule with robfig/cron's parser, one field at a
// time first so that an error names its field.
func parseSchedule(schedule string) (s *cron.SpecSchedule, err error) {
	defer func() {
		if r := recover(); r != nil { // the parser's own bugs are a refusal, never a crash
			s, err = nil, &ScheduleError{Reason: "the schedule cannot be read"}
		}
	}()
	switch {
	case len(schedule) > MaxScheduleBytes:
		return nil, &ScheduleError{Reason: fmt.Sprintf("%d bytes, at most %d", len(schedule), MaxScheduleBytes)}
	case strings.TrimSpace(schedule) == "":
		return nil, &ScheduleError{Reason: "empty: want five fields (minute hour day-of-month month day-of-week)"}
	case strings.HasPrefix(strings.TrimSpace(schedule), "@"):
		return nil, &ScheduleError{Reason: fmt.Sprintf("%q: descriptors are not accepted, write the five fields (0 0 * * * for every day at midnight)", clip(schedule))}
	}
	fields := strings.Fields(schedule)
	if len(fields) != 5 {
		return nil, &ScheduleError{Reason: fmt.Sprintf("%d field(s), want five (minute hour day-of-month month day-of-week), no seconds", len(fields))}
	}
	for i, f := range fields {
		if strings.Contains(f, "=") {
			return nil, &ScheduleError{Field: fieldNames[i], Value: f, Reason: "a time zone goes in timeZone, not in the schedule"}
		}
		probe := []string{"*", "*", "*", "*", "*"}
		probe[i] = f
		if _, err := parser.Parse(strings.Join(probe, " ")); err != nil {
			return nil, &ScheduleError{Field: fieldNames[i], Value: f, Reason: fieldReason(i, err)}
		}
	}
	sched, err := parser.Parse(strings.Join(fields, " "))
	if err != nil {
		return nil, &ScheduleError{Reason: err.Error()}
	}
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, &ScheduleError{Reason: "the schedule cannot be read"}
	}
	return spec, nil
}

// fieldReason words the parser's complaint about one field.
func fieldReason(i int, err error) string {
	bounds := [5]string{"0-59", "0-23", "1-31", "1-12 or JAN-DEC", "0-6 or SUN-SAT (Sunday is 0)"}
	msg, _, _ := strings.Cut(err.Error(), ": strconv.") // the parser's words, without Go's
	return fmt.Sprintf("%s; want %s, a range a-b, a step */n, or a list", msg, bounds[i])
}

// clip shortens text quoted in a message.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// loadZone reads an IANA zone name; "" is UTC. "Local" is refused: a
// schedule means the same instants on every machine.
func loadZone(zone string) (*time.Location, error) {
	switch {
	case zone == "":
		return time.UTC, nil
	case zone == "Local" || len(zone) > 64:
		return nil, fmt.Errorf("%q is not an IANA time zone", clip(zone))
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("%q is not a time zone this machine knows (want an IANA name such as Europe/Paris)", clip(zone))
	}
	return loc, nil
}

// NeverRuns reports whether a readable schedule can never come round: a
// day of the month no month it names has (0 0 30 2 *, 0 0 31 4,6 *).
func NeverRuns(schedule string) bool {
	s, err := parseSchedule(schedule)
	return err == nil && never(s)
}

func never(s *cron.SpecSchedule) bool {
	if s.Dow&starBit == 0 && s.Dom&starBit == 0 {
		return s.Dow&allDow == 0 // either day matches: a weekday always comes
	}
	if s.Dom&starBit != 0 {
		return false // every day of the month, restricted only by weekday: each weekday comes every month
	}
	longest := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for m := 1; m <= 12; m++ {
		if s.Month&(1<<m) == 0 {
			continue
		}
		for d := 1; d <= longest[m]; d++ {
			if s.Dom&(1<<d) != 0 {
				return false
			}
		}
	}
	return true
}

const (
	starBit = 1 << 63
	allDow  = 1<<7 - 1
	allHour = 1<<24 - 1
)

// horizon is how far NextRun looks: past eight years, the longest a 29
// February can take to come round (2096 to 2104).
const horizon = 9 * 366

// NextRun is the first instant strictly after `after` at which the
// schedule runs in the zone ("" is UTC), and true; false when it cannot
// tell: the schedule cannot be read, never comes round, or the zone is
// unknown. It never fails and never panics.
//
// The schedule is read against the zone's wall clock, and each wall-clock
// time it names becomes a real instant:
//   - a time the clocks skip (02:30 on a spring-forward night in New York)
//     runs once, at the instant the clocks jump (03:00 there); several
//     skipped times run once together;
//   - a time the clocks pass twice (01:30 on a fall-back night) runs once,
//     the first time — unless the schedule runs in every hour (its hour
//     field is *), which is about the clock ticking, not a time of day: it
//     runs in both passes, so "every 15 minutes" stays every 15 minutes.
func NextRun(schedule, zone string, after time.Time) (time.Time, bool) {
	s, err := parseSchedule(schedule)
	if err != nil || never(s) {
		return time.Time{}, false
	}
	loc, err := loadZone(zone)
	if err != nil {
		return time.Time{}, false
	}
	return next(s, loc, after)
}

// PrevRun is the latest instant at or before `before` at which the
// schedule ran in the zone, by the same rules as NextRun, and true; false
// when it cannot tell. A schedule with catchUp runs this once when the
// agent comes back, if it is later than the last run it knows of.
func PrevRun(schedule, zone string, before time.Time) (time.Time, bool) {
	s, err := parseSchedule(schedule)
	if err != nil || never(s) {
		return time.Time{}, false
	}
	loc, err := loadZone(zone)
	if err != nil {
		return time.Time{}, false
	}
	local := before.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
	everyHour := s.Hour&allHour == allHour
	for range horizon {
		if dayMatches(s, day) {
			for h := 23; h >= 0; h-- {
				if s.Hour&(1<<h) == 0 {
					continue
				}
				if t, ok := lastInHour(s, day, h, loc, before, everyHour); ok {
					return t, true
				}
			}
		}
		day = day.AddDate(0, 0, -1)
	}
	return time.Time{}, false
}

// lastInHour is the latest run at or before `before` in hour h of day.
func lastInHour(s *cron.SpecSchedule, day time.Time, h int, loc *time.Location, before time.Time, everyHour bool) (time.Time, bool) {
	var firsts, seconds []time.Time
	for m := range 60 {
		if s.Minute&(1<<m) == 0 {
			continue
		}
		first, second := instants(day.Year(), day.Month(), day.Day(), h, m, loc)
		firsts = append(firsts, first)
		if everyHour && !second.IsZero() {
			seconds = append(seconds, second)
		}
	}
	all := append(firsts, seconds...) // in order: the first pass, then the second
	for i := len(all) - 1; i >= 0; i-- {
		if !all[i].After(before) {
			return all[i], true
		}
	}
	return time.Time{}, false
}

// next walks the zone's calendar from the day before `after` (a skipped
// time of that day may land after it) and returns the first run after it.
func next(s *cron.SpecSchedule, loc *time.Location, after time.Time) (time.Time, bool) {
	local := after.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	everyHour := s.Hour&allHour == allHour
	for range horizon {
		if dayMatches(s, day) {
			for h := range 24 {
				if s.Hour&(1<<h) == 0 {
					continue
				}
				if t, ok := inHour(s, day, h, loc, after, everyHour); ok {
					return t, true
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}, false
}

// inHour is the first run after `after` in hour h of day: the first pass
// of its minutes, then, for a schedule of every hour, the second pass of a
// repeated hour.
func inHour(s *cron.SpecSchedule, day time.Time, h int, loc *time.Location, after time.Time, everyHour bool) (time.Time, bool) {
	// every instant of the hour is at most its 59th minute's: when that is
	// not after `after`, nothing in the hour is
	if first, second := instants(day.Year(), day.Month(), day.Day(), h, 59, loc); !first.After(after) && !second.After(after) {
		return time.Time{}, false
	}
	var seconds []time.Time
	for m := range 60 {
		if s.Minute&(1<<m) == 0 {
			continue
		}
		first, second := instants(day.Year(), day.Month(), day.Day(), h, m, loc)
		if first.After(after) {
			return first, true
		}
		if everyHour && !second.IsZero() {
			seconds = append(seconds, second)
		}
	}
	for _, t := range seconds {
		if t.After(after) {
			return t, true
		}
	}
	return time.Time{}, false
}

// dayMatches is cron's day rule on a calendar date: the month must match;
// with both day fields restricted either may match, otherwise both must.
func dayMatches(s *cron.SpecSchedule, day time.Time) bool {
	if s.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(day.Day())) != 0
	dow := s.Dow&(1<<uint(day.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// instants is when a wall-clock time happens in loc: first is the earliest
// instant showing it, second a later one when the clocks pass it twice
// (else zero). A time the clocks skip happens at the instant they jump.
func instants(y int, mo time.Month, d, h, mi int, loc *time.Location) (first, second time.Time) {
	wall := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	t := time.Date(y, mo, d, h, mi, 0, 0, loc)
	var found []time.Time
	try := func(u time.Time) {
		if u.IsZero() {
			return
		}
		_, off := u.Zone()
		c := wall.Add(-time.Duration(off) * time.Second).In(loc)
		if sameWall(c, wall) {
			for _, f := range found {
				if f.Equal(c) {
					return
				}
			}
			found = append(found, c)
		}
	}
	start, end := t.ZoneBounds()
	try(t)
	if !start.IsZero() {
		try(start.Add(-time.Second))
	}
	try(end)
	switch len(found) {
	case 0: // skipped: the instant the clocks jump over it
		if local := t.In(loc); wallAfter(local, wall) {
			return start, time.Time{}
		}
		return end, time.Time{}
	case 1:
		return found[0], time.Time{}
	}
	if found[1].Before(found[0]) {
		found[0], found[1] = found[1], found[0]
	}
	return found[0], found[1]
}

func sameWall(t, wall time.Time) bool {
	return t.Year() == wall.Year() && t.Month() == wall.Month() && t.Day() == wall.Day() &&
		t.Hour() == wall.Hour() && t.Minute() == wall.Minute()
}

// wallAfter reports whether t's wall clock reads later than wall's.
func wallAfter(t, wall time.Time) bool {
	tw := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
	return tw.After(wall)
}

// Describe writes a schedule's common shapes in words — "Every weekday at
// 09:30", "Every day at 07:00", "Every 15 minutes", "Every Monday at
// 08:00", "At 00:00 on day 1 of every month" — and hands anything else
// back as written.
func Describe(schedule string) string {
	if _, err := parseSchedule(schedule); err != nil {
		return schedule
	}
	f := strings.Fields(schedule)
	min, hour, dom, month, dow := f[0], f[1], f[2], f[3], f[4]
	m, mOK := number(min, 59)
	h, hOK := number(hour, 23)
	at := fmt.Sprintf("%02d:%02d", h, m)
	switch {
	case month != "*":
	case hour == "*" && dom == "*" && dow == "*":
		switch {
		case min == "*" || min == "*/1":
			return "Every minute"
		case strings.HasPrefix(min, "*/"):
			if n, ok := number(min[2:], 59); ok {
				return fmt.Sprintf("Every %d minutes", n)
			}
		case mOK && m == 0:
			return "Every hour"
		case mOK:
			return fmt.Sprintf("Every hour at %d minutes past", m)
		}
	case mOK && strings.HasPrefix(hour, "*/") && dom == "*" && dow == "*":
		if n, ok := number(hour[2:], 23); ok {
			switch {
			case n == 1 && m == 0:
				return "Every hour"
			case n == 1:
				return fmt.Sprintf("Every hour at %d minutes past", m)
			case m == 0:
				return fmt.Sprintf("Every %d hours", n)
			}
			return fmt.Sprintf("Every %d hours at %d minutes past", n, m)
		}
	case !mOK || !hOK:
	case dom == "*" && dow == "*":
		return "Every day at " + at
	case dom == "*":
		if days := weekdays(dow); days != "" {
			return "Every " + days + " at " + at
		}
	case dow == "*":
		if d, ok := number(dom, 31); ok && d >= 1 {
			return fmt.Sprintf("At %s on day %d of every month", at, d)
		}
	}
	return schedule
}

// number reads a plain decimal number up to max.
func number(s string, max int) (int, bool) {
	if s == "" || len(s) > 2 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n <= max
}

var dayNames = [7]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// weekdays words a day-of-week field: "weekday", "weekend day", "Monday",
// "Monday and Thursday"; "" for anything else.
func weekdays(dow string) string {
	switch strings.ToUpper(dow) {
	case "1-5", "MON-FRI":
		return "weekday"
	case "0,6", "6,0", "SAT,SUN", "SUN,SAT":
		return "weekend day"
	}
	var names []string
	for _, part := range strings.Split(dow, ",") {
		i := dayIndex(part)
		if i < 0 {
			return ""
		}
		names = append(names, dayNames[i])
	}
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return ""
}

func dayIndex(s string) int {
	if n, ok := number(s, 6); ok {
		return n
	}
	for i, d := range dayNames {
		if strings.EqualFold(s, d[:3]) {
			return i
		}
	}
	return -1
}
