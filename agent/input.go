package agent

import (
	"encoding/json"
	"fmt"
	"strconv"

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
