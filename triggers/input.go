package triggers

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flow"
)

// Occurrence is what one occurrence of a trigger offers a mapping, and
// nothing more. Every occurrence offers
//
//	trigger  {id, kind}
//	time     {iso, date, time, unix, zone, weekday}: when it occurred, in
//	         the schedule's zone (UTC for a webhook)
//
// and a webhook's adds the request's
//
//	method   "POST"
//	path     "/hooks/deploy"
//	query    the query string, the first value of each key
//	body     the body, parsed as JSON (null when empty)
//
// never its headers: they carry credentials (the signature, cookies,
// tokens), and what a run is handed ends up in its journal and in front of
// a model.
type Occurrence struct {
	// Trigger and Kind say which trigger occurred; MapInput takes them
	// from the trigger itself.
	Trigger string
	Kind    Kind
	// TimeZone is the zone time is offered in, "" for UTC.
	TimeZone string
	// Method, Path, Query and Body are a webhook request's.
	Method string
	Path   string
	Query  map[string]string
	Body   any
}

// OccurrenceOf is an occurrence of t, with nothing of a request in it.
func OccurrenceOf(t Trigger) Occurrence {
	o := Occurrence{Trigger: t.ID, Kind: t.Kind}
	if t.Kind == KindSchedule {
		o.TimeZone = t.TimeZone
	}
	return o
}

// QueryOf is a request's query as an occurrence offers it: the first value
// of each key.
func QueryOf(q url.Values) map[string]string {
	out := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) > 0 {
			out[k] = vs[0]
		}
	}
	return out
}

// The names a mapping reads at the top of a placeholder.
const (
	readTrigger = "trigger"
	readTime    = "time"
	readMethod  = "method"
	readPath    = "path"
	readQuery   = "query"
	readBody    = "body"
	readOutputs = "outputs" // a delivery's body only
	readTable   = "table"   // a delivery's body only
)

// Values is what the occurrence offers a mapping at instant at.
func (o Occurrence) Values(at time.Time) map[string]any {
	loc, err := loadZone(o.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	local := at.In(loc)
	v := map[string]any{
		readTrigger: map[string]any{"id": o.Trigger, "kind": string(o.Kind)},
		readTime: map[string]any{
			"iso":     local.Format(time.RFC3339),
			"date":    local.Format(time.DateOnly),
			"time":    local.Format("15:04"),
			"unix":    float64(at.Unix()),
			"zone":    loc.String(),
			"weekday": local.Weekday().String(),
		},
	}
	if o.Kind == KindWebhook {
		q := make(map[string]any, len(o.Query))
		for k, s := range o.Query {
			q[k] = s
		}
		v[readMethod], v[readPath], v[readQuery], v[readBody] = o.Method, o.Path, q, o.Body
	}
	return v
}

// ErrFilledNothing is wrapped by MapInput's error for an input whose
// mapping filled as nothing: the occurrence did not carry what the mapping
// reads. It is the sender's mistake, not the flow's.
var ErrFilledNothing = errors.New("filled as nothing")

// MapInput is what occurrence occ of t, at instant at, makes of t's input
// mapping: each value filled by the flow's own template rules (flow.Fill)
// from what the occurrence offers. The trigger's id, kind and zone come
// from t, whatever occ says. Every input the mapping names must fill as
// something — not null, not an empty string — or the error (wrapping
// ErrFilledNothing) names the input and what it reads; an input left out
// of the mapping keeps the flow's default.
func MapInput(t Trigger, occ Occurrence, at time.Time) (map[string]any, error) {
	o := OccurrenceOf(t)
	o.Method, o.Path, o.Query, o.Body = occ.Method, occ.Path, occ.Query, occ.Body
	values := o.Values(at)
	out := make(map[string]any, len(t.Input))
	for _, name := range slices.Sorted(maps.Keys(t.Input)) {
		m := t.Input[name]
		v := flow.Fill(m, values)
		if nothing(v) {
			reads := placeholdersIn(m)
			if len(reads) == 0 {
				return nil, fmt.Errorf("input.%s: %w", name, ErrFilledNothing)
			}
			return nil, fmt.Errorf("input.%s: %w: this occurrence has nothing at %s", name, ErrFilledNothing, strings.Join(reads, ", "))
		}
		out[name] = v
	}
	return out, nil
}

// nothing reports whether a filled value is nothing: null, or a string
// with nothing but space in it.
func nothing(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	}
	return false
}

// MapDeliveryBody is the body a delivery posts for a run's outputs: the
// delivery's body filled by the same rules as an input mapping, from what
// the occurrence offers and
//
//	outputs  the run's outputs, by name
//	table    the outputs laid out for a chat app (AsTable)
//
// With no body, {"text": table}. It never fails: a placeholder reading
// nothing fills as nothing. occ says which trigger occurred (build it with
// OccurrenceOf, then add a request's parts), as it was for the run's
// input.
func MapDeliveryBody(d Delivery, outputs map[string]any, occ Occurrence, at time.Time) any {
	table := tableOf(outputs)
	if d.Body == nil {
		return map[string]any{"text": table}
	}
	values := occ.Values(at)
	values[readOutputs] = outputsValue(outputs)
	values[readTable] = table
	return flow.Fill(d.Body, values)
}

