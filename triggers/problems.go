package triggers

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// Problem is one thing wrong with a trigger file: Code is stable and one
// of the Code… constants below, Message is for a person, Path names the
// thing at fault ("triggers[2].schedule") so an editor can show it where
// it belongs. It is the flow's own problem type, so a trigger file's
// problems read like its flow's.
type Problem = flow.Problem

// The codes a Problem can carry. docs/triggers.md says when each is
// raised. A code, once published, is never renamed or reused.
const (
	// The file.
	CodeFlowMissing     = "FLOW_MISSING"      // "flow" is absent or empty
	CodeFlowPathInvalid = "FLOW_PATH_INVALID" // absolute, or leaving the file's folder
	CodeTooManyTriggers = "TOO_MANY_TRIGGERS" // more than MaxTriggers

	// Every trigger.
	CodeIDMissing     = "TRIGGER_ID_MISSING"
	CodeIDInvalid     = "TRIGGER_ID_INVALID" // not 1 to 64 of letters, digits, '-' and '_'
	CodeIDDuplicate   = "TRIGGER_ID_DUPLICATE"
	CodeKindMissing   = "TRIGGER_KIND_MISSING"
	CodeKindUnknown   = "TRIGGER_KIND_UNKNOWN"
	CodeFieldMisplace = "FIELD_MISPLACED" // a field for another kind (a webhook's schedule), or queueLimit without queue

	// Schedules.
	CodeScheduleMissing = "SCHEDULE_MISSING"
	CodeScheduleInvalid = "SCHEDULE_INVALID" // the message names the cron field at fault
	CodeScheduleNever   = "SCHEDULE_NEVER_RUNS"
	CodeTimeZoneUnknown = "TIME_ZONE_UNKNOWN"

	// Webhooks.
	CodePathMissing     = "WEBHOOK_PATH_MISSING"
	CodePathInvalid     = "WEBHOOK_PATH_INVALID"
	CodePathDuplicate   = "WEBHOOK_PATH_DUPLICATE"
	CodeMethodInvalid   = "WEBHOOK_METHOD_INVALID"
	CodeSecretNameValid = "SECRET_NAME_INVALID" // not an environment variable's name

	// The input mapping.
	CodeInputUnknown      = "INPUT_UNKNOWN"       // not one of the flow's inputs
	CodeInputMissing      = "INPUT_MISSING"       // an input the flow has no default for, not mapped
	CodeInputReadsUnknown = "INPUT_READS_UNKNOWN" // a placeholder reading what an occurrence never offers
	CodeInputWrongType    = "INPUT_WRONG_TYPE"    // a value that can only fill as another type than the input's channel

	// Overlap.
	CodeOverlapUnknown = "OVERLAP_UNKNOWN"
	CodeQueueLimit     = "QUEUE_LIMIT_OUT_OF_RANGE"

	// Delivery.
	CodeURLEnvMissing      = "DELIVERY_URL_ENV_MISSING"
	CodeURLEnvInvalid      = "DELIVERY_URL_ENV_INVALID"
	CodeAttemptsRange      = "DELIVERY_ATTEMPTS_OUT_OF_RANGE"
	CodeDeliveryReadsWrong = "DELIVERY_BODY_READS_UNKNOWN"
)

// Codes lists every code a Problem can carry.
var Codes = []string{
	CodeFlowMissing, CodeFlowPathInvalid, CodeTooManyTriggers,
	CodeIDMissing, CodeIDInvalid, CodeIDDuplicate, CodeKindMissing, CodeKindUnknown, CodeFieldMisplace,
	CodeScheduleMissing, CodeScheduleInvalid, CodeScheduleNever, CodeTimeZoneUnknown,
	CodePathMissing, CodePathInvalid, CodePathDuplicate, CodeMethodInvalid, CodeSecretNameValid,
	CodeInputUnknown, CodeInputMissing, CodeInputReadsUnknown, CodeInputWrongType,
	CodeOverlapUnknown, CodeQueueLimit,
	CodeURLEnvMissing, CodeURLEnvInvalid, CodeAttemptsRange, CodeDeliveryReadsWrong,
}

