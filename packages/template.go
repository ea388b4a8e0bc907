package packages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// templateName is the template's declaration of its parameters.
const templateName = "template.json"

// MaxParams bounds a template's parameters; MaxParamBytes one value.
const (
	MaxParams     = 64
	MaxParamBytes = 4096
)

// Template is template.json: the parameters a template's flow.json
// names as {{params.NAME}} placeholders inside its strings.
type Template struct {
	Parameters []Param `json:"parameters"`
}

// Param is one parameter of a template.
type Param struct {
	// Name is a lowercase identifier: a-z first, then a-z, 0-9 and '_',
	// at most 64.
	Name string `json:"name"`
	// Type is string, integer, number or boolean.
	Type        string `json:"type"`
	Description string `json:"description"`
	// Default, when present, is the value's text; a parameter without
	// one must be given.
	Default *string `json:"default,omitempty"`
}

var (
	paramNameRE   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	placeholderRE = regexp.MustCompile(`\{\{\s*params\.([^}\s]*)\s*\}\}`)
)

// parseTemplate reads template.json strictly.
func parseTemplate(data []byte) (*Template, error) {
	bad := func(format string, args ...any) error {
		return refuse(ReasonInvalidTemplate, templateName, format, args...)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var t Template
	if err := dec.Decode(&t); err != nil {
		return nil, bad("%v", err)
	}
	if dec.More() {
		return nil, bad("trailing data after the object")
	}
	if len(t.Parameters) > MaxParams {
		return nil, bad("%d parameters: at most %d", len(t.Parameters), MaxParams)
	}
	seen := map[string]bool{}
	for _, p := range t.Parameters {
		if !paramNameRE.MatchString(p.Name) {
			return nil, bad("parameter %q: a name is a-z first, then a-z, 0-9 and _, at most 64", clip(p.Name))
		}
		if seen[p.Name] {
			return nil, bad("parameter %q declared twice", p.Name)
		}
		seen[p.Name] = true
		if len(p.Description) > MaxDescriptionBytes {
			return nil, bad("parameter %q: description over %d bytes", p.Name, MaxDescriptionBytes)
		}
		switch p.Type {
		case "string", "integer", "number", "boolean":
		default:
			return nil, bad("parameter %q: type %q: want string, integer, number or boolean", p.Name, clip(p.Type))
		}
		if p.Default != nil {
			if _, err := p.value(*p.Default); err != nil {
				return nil, bad("parameter %q: default: %v", p.Name, err)
			}
		}
	}
	return &t, nil
}

// value parses s as p's type into what JSON holds.
func (p Param) value(s string) (any, error) {
	if len(s) > MaxParamBytes {
		return nil, fmt.Errorf("%d bytes: at most %d", len(s), MaxParamBytes)
	}
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return nil, fmt.Errorf("%q is not an integer", clip(s))
		}
		return json.Number(strconv.FormatInt(n, 10)), nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", clip(s))
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "boolean":
		b, err := strconv.ParseBool(s)
		if err != nil || (s != "true" && s != "false") {
			return nil, fmt.Errorf("%q is not true or false", clip(s))
		}
		return b, nil
	}
	return s, nil
}

// sample is a value of p's type, for checking a template without values.
func (p Param) sample() string {
	if p.Default != nil {
		return *p.Default
	}
	switch p.Type {
	case "integer", "number":
		return "1"
	case "boolean":
		return "false"
	}
	return "x"
}

// values checks given against the declaration: every name declared,
// every value of its type, every parameter without a default given.
func (t *Template) values(given map[string]string) (map[string]any, error) {
	out := map[string]any{}
	declared := map[string]bool{}
	for _, p := range t.Parameters {
		declared[p.Name] = true
		s, ok := given[p.Name]
		if !ok {
			if p.Default == nil {
				return nil, refuse(ReasonInvalidTemplate, p.Name, "required parameter (%s) not given", p.Type)
			}
			s = *p.Default
		}
		v, err := p.value(s)
		if err != nil {
			return nil, refuse(ReasonInvalidTemplate, p.Name, "%s parameter: %v", p.Type, err)
		}
		out[p.Name] = v
	}
	for name := range given {
		if !declared[name] {
			return nil, refuse(ReasonInvalidTemplate, clip(name), "not a parameter of this template")
		}
	}
	return out, nil
}

// fill replaces the placeholders of the template's flow.json with values
// and returns the flow's JSON. A string that is one placeholder and
// nothing else takes the value with its type; a placeholder inside a
// longer string takes its text.
func fill(flowJSON []byte, values map[string]any) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(flowJSON))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, refuse(ReasonInvalidFlow, "flow.json", "%v", err)
	}
	var missing string
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case string:
			if m := placeholderRE.FindStringSubmatch(v); m != nil && m[0] == v {
				if x, ok := values[m[1]]; ok {
					return x
				}
			}
			return placeholderRE.ReplaceAllStringFunc(v, func(ph string) string {
				name := placeholderRE.FindStringSubmatch(ph)[1]
				x, ok := values[name]
				if !ok {
					missing = name
					return ph
				}
				return fmt.Sprint(x)
			})
		}
		return v
	}
	doc = walk(doc)
	if missing != "" {
		return nil, refuse(ReasonInvalidTemplate, "flow.json", "placeholder {{params.%s}} names no declared parameter", clip(missing))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// checkFlow loads and validates a flow, as flow.Check does.
func checkFlow(data []byte) (*flow.Flow, error) {
	f, err := flow.Load(data)
	if err != nil {
		return nil, refuse(ReasonInvalidFlow, "flow.json", "%v", err)
	}
	if err := flow.Check(f); err != nil {
		return nil, refuse(ReasonInvalidFlow, "flow.json", "%s", strings.TrimPrefix(err.Error(), "flow: "))
	}
	return f, nil
}

// checkTemplate validates a template's flow filled with a sample of
// every parameter (its default, or a plain value of its type), so a
// template that cannot make a valid flow is refused before anyone fills it.
func checkTemplate(t *Template, flowJSON []byte) (*flow.Flow, error) {
	given := map[string]string{}
	for _, p := range t.Parameters {
		given[p.Name] = p.sample()
	}
	values, err := t.values(given)
	if err != nil {
		return nil, err
	}
	filled, err := fill(flowJSON, values)
	if err != nil {
		return nil, err
	}
	return checkFlow(filled)
}
