package agent

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

func parseInput(ch *flow.Channel, value string) (any, error) {
	typ := ""
	if ch != nil {
		typ = ch.Type
	}
	switch typ {
	case flow.ChannelString:
		return value, nil
	case flow.ChannelNumber:
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", value)
		}
		return n, nil
	case flow.ChannelBoolean:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", value)
		}
		return b, nil
	}
	var v any
	if json.Valid([]byte(value)) && json.Unmarshal([]byte(value), &v) == nil {
		return v, nil
	}
	return value, nil
}

// CheckInputs checks values a run is started with from elsewhere than a
// terminal (a run fired from a board): each one must name an input the
// flow declares (Flow.Inputs) and be of its channel's type — a string, a
// number, true or false, a list, an object, or anything for a channel
// whose type is not said or a file. The error names the field at fault,
// "input.NAME".
func (a *Agent) CheckInputs(in map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(in)) {
		field := "input." + name
		if !slices.Contains(a.Flow.Inputs, name) {
			return fmt.Errorf("%s: not one of the flow's inputs (%s)", field, strings.Join(a.Flow.Inputs, ", "))
		}
		typ := ""
		if ch := a.Flow.State[name]; ch != nil {
			typ = ch.Type
		}
		if v := in[name]; v != nil && !flow.Fits(typ, v) {
			return fmt.Errorf("%s: want a %s, got %s", field, typ, flow.KindOf(v))
		}
	}
	return nil
}