// Bounds and defaults of a trigger file.
const (
	// MaxTriggers bounds the triggers of one file.
	MaxTriggers = 64
	// MaxWebhookPath bounds a webhook's path.
	MaxWebhookPath = 256
	// MaxEnvName bounds the name of an environment variable (secret,
	// urlEnv).
	MaxEnvName = 128
	// DefaultQueueLimit and MaxQueueLimit: how many occurrences may wait
	// with overlap "queue".
	DefaultQueueLimit = 10
	MaxQueueLimit     = 100
	// DefaultAttempts and MaxAttempts: how many times a delivery is tried.
	DefaultAttempts = 5
	MaxAttempts     = 10
)

// WebhookMethods are the methods a webhook may answer.
var WebhookMethods = []string{"POST", "PUT", "PATCH", "GET"}

// HTTPMethod is the method a webhook answers: its Method, POST when empty.
func (t Trigger) HTTPMethod() string {
	if t.Method == "" {
		return "POST"
	}
	return t.Method
}

// Zone is the IANA zone a schedule runs in: its TimeZone, UTC when empty.
func (t Trigger) Zone() string {
	if t.TimeZone == "" {
		return "UTC"
	}
	return t.TimeZone
}

// OverlapPolicy is the trigger's Overlap, skip when empty.
func (t Trigger) OverlapPolicy() Overlap {
	if t.Overlap == "" {
		return OverlapSkip
	}
	return t.Overlap
}

// QueueSize is how many occurrences may wait with overlap "queue": its
// QueueLimit, DefaultQueueLimit when zero.
func (t Trigger) QueueSize() int {
	if t.QueueLimit == 0 {
		return DefaultQueueLimit
	}
	return t.QueueLimit
}

// Tries is how many times a delivery is tried: its Attempts,
// DefaultAttempts when zero.
func (d Delivery) Tries() int {
	if d.Attempts == 0 {
		return DefaultAttempts
	}
	return d.Attempts
}

var (
	triggerID   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	envName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	webhookPath = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)
)

// Problems is everything wrong with a trigger file, each with the path of
// the thing at fault; empty when nothing is. Given the flow the file
// names, it also checks each input mapping against the flow's inputs; with
// fl nil, those checks are skipped. It is the one check: the runtime
// refuses a file it finds anything wrong with before arming anything.
func Problems(f *File, fl *flow.Flow) []Problem {
	c := &checker{f: f, fl: fl}
	c.file()
	return c.out
}

type checker struct {
	f   *File
	fl  *flow.Flow
	out []Problem
}