func outputsValue(outputs map[string]any) map[string]any {
	if outputs == nil {
		return map[string]any{}
	}
	return outputs
}

// tableOf lays out a run's outputs: a single output as itself, several by
// name.
func tableOf(outputs map[string]any) string {
	if len(outputs) == 1 {
		for _, v := range outputs {
			return AsTable(v)
		}
	}
	return AsTable(outputs)
}

// placeholder is a {{path}} in a template, as flow's fill reads it.
var placeholder = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// placeholdersIn lists the paths a mapping value reads, at any depth, once
// each, in order.
func placeholdersIn(v any) []string {
	var out []string
	walkStrings(v, "", func(_ string, s string) {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			if p := strings.TrimSpace(m[1]); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	})
	return out
}

// walkStrings calls fn with every string in v and its path below path.
func walkStrings(v any, path string, fn func(path, s string)) {
	switch v := v.(type) {
	case string:
		fn(path, v)
	case []any:
		for i, e := range v {
			walkStrings(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			walkStrings(v[k], join(path, k), fn)
		}
	}
}

// offer is what a kind of mapping may read: for each name at the top, the
// fields below it (nil: any, as in a body; empty: none, as in a method).
type offer map[string][]string

var (
	anyField    []string
	noField     = []string{}
	triggerRead = []string{"id", "kind"}
	timeRead    = []string{"iso", "date", "time", "unix", "zone", "weekday"}
)

// offerFor is what a mapping may read for a trigger of kind k; delivery
// adds a delivery body's outputs and table.
func offerFor(k Kind, delivery bool) offer {
	o := offer{readTrigger: triggerRead, readTime: timeRead}
	if k == KindWebhook {
		o[readMethod], o[readPath], o[readQuery], o[readBody] = noField, noField, anyField, anyField
	}
	if delivery {
		o[readOutputs], o[readTable] = anyField, noField
	}
	return o
}

// readProblem says why a placeholder's path reads something the
// occurrence never offers, "" when it does not.
func readProblem(p string, o offer, k Kind) string {
	if p == "" {
		return "{{}} reads nothing: name what it reads, such as {{time.iso}}"
	}
	root, rest := p, ""
	if i := strings.IndexAny(p, ".["); i >= 0 {
		root, rest = p[:i], p[i:]
	}
	fields, ok := o[root]
	if !ok {
		switch strings.ToLower(root) {
		case "headers", "header":
			return fmt.Sprintf("{{%s}}: request headers are never offered to a mapping", p)
		case readBody, readQuery, readMethod, readPath:
			return fmt.Sprintf("{{%s}}: a %s occurs without a request, so it has no %s; it offers %s", p, k, root, names(o))
		}
		return fmt.Sprintf("{{%s}}: an occurrence offers %s, not %s", p, names(o), root)
	}
	if root == readQuery && rest != "" && (!strings.HasPrefix(rest, ".") || strings.ContainsAny(rest[1:], ".[")) {
		return fmt.Sprintf("{{%s}}: a query value is text, with nothing below it", p)
	}
	if rest == "" || fields == nil {
		return ""
	}
	if len(fields) == 0 {
		return fmt.Sprintf("{{%s}}: %s is text, with nothing below it", p, root)
	}
	field := strings.TrimPrefix(rest, ".")
	if i := strings.IndexAny(field, ".["); i >= 0 || !strings.HasPrefix(rest, ".") {
		return fmt.Sprintf("{{%s}}: %s offers %s, each a single value", p, root, strings.Join(fields, ", "))
	}
	if !slices.Contains(fields, field) {
		return fmt.Sprintf("{{%s}}: %s offers %s, not %s", p, root, strings.Join(fields, ", "), field)
	}
	return ""
}

// names lists what an offer has at the top.
func names(o offer) string {
	return strings.Join(slices.Sorted(maps.Keys(o)), ", ")
}

// staticKind is the channel type a mapping value is known to fill as
// before any occurrence, "" when it cannot be known (a lone placeholder
// reading a body).
func staticKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return flow.ChannelBoolean
	case float64:
		return flow.ChannelNumber
	case []any:
		return flow.ChannelList
	case map[string]any:
		return flow.ChannelObject
	case string:
		m := lonePlaceholder.FindStringSubmatch(v)
		if m == nil {
			return flow.ChannelString
		}
		switch p := strings.TrimSpace(m[1]); {
		case p == readTrigger, p == readTime, p == readQuery:
			return flow.ChannelObject
		case p == "time.unix":
			return flow.ChannelNumber
		case strings.HasPrefix(p, readTrigger+"."), strings.HasPrefix(p, readTime+"."), strings.HasPrefix(p, readQuery+"."),
			p == readMethod, p == readPath, p == readTable:
			return flow.ChannelString
		}
	}
	return ""
}

var lonePlaceholder = regexp.MustCompile(`^\{\{([^{}]*)\}\}$`)

// sample is a value of a channel type, for flow.Fits.
func sample(kind string) any {
	switch kind {
	case flow.ChannelString:
		return ""
	case flow.ChannelNumber:
		return 0.0
	case flow.ChannelBoolean:
		return false
	case flow.ChannelList:
		return []any{}
	case flow.ChannelObject:
		return map[string]any{}
	}
	return nil
}
