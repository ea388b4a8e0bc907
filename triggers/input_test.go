package triggers

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
)

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/triggers.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMapInputSchedule(t *testing.T) {
	tr := Trigger{ID: "morning", Kind: KindSchedule, TimeZone: "Europe/Paris", Input: map[string]any{
		"topic": "Report for {{time.date}} at {{time.time}}",
		"when":  "{{time}}",
		"unix":  "{{time.unix}}",
		"who":   map[string]any{"trigger": "{{trigger.id}}", "kinds": []any{"{{trigger.kind}}", 2.0}},
		"fixed": true,
	}}
	at := utc(t, "2026-03-02T08:30:00Z") // a Monday, 09:30 in Paris
	// what the occurrence claims about itself is not believed: the trigger says
	got, err := MapInput(tr, Occurrence{Trigger: "other", Kind: KindWebhook, TimeZone: "Asia/Tokyo", Body: map[string]any{"x": 1.0}}, at)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"topic": "Report for 2026-03-02 at 09:30",
		"when": map[string]any{"iso": "2026-03-02T09:30:00+01:00", "date": "2026-03-02", "time": "09:30",
			"unix": float64(at.Unix()), "zone": "Europe/Paris", "weekday": "Monday"},
		"unix":  float64(at.Unix()),
		"who":   map[string]any{"trigger": "morning", "kinds": []any{"schedule", 2.0}},
		"fixed": true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("MapInput =\n%#v\nwant\n%#v", got, want)
	}
}

func TestMapInputWebhook(t *testing.T) {
	tr := Trigger{ID: "deploy", Kind: KindWebhook, Path: "/hooks/deploy", Input: map[string]any{
		"topic":  "{{body.repo.name}}@{{query.ref}} ({{method}} {{path}})",
		"commit": "{{body.commits[1].id}}",
		"count":  "{{body.count}}",
		"body":   "{{body}}",
		"query":  "{{query}}",
	}}
	var body any
	if err := json.Unmarshal([]byte(`{"repo": {"name": "site"}, "commits": [{"id": "a1"}, {"id": "b2"}], "count": 2}`), &body); err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery("ref=main&ref=dev&x=1")
	got, err := MapInput(tr, Occurrence{Method: "POST", Path: "/hooks/deploy", Query: QueryOf(q), Body: body}, utc(t, "2026-03-02T08:30:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"topic":  "site@main (POST /hooks/deploy)",
		"commit": "b2",
		"count":  2.0, // a lone placeholder passes the value: a number stays a number
		"body":   body,
		"query":  map[string]any{"ref": "main", "x": "1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("MapInput =\n%#v\nwant\n%#v", got, want)
	}
}

func TestMapInputNothing(t *testing.T) {
	at := utc(t, "2026-03-02T08:30:00Z")
	for _, c := range []struct {
		name  string
		input map[string]any
		body  any
		says  string
	}{
		{"lone placeholder reading nothing", map[string]any{"topic": "{{body.missing}}"}, map[string]any{}, "input.topic: filled as nothing: this occurrence has nothing at body.missing"},
		{"a null in the body", map[string]any{"topic": "{{body.x}}"}, map[string]any{"x": nil}, "input.topic"},
		{"a template of nothing", map[string]any{"topic": " {{body.a}} {{body.b}} "}, nil, "body.a, body.b"},
		{"a literal null", map[string]any{"topic": nil}, nil, "input.topic: filled as nothing"},
		{"the first in order", map[string]any{"b": "{{body.b}}", "a": "{{body.a}}"}, nil, "input.a:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := MapInput(Trigger{ID: "w", Kind: KindWebhook, Input: c.input}, Occurrence{Body: c.body}, at)
			if !errors.Is(err, ErrFilledNothing) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("MapInput = %v, want ErrFilledNothing saying %q", err, c.says)
			}
		})
	}
	// a template with something in it is something; an empty string from a
	// body is nothing
	if got, err := MapInput(Trigger{ID: "w", Kind: KindWebhook, Input: map[string]any{"t": "x{{body.no}}"}}, Occurrence{}, at); err != nil || got["t"] != "x" {
		t.Errorf("MapInput(partly filled) = %v, %v", got, err)
	}
}

// TestOccurrenceNeverHeaders: a schedule's occurrence offers trigger and
// time only; a webhook's adds method, path, query and body — and nothing
// else, so a mapping cannot read a request's headers.
func TestOccurrenceValues(t *testing.T) {
	at := utc(t, "2026-03-02T08:30:00Z")
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return sortStrings(out)
	}
	if got := keys(OccurrenceOf(Trigger{ID: "s", Kind: KindSchedule}).Values(at)); !reflect.DeepEqual(got, []string{"time", "trigger"}) {
		t.Errorf("a schedule offers %v", got)
	}
	if got := keys(OccurrenceOf(Trigger{ID: "w", Kind: KindWebhook}).Values(at)); !reflect.DeepEqual(got, []string{"body", "method", "path", "query", "time", "trigger"}) {
		t.Errorf("a webhook offers %v", got)
	}
	if typ := reflect.TypeFor[Occurrence](); typ.NumField() != 7 {
		t.Errorf("Occurrence has %d fields: a new one must not carry what a mapping may not read (headers)", typ.NumField())
	}
	// an unknown zone offers UTC rather than failing
	v := Occurrence{Kind: KindSchedule, TimeZone: "Nowhere/Else"}.Values(at)
	if tm := v["time"].(map[string]any); tm["zone"] != "UTC" || tm["time"] != "08:30" {
		t.Errorf("unknown zone offers %v", tm)
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestMapDeliveryBody(t *testing.T) {
	at := utc(t, "2026-03-02T08:30:00Z")
	occ := OccurrenceOf(Trigger{ID: "morning", Kind: KindSchedule, TimeZone: "UTC"})
	outputs := map[string]any{"report": "All green", "rows": []any{map[string]any{"name": "db", "ok": true}}}

	// no body: the outputs laid out for a chat app
	got := MapDeliveryBody(Delivery{URLEnv: "U"}, outputs, occ, at)
	if want := map[string]any{"text": AsTable(outputs)}; !reflect.DeepEqual(got, want) {
		t.Errorf("default body = %#v, want %#v", got, want)
	}
	// one output: itself
	got = MapDeliveryBody(Delivery{URLEnv: "U"}, map[string]any{"report": "All green"}, occ, at)
	if want := map[string]any{"text": "All green"}; !reflect.DeepEqual(got, want) {
		t.Errorf("default body of one output = %#v, want %#v", got, want)
	}
	// a body, filled like an input
	got = MapDeliveryBody(Delivery{URLEnv: "U", Body: map[string]any{
		"text":    "{{trigger.id}} on {{time.date}}: {{outputs.report}}",
		"rows":    "{{outputs.rows}}",
		"table":   "{{table}}",
		"missing": "{{outputs.nothing}}",
	}}, outputs, occ, at)
	want := map[string]any{
		"text":    "morning on 2026-03-02: All green",
		"rows":    outputs["rows"],
		"table":   AsTable(outputs),
		"missing": nil, // never fails: nothing fills as nothing
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body =\n%#v\nwant\n%#v", got, want)
	}
	if got := MapDeliveryBody(Delivery{URLEnv: "U", Body: "{{outputs}}"}, nil, occ, at); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("outputs of a run with none = %#v", got)
	}
}