func (c *checker) add(code, path, format string, args ...any) {
	c.out = append(c.out, Problem{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) file() {
	f := c.f
	if f == nil {
		c.add(CodeFlowMissing, "flow", "there is no trigger file")
		return
	}
	switch msg := flowPathProblem(f.Flow); {
	case strings.TrimSpace(f.Flow) == "":
		c.add(CodeFlowMissing, "flow", "%s", msg)
	case msg != "":
		c.add(CodeFlowPathInvalid, "flow", "%s", msg)
	}
	if len(f.Triggers) > MaxTriggers {
		c.add(CodeTooManyTriggers, "triggers", "%d triggers, at most %d in one file", len(f.Triggers), MaxTriggers)
	}
	ids := map[string]int{}
	paths := map[string]int{}
	for i, t := range f.Triggers {
		p := fmt.Sprintf("triggers[%d]", i)
		switch {
		case t.ID == "":
			c.add(CodeIDMissing, p+".id", "the trigger has no id: give it one to name it in reports and on the board")
		case !triggerID.MatchString(t.ID):
			c.add(CodeIDInvalid, p+".id", "%q: want 1 to 64 of letters, digits, '-' and '_'", clip(t.ID))
		default:
			if j, dup := ids[t.ID]; dup {
				c.add(CodeIDDuplicate, p+".id", "%q is also triggers[%d]'s id: each trigger's id is its own", t.ID, j)
			} else {
				ids[t.ID] = i
			}
		}
		switch t.Kind {
		case KindSchedule:
			c.schedule(p, t)
		case KindWebhook:
			c.webhook(p, t, i, paths)
		case "":
			c.add(CodeKindMissing, p+".kind", "the trigger has no kind: want %q or %q", KindSchedule, KindWebhook)
		default:
			c.add(CodeKindUnknown, p+".kind", "%q: want %q or %q", clip(string(t.Kind)), KindSchedule, KindWebhook)
		}
		c.overlap(p, t)
		if t.Kind == KindSchedule || t.Kind == KindWebhook {
			c.input(p, t)
		}
		if t.Deliver != nil {
			c.delivery(p+".deliver", t)
		}
	}
}

func (c *checker) misplaced(p string, t Trigger, fields map[string]bool) {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if fields[name] {
			c.add(CodeFieldMisplace, p+"."+name, "a %s trigger has no %s", t.Kind, name)
		}
	}
}

func (c *checker) schedule(p string, t Trigger) {
	c.misplaced(p, t, map[string]bool{"method": t.Method != "", "path": t.Path != "", "secret": t.Secret != ""})
	switch err := CronProblem(t.Schedule); {
	case strings.TrimSpace(t.Schedule) == "":
		c.add(CodeScheduleMissing, p+".schedule", "the schedule has no cron schedule: want five fields, such as \"30 9 * * 1-5\"")
	case err != nil:
		c.add(CodeScheduleInvalid, p+".schedule", "%v", err)
	case NeverRuns(t.Schedule):
		c.add(CodeScheduleNever, p+".schedule", "%q never comes round: no month it names has that day", t.Schedule)
	}
	if _, err := loadZone(t.TimeZone); err != nil {
		c.add(CodeTimeZoneUnknown, p+".timeZone", "%v", err)
	}
}

func (c *checker) webhook(p string, t Trigger, i int, paths map[string]int) {
	c.misplaced(p, t, map[string]bool{"schedule": t.Schedule != "", "timeZone": t.TimeZone != "", "catchUp": t.CatchUp})
	switch {
	case t.Path == "":
		c.add(CodePathMissing, p+".path", "the webhook has no path: want one such as \"/hooks/deploy\"")
	case len(t.Path) > MaxWebhookPath:
		c.add(CodePathInvalid, p+".path", "%d bytes, at most %d", len(t.Path), MaxWebhookPath)
	case !webhookPath.MatchString(t.Path) || strings.Contains(t.Path+"/", "/./") || strings.Contains(t.Path+"/", "/../"):
		c.add(CodePathInvalid, p+".path", "%q: want \"/\" and segments of letters, digits, '.', '_', '~' and '-' (no query, no trailing \"/\", no \".\" or \"..\")", clip(t.Path))
	default:
		if j, dup := paths[t.Path]; dup {
			c.add(CodePathDuplicate, p+".path", "%q is also triggers[%d]'s path: one path starts one trigger", t.Path, j)
		} else {
			paths[t.Path] = i
		}
	}
	if t.Method != "" && !slices.Contains(WebhookMethods, t.Method) {
		c.add(CodeMethodInvalid, p+".method", "%q: want one of %s, in capitals (POST when empty)", clip(t.Method), strings.Join(WebhookMethods, ", "))
	}
	if t.Secret != "" {
		if msg := envNameProblem(t.Secret); msg != "" {
			c.add(CodeSecretNameValid, p+".secret", "%s: secret names the environment variable holding the secret, never the secret itself", msg)
		}
	}
}

// envNameProblem says why s is not an environment variable's name.
func envNameProblem(s string) string {
	switch {
	case len(s) > MaxEnvName:
		return fmt.Sprintf("%d bytes, at most %d", len(s), MaxEnvName)
	case !envName.MatchString(s):
		return fmt.Sprintf("%q is not an environment variable's name (letters, digits and '_', not starting with a digit)", clip(s))
	}
	return ""
}

func (c *checker) overlap(p string, t Trigger) {
	switch t.Overlap {
	case "", OverlapSkip, OverlapQueue:
	default:
		c.add(CodeOverlapUnknown, p+".overlap", "%q: want %q (the default) or %q", clip(string(t.Overlap)), OverlapSkip, OverlapQueue)
	}
	switch {
	case t.QueueLimit < 0 || t.QueueLimit > MaxQueueLimit:
		c.add(CodeQueueLimit, p+".queueLimit", "%d: want 1 to %d (%d when not given)", t.QueueLimit, MaxQueueLimit, DefaultQueueLimit)
	case t.QueueLimit != 0 && t.Overlap != OverlapQueue:
		c.add(CodeFieldMisplace, p+".queueLimit", "queueLimit applies only with overlap %q", OverlapQueue)
	}
}

// input checks the mapping: what it reads, and with the flow, that it
// names the flow's inputs, every input without a default, and values of
// each input's type.
func (c *checker) input(p string, t Trigger) {
	o := offerFor(t.Kind, false)
	for _, name := range slices.Sorted(maps.Keys(t.Input)) {
		ip := join(p+".input", name)
		walkStrings(t.Input[name], ip, func(at, s string) {
			for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
				if msg := readProblem(strings.TrimSpace(m[1]), o, t.Kind); msg != "" {
					c.add(CodeInputReadsUnknown, at, "%s", msg)
				}
			}
		})
	}
	fl := c.fl
	if fl == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(t.Input)) {
		ip := join(p+".input", name)
		if !slices.Contains(fl.Inputs, name) {
			if len(fl.Inputs) == 0 {
				c.add(CodeInputUnknown, ip, "%q: the flow names no inputs", name)
			} else {
				c.add(CodeInputUnknown, ip, "%q is not one of the flow's inputs (%s)", name, strings.Join(fl.Inputs, ", "))
			}
			continue
		}
		typ := ""
		if ch := fl.State[name]; ch != nil {
			typ = ch.Type
		}
		if got := staticKind(t.Input[name]); got != "" && got != "null" && !flow.Fits(typ, sample(got)) {
			c.add(CodeInputWrongType, ip, "the input %q is %s, and this always fills as %s", name, article(typ), article(got))
		}
	}
	var missing []string
	for _, name := range fl.Inputs {
		if _, ok := t.Input[name]; !ok && required(fl, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		c.add(CodeInputMissing, p+".input", "the flow's input(s) %s have no default and are not mapped: map them from what the %s offers", strings.Join(missing, ", "), t.Kind)
	}
}

