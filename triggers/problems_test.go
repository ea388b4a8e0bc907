package triggers

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/symphonix/symphonix/flow"
)

// parsed reads a trigger file from JSON, as Load does.
func parsed(t *testing.T, content string) *File {
	t.Helper()
	f, err := parseFile([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// reportFlow has a required input (topic), one with a default (limit),
// and two outputs.
const reportFlow = `{"version": "0.7", "start": "a", "inputs": ["topic", "limit"], "outputs": ["report", "rows"],
 "state": {"topic": {"type": "string"}, "limit": {"type": "number", "default": 10},
           "report": {"type": "string"}, "rows": {"type": "list"}},
 "nodes": [{"id": "a", "handler": "h"}], "edges": [{"from": "a", "to": "__end__"}]}`

// merged is the object base with the keys of ", k: v, ..." set over it.
func merged(t *testing.T, base, extra string) string {
	t.Helper()
	var m, over map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte("{"+strings.TrimPrefix(extra, ",")+"}"), &over); err != nil {
		t.Fatal(err)
	}
	maps.Copy(m, over)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func loadFlow(t *testing.T, text string) *flow.Flow {
	t.Helper()
	fl, err := flow.Load([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func TestProblemsValid(t *testing.T) {
	f := parsed(t, `{"flow": "flow.json", "triggers": [
	  {"id": "morning", "kind": "schedule", "schedule": "30 9 * * 1-5", "timeZone": "Europe/Paris", "catchUp": true,
	   "input": {"topic": "The day of {{time.date}} ({{trigger.id}})", "limit": "{{time.unix}}"},
	   "deliver": {"urlEnv": "SLACK_URL", "body": {"text": "{{table}}", "blocks": [{"t": "{{outputs.report}}"}]}}},
	  {"id": "deploy_2", "kind": "webhook", "method": "PUT", "path": "/hooks/deploy.v2", "secret": "DEPLOY_SECRET",
	   "overlap": "queue", "queueLimit": 100, "input": {"topic": "{{body.repo.name}} by {{query.who}} via {{method}} {{path}}"},
	   "deliver": {"urlEnv": "HOOK_URL", "attempts": 10}},
	  {"id": "plain", "kind": "webhook", "path": "/x", "input": {"topic": "{{body}}"}}
	]}`)
	for _, fl := range []*flow.Flow{nil, loadFlow(t, reportFlow)} {
		if ps := Problems(f, fl); len(ps) != 0 {
			t.Errorf("Problems(valid, flow %v) = %v", fl != nil, ps)
		}
	}
}

func TestProblems(t *testing.T) {
	trig := func(body string) string { return `{"flow": "flow.json", "triggers": [` + body + `]}` }
	// sched and hook are a valid trigger with some keys set over
	sched := func(extra string) string {
		return trig(merged(t, `{"id": "s", "kind": "schedule", "schedule": "0 9 * * *", "input": {"topic": "x"}}`, extra))
	}
	hook := func(extra string) string {
		return trig(merged(t, `{"id": "w", "kind": "webhook", "path": "/w", "input": {"topic": "x"}}`, extra))
	}
	many := make([]string, MaxTriggers+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"id": "t%d", "kind": "webhook", "path": "/p%d", "input": {"topic": "x"}}`, i, i)
	}
	fl := loadFlow(t, reportFlow)
	for _, c := range []struct {
		name, file string
		withFlow   bool
		code, path string
		says       string
	}{
		{"no flow", `{"triggers": []}`, false, CodeFlowMissing, "flow", "names no flow"},
		{"flow outside", `{"flow": "../x.json"}`, false, CodeFlowPathInvalid, "flow", "leaves"},
		{"flow absolute", `{"flow": "/etc/x.json"}`, false, CodeFlowPathInvalid, "flow", "absolute"},
		{"too many", trig(strings.Join(many, ",")), false, CodeTooManyTriggers, "triggers", "at most 64"},
		{"id missing", trig(`{"kind": "webhook", "path": "/w"}`), false, CodeIDMissing, "triggers[0].id", "no id"},
		{"id invalid", trig(`{"id": "a b", "kind": "webhook", "path": "/w"}`), false, CodeIDInvalid, "triggers[0].id", "letters, digits"},
		{"id too long", trig(`{"id": "` + strings.Repeat("a", 65) + `", "kind": "webhook", "path": "/w"}`), false, CodeIDInvalid, "triggers[0].id", "1 to 64"},
		{"id duplicate", trig(`{"id": "a", "kind": "webhook", "path": "/w"}, {"id": "a", "kind": "webhook", "path": "/v"}`), false, CodeIDDuplicate, "triggers[1].id", "triggers[0]"},
		{"kind missing", trig(`{"id": "a"}`), false, CodeKindMissing, "triggers[0].kind", "no kind"},
		{"kind unknown", trig(`{"id": "a", "kind": "email"}`), false, CodeKindUnknown, "triggers[0].kind", `"email"`},
		{"schedule missing", trig(`{"id": "a", "kind": "schedule"}`), false, CodeScheduleMissing, "triggers[0].schedule", "five fields"},
		{"schedule invalid names the field", sched(`, "schedule": "0 25 * * *"`), false, CodeScheduleInvalid, "triggers[0].schedule", "the hour field"},
		{"schedule with seconds", trig(`{"id": "a", "kind": "schedule", "schedule": "0 0 9 * * *"}`), false, CodeScheduleInvalid, "triggers[0].schedule", "want five"},
		{"schedule never", trig(`{"id": "a", "kind": "schedule", "schedule": "0 0 30 2 *"}`), false, CodeScheduleNever, "triggers[0].schedule", "never comes round"},
		{"zone unknown", sched(`, "timeZone": "Europe/Atlantis"`), false, CodeTimeZoneUnknown, "triggers[0].timeZone", "Europe/Atlantis"},
		{"zone Local", sched(`, "timeZone": "Local"`), false, CodeTimeZoneUnknown, "triggers[0].timeZone", "Local"},
		{"schedule with a path", sched(`, "path": "/x"`), false, CodeFieldMisplace, "triggers[0].path", "a schedule trigger has no path"},
		{"schedule with a secret", sched(`, "secret": "S"`), false, CodeFieldMisplace, "triggers[0].secret", "no secret"},
		{"webhook with a schedule", hook(`, "schedule": "* * * * *"`), false, CodeFieldMisplace, "triggers[0].schedule", "a webhook trigger has no schedule"},
		{"webhook with catchUp", hook(`, "catchUp": true`), false, CodeFieldMisplace, "triggers[0].catchUp", "no catchUp"},
		{"path missing", trig(`{"id": "a", "kind": "webhook"}`), false, CodePathMissing, "triggers[0].path", "no path"},
		{"path relative", hook(`, "path": "w"`), false, CodePathInvalid, "triggers[0].path", `"w"`},
		{"path with a query", hook(`, "path": "/w?x=1"`), false, CodePathInvalid, "triggers[0].path", "no query"},
		{"path with dot-dot", hook(`, "path": "/a/../b"`), false, CodePathInvalid, "triggers[0].path", ".."},
		{"path trailing slash", hook(`, "path": "/a/"`), false, CodePathInvalid, "triggers[0].path", "trailing"},
		{"path root", hook(`, "path": "/"`), false, CodePathInvalid, "triggers[0].path", "segments"},
		{"path too long", hook(`, "path": "/` + strings.Repeat("a", MaxWebhookPath) + `"`), false, CodePathInvalid, "triggers[0].path", "at most 256"},
		{"path duplicate", trig(`{"id": "a", "kind": "webhook", "path": "/w"}, {"id": "b", "kind": "webhook", "path": "/w", "method": "PUT"}`), false, CodePathDuplicate, "triggers[1].path", "triggers[0]"},
		{"method lower case", hook(`, "method": "post"`), false, CodeMethodInvalid, "triggers[0].method", "in capitals"},
		{"method unknown", hook(`, "method": "DELETE"`), false, CodeMethodInvalid, "triggers[0].method", "POST, PUT, PATCH, GET"},
		{"secret is a value", hook(`, "secret": "s3cr3t-value!"`), false, CodeSecretNameValid, "triggers[0].secret", "never the secret itself"},
		{"overlap unknown", hook(`, "overlap": "parallel"`), false, CodeOverlapUnknown, "triggers[0].overlap", `"parallel"`},
		{"queue limit high", hook(`, "overlap": "queue", "queueLimit": 101`), false, CodeQueueLimit, "triggers[0].queueLimit", "1 to 100"},
		{"queue limit negative", hook(`, "overlap": "queue", "queueLimit": -1`), false, CodeQueueLimit, "triggers[0].queueLimit", "1 to 100"},
		{"queue limit without queue", hook(`, "queueLimit": 3`), false, CodeFieldMisplace, "triggers[0].queueLimit", "only with overlap"},
		{"url env missing", hook(`, "deliver": {"attempts": 2}`), false, CodeURLEnvMissing, "triggers[0].deliver.urlEnv", "no urlEnv"},
		{"url env is a URL", hook(`, "deliver": {"urlEnv": "https://hooks.slack.com/x"}`), false, CodeURLEnvInvalid, "triggers[0].deliver.urlEnv", "never the URL itself"},
		{"attempts", hook(`, "deliver": {"urlEnv": "U", "attempts": 11}`), false, CodeAttemptsRange, "triggers[0].deliver.attempts", "1 to 10"},
		{"body reads headers", hook(`, "deliver": {"urlEnv": "U", "body": {"a": ["{{headers.authorization}}"]}}`), false, CodeDeliveryReadsWrong, "triggers[0].deliver.body.a[0]", "headers are never offered"},
		{"body reads an output the flow has not", hook(`, "deliver": {"urlEnv": "U", "body": "{{outputs.summary}}"}`), true, CodeDeliveryReadsWrong, "triggers[0].deliver.body", `"summary" is not one of the flow's outputs`},
		{"body reads a schedule's body", sched(`, "deliver": {"urlEnv": "U", "body": "{{body.x}}"}`), false, CodeDeliveryReadsWrong, "triggers[0].deliver.body", "no body"},

		{"reads headers", hook(`, "input": {"topic": "{{headers.x-token}}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "headers are never offered"},
		{"schedule reads a body", sched(`, "input": {"topic": "{{body.text}}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "a schedule occurs without a request"},
		{"reads an unknown time field", sched(`, "input": {"topic": "{{time.year}}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "time offers iso, date"},
		{"reads below a method", hook(`, "input": {"topic": "{{method.name}}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "method is text"},
		{"reads below a query value", hook(`, "input": {"topic": "{{query.a.b}}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "query value is text"},
		{"reads the delivery's table", sched(`, "input": {"topic": "{{table}}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "not table"},
		{"reads nothing", sched(`, "input": {"topic": "{{ }}"}`), false, CodeInputReadsUnknown, "triggers[0].input.topic", "reads nothing"},
		{"reads deep", hook(`, "input": {"topic": {"a": [1, "{{state.x}}"]}}`), false, CodeInputReadsUnknown, "triggers[0].input.topic.a[1]", "not state"},
		{"input unknown", sched(`, "input": {"topic": "x", "subject": "y"}`), true, CodeInputUnknown, "triggers[0].input.subject", "not one of the flow's inputs (topic, limit)"},
		{"input missing", sched(`, "input": {"limit": 3}`), true, CodeInputMissing, "triggers[0].input", "topic"},
		{"input wrong type: literal", sched(`, "input": {"topic": "x", "limit": "ten"}`), true, CodeInputWrongType, "triggers[0].input.limit", "a number"},
		{"input wrong type: template", sched(`, "input": {"topic": "x", "limit": "{{time.unix}} s"}`), true, CodeInputWrongType, "triggers[0].input.limit", "fills as a string"},
		{"input wrong type: placeholder", sched(`, "input": {"topic": "{{time}}"}`), true, CodeInputWrongType, "triggers[0].input.topic", "fills as an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f *flow.Flow
			if c.withFlow {
				f = fl
			}
			ps := Problems(parsed(t, c.file), f)
			i := slices.IndexFunc(ps, func(p Problem) bool { return p.Code == c.code && p.Path == c.path })
			if i < 0 || !strings.Contains(ps[i].Message, c.says) {
				t.Fatalf("Problems = %v\nwant %s at %s saying %q", ps, c.code, c.path, c.says)
			}
			if !slices.Contains(Codes, c.code) {
				t.Errorf("%s is not in Codes", c.code)
			}
		})
	}
}

// TestProblemsEvery: every problem is reported, not the first only, and
// flow checks are skipped without the flow.
func TestProblemsEvery(t *testing.T) {
	f := parsed(t, `{"flow": "", "triggers": [
	  {"id": "a", "kind": "schedule", "schedule": "61 * * * *", "timeZone": "Nowhere/Else", "input": {"nope": "{{headers}}"}},
	  {"id": "a", "kind": "webhook", "path": "x", "method": "get", "overlap": "some"}
	]}`)
	var codes []string
	for _, p := range Problems(f, nil) {
		codes = append(codes, p.Code)
	}
	want := []string{CodeFlowMissing, CodeScheduleInvalid, CodeTimeZoneUnknown, CodeInputReadsUnknown,
		CodeIDDuplicate, CodePathInvalid, CodeMethodInvalid, CodeOverlapUnknown}
	if !slices.Equal(codes, want) {
		t.Errorf("codes = %v\nwant    %v", codes, want)
	}
	for _, p := range Problems(f, loadFlow(t, reportFlow)) {
		if p.Code == CodeInputUnknown && p.Path == "triggers[0].input.nope" {
			return
		}
	}
	t.Error("with the flow, input.nope is not reported unknown")
}

// TestCodesDocumented: every code is in docs/triggers.md, where a person
// reads what it means.
func TestCodesDocumented(t *testing.T) {
	doc := readDoc(t)
	for _, code := range append(slices.Clone(Codes), CodeFileUnreadable, CodeFlowUnreadable, CodeInvalidFile) {
		if !strings.Contains(doc, "`"+code+"`") {
			t.Errorf("docs/triggers.md does not describe %s", code)
		}
	}
}
