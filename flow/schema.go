package flow

// Schema is the shape an llm node's answer must have (v0.15): a small subset
// of JSON Schema in the DSL's own words — "list", never "array". It says
// type, description, properties, required, items, enum, minimum, maximum,
// minLength, maxLength, and nothing else: any other keyword is refused by
// name, because a schema quietly half-applied is worse than none.
type Schema struct {
	// Type is one of SchemaTypes. Required at every level.
	Type string
	// Description says what the value is.
	Description string
	// Properties and Required describe an object.
	Properties map[string]*Schema
	Required   []string
	// Items describes every item of a list. A list must have it.
	Items *Schema
	// Enum lists the values allowed: strings, numbers or booleans, of the
	// schema's type.
	Enum []any
	// Minimum and Maximum bound a number.
	Minimum *float64
	Maximum *float64
	// MinLength and MaxLength bound a string.
	MinLength *int
	MaxLength *int

	keys []string // the keywords Load saw, in order
}

// SchemaKeywords lists every keyword a schema may use.
var SchemaKeywords = []string{
	"type", "description", "properties", "required", "items",
	"enum", "minimum", "maximum", "minLength", "maxLength",
}

// SchemaTypes lists every type a schema may say. A file is not an answer a
// model can give, so it is a channel type but not a schema type.
var SchemaTypes = []string{ChannelString, ChannelNumber, ChannelBoolean, ChannelList, ChannelObject}

// schemaKeywordTypes says which types a type-specific keyword applies to.
var schemaKeywordTypes = map[string][]string{
	"properties": {ChannelObject},
	"required":   {ChannelObject},
	"items":      {ChannelList},
	"enum":       {ChannelString, ChannelNumber, ChannelBoolean},
	"minimum":    {ChannelNumber},
	"maximum":    {ChannelNumber},
	"minLength":  {ChannelString},
	"maxLength":  {ChannelString},
}

// present returns the keywords the schema uses: those Load saw, or for a
// schema built in Go, the fields that are set.
func (s *Schema) present() []string {
	if s.keys != nil {
		return s.keys
	}
	var ks []string
	add := func(set bool, key string) {
		if set {
			ks = append(ks, key)
		}
	}
	add(s.Type != "", "type")
	add(s.Description != "", "description")
	add(s.Properties != nil, "properties")
	add(s.Required != nil, "required")
	add(s.Items != nil, "items")
	add(s.Enum != nil, "enum")
	add(s.Minimum != nil, "minimum")
	add(s.Maximum != nil, "maximum")
	add(s.MinLength != nil, "minLength")
	add(s.MaxLength != nil, "maxLength")
	return ks
}