// article puts "a" or "an" before a channel type.
func article(typ string) string {
	if typ == flow.ChannelObject {
		return "an " + typ
	}
	return "a " + typ
}

// required reports whether a flow input has no default, so a run cannot
// start without it.
func required(fl *flow.Flow, name string) bool {
	ch := fl.State[name]
	return ch == nil || len(ch.Default) == 0 || string(ch.Default) == "null"
}

func (c *checker) delivery(p string, t Trigger) {
	d := t.Deliver
	switch {
	case d.URLEnv == "":
		c.add(CodeURLEnvMissing, p+".urlEnv", "the delivery names no urlEnv: the environment variable holding the URL to post to")
	default:
		if msg := envNameProblem(d.URLEnv); msg != "" {
			c.add(CodeURLEnvInvalid, p+".urlEnv", "%s: urlEnv names the environment variable holding the URL, never the URL itself", msg)
		}
	}
	if d.Attempts < 0 || d.Attempts > MaxAttempts {
		c.add(CodeAttemptsRange, p+".attempts", "%d: want 1 to %d (%d when not given)", d.Attempts, MaxAttempts, DefaultAttempts)
	}
	if t.Kind != KindSchedule && t.Kind != KindWebhook {
		return
	}
	o := offerFor(t.Kind, true)
	walkStrings(d.Body, p+".body", func(at, s string) {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			path := strings.TrimSpace(m[1])
			msg := readProblem(path, o, t.Kind)
			if msg == "" && c.fl != nil && len(c.fl.Outputs) > 0 {
				msg = outputProblem(path, c.fl.Outputs)
			}
			if msg != "" {
				c.add(CodeDeliveryReadsWrong, at, "%s", msg)
			}
		}
	})
}

// outputProblem says why a placeholder reads an output the flow does not
// name, "" when it does not.
func outputProblem(path string, outputs []string) string {
	rest, ok := strings.CutPrefix(path, readOutputs+".")
	if !ok {
		return ""
	}
	name := rest
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		name = rest[:i]
	}
	if slices.Contains(outputs, name) {
		return ""
	}
	return fmt.Sprintf("{{%s}}: %q is not one of the flow's outputs (%s)", path, name, strings.Join(outputs, ", "))
}
