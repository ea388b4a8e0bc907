package llm

import (
	"github.com/symphonix/symphonix/flow"
)

// JSONSchema converts a flow schema into the JSON Schema a provider is
// given: "list" becomes "array", every other type keeps its name, and the
// keywords carry over as they are. An object says additionalProperties
// false, which tells the model not to add properties the node never asked
// for (and which a provider's strict mode requires). A nil schema is nil.
func JSONSchema(s *flow.Schema) map[string]any {
	return jsonSchemaOf(s, 0)
}

func jsonSchemaOf(s *flow.Schema, depth int) map[string]any {
	if s == nil || depth > maxDepth {
		return nil
	}
	out := map[string]any{}
	switch s.Type {
	case flow.ChannelList:
		out["type"] = "array"
	default:
		out["type"] = s.Type
	}
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.Type == flow.ChannelObject {
		props := make(map[string]any, len(s.Properties))
		for name, p := range s.Properties {
			props[name] = jsonSchemaOf(p, depth+1)
		}
		out["properties"] = props
		if len(s.Required) > 0 {
			out["required"] = s.Required
		}
		out["additionalProperties"] = false
	}
	if s.Items != nil {
		out["items"] = jsonSchemaOf(s.Items, depth+1)
	}
	if len(s.Enum) > 0 {
		out["enum"] = s.Enum
	}
	if s.Minimum != nil {
		out["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		out["maximum"] = *s.Maximum
	}
	if s.MinLength != nil {
		out["minLength"] = *s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	return out
}
