package flow

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// typeFeature is the feature each node type needs.
var typeFeature = map[Kind]string{
	KindLLM:    FeatureLLMNode,
	KindTool:   FeatureToolNode,
	KindTools:  FeatureToolsNode,
	KindFanout: FeatureFanout,
	KindAsk:    FeatureAsk,
	KindAgent:  FeatureAgentNode,
}

// kindLabel is how a message names a node of each kind.
var kindLabel = map[Kind]string{
	KindHandler: "Node",
	KindLLM:     "LLM node",
	KindTool:    "Tool node",
	KindTools:   "Tools node",
	KindFanout:  "Fanout node",
	KindAsk:     "Ask node",
	KindAgent:   "Agent node",
}

// kindPhrase is a node of each kind with its article.
var kindPhrase = map[Kind]string{
	KindHandler: "a handler node",
	KindLLM:     "an llm node",
	KindTool:    "a tool node",
	KindTools:   "a tools node",
	KindFanout:  "a fanout node",
	KindAsk:     "an ask node",
	KindAgent:   "an agent node",
}

func (v *validator) nodeCheck(i int, n *Node) {
	if n == nil {
		return
	}
	path := index("nodes", i)
	switch {
	case n.ID == "":
		v.missing(CodeMissingNodeID, join(path, "id"), "Node has no id")
	case slices.Contains(ReservedIDs, n.ID):
		v.add(CodeReservedNodeID, join(path, "id"), fmt.Sprintf("Node id %q is reserved", n.ID))
	case v.ids[n.ID] != i:
		v.add(CodeDuplicateNodeID, join(path, "id"), fmt.Sprintf("Duplicate node id %q", n.ID))
	}
	name := path
	if n.ID != "" {
		name = fmt.Sprintf("%q", n.ID)
	}

	kind := Kind("")
	switch {
	case n.Handler != "" && n.Type != "":
		v.add(CodeHandlerAndType, join(path, "type"), fmt.Sprintf("Node %s has both a handler and a type: a node has one or the other", name))
	case n.Type != "":
		feature, ok := typeFeature[n.Type]
		if !ok {
			v.add(CodeUnknownNodeType, join(path, "type"), fmt.Sprintf("Node %s has unknown type %q: a node's type is one of %s",
				name, n.Type, joinKinds(NodeTypes)))
			break
		}
		v.needs(feature, join(path, "type"))
		kind = n.Type
	case n.Handler != "":
		kind = KindHandler
	default:
		if !v.broken[join(path, "handler")] && !v.broken[join(path, "type")] {
			v.add(CodeMissingHandler, join(path, "handler"), fmt.Sprintf("Node %s has neither a handler nor a type", name))
		}
	}

	if kind != "" {
		for _, key := range n.present() {
			if !belongs(kind, key) {
				v.add(CodeMisplacedKey, join(path, key), fmt.Sprintf("Key %q does not belong on %s", key, kindPhrase[kind]))
			}
		}
	}
	if n.Description != "" {
		v.needs(FeatureNodeDescription, join(path, "description"))
	}
	if n.Retry != nil {
		p := join(path, "retry")
		v.needs(FeatureRetry, p)
		if n.Retry.MaxAttempts < 1 && !v.broken[join(p, "maxAttempts")] {
			v.add(CodeInvalidValue, join(p, "maxAttempts"), "retry.maxAttempts must be a whole number, at least 1")
		}
	}
	if n.OnError != "" {
		p := join(path, "onError")
		v.needs(FeatureOnError, p)
		if !v.isTarget(n.OnError) {
			v.add(CodeUnknownNodeRef, p, fmt.Sprintf("onError names %q, which is not a node or END", n.OnError))
		}
	}
	if n.Approval != nil {
		v.approvalCheck(n, name, join(path, "approval"))
	}

	label := fmt.Sprintf("%s %s", kindLabel[kind], name)
	need := func(value, key string) bool {
		if value == "" {
			v.missing(CodeMissingField, join(path, key), fmt.Sprintf("%s has no %s", label, key))
			return false
		}
		return true
	}
	switch kind {
	case KindLLM:
		if need(n.Prompt, "prompt") {
			v.templateReads(n.Prompt, join(path, "prompt"))
		}
		if need(n.Output, "output") {
			v.declared(n.Output, join(path, "output"))
		}
		if n.Schema != nil {
			p := join(path, "schema")
			v.needs(FeatureSchema, p)
			v.schemaCheck(n.Schema, p)
			v.schemaAgrees(n, p)
		}
	case KindTool:
		if need(n.Tool, "tool") {
			v.toolDeclared(n, join(path, "tool"))
		}
		if n.Args != nil {
			var args any
			if json.Unmarshal(n.Args, &args) == nil {
				v.argsRead(args, join(path, "args"))
			}
		}
		v.declared(n.Output, join(path, "output"))
	case KindTools:
		if need(n.Calls, "calls") {
			v.declared(n.Calls, join(path, "calls"))
		}
		if need(n.Output, "output") {
			v.declared(n.Output, join(path, "output"))
		}
	case KindFanout:
		if need(n.Over, "over") {
			v.declared(n.Over, join(path, "over"))
		}
		if need(n.To, "to") {
			v.fanoutTarget(n, name, join(path, "to"))
		}
		if need(n.As, "as") {
			v.declared(n.As, join(path, "as"))
		}
	case KindAsk:
		if need(n.Ask, "ask") {
			v.templateReads(n.Ask, join(path, "ask"))
		}
		if need(n.Output, "output") {
			v.declared(n.Output, join(path, "output"))
		}
	case KindAgent:
		v.agentCheck(n, label, path)
		if need(n.Output, "output") {
			v.declared(n.Output, join(path, "output"))
		}
	}
}

func joinKinds(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (v *validator) approvalCheck(n *Node, name, path string) {
	a := n.Approval
	v.needs(FeatureApproval, path)
	if a.Ask == "" {
		v.missing(CodeMissingField, join(path, "ask"), fmt.Sprintf("Approval on node %s has no ask", name))
	}
	for i, ch := range a.Show {
		p := index(join(path, "show"), i)
		if ch == "" {
			v.missing(CodeMissingField, p, "approval.show must name a channel")
			continue
		}
		// A field of a channel may be shown: "order.amount" reads order.
		base := ch
		if i := strings.IndexAny(ch, ".["); i > 0 {
			base = ch[:i]
		}
		v.reads(base, p)
	}
	if a.OnReject != "" && !v.isTarget(a.OnReject) {
		v.add(CodeUnknownNodeRef, join(path, "onReject"), fmt.Sprintf("onReject names %q, which is not a node or END", a.OnReject))
	}
	if a.Why != "" {
		base := a.Why
		if i := strings.IndexAny(base, ".["); i > 0 {
			base = base[:i]
		}
		v.reads(base, join(path, "why"))
	}
}

// templateReads checks the channels a prompt or question reads.
func (v *validator) templateReads(s, path string) {
	for _, ch := range placeholders(s) {
		v.reads(ch, path)
	}
}

// argsRead checks the channels a tool node's arguments read, at any depth.
func (v *validator) argsRead(a any, path string) {
	switch a := a.(type) {
	case string:
		v.templateReads(a, path)
	case []any:
		for i, e := range a {
			v.argsRead(e, index(path, i))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(a)) {
			v.argsRead(a[k], join(path, k))
		}
	}
}

// toolDeclared refuses a tool node calling a tool the flow did not declare:
// "<server>.<tool>" against requires.mcp, anything else against the flow's
// tools when it declares them.
func (v *validator) toolDeclared(n *Node, path string) {
	f := v.f
	if server, tool, ok := strings.Cut(n.Tool, "."); ok && f.Requires != nil {
		if s, ok := f.Requires.MCP[server]; ok {
			if s != nil && !slices.ContainsFunc(s.Tools, func(t Tool) bool { return t.Name == tool }) {
				v.add(CodeUndeclaredMCPTool, path, fmt.Sprintf("Tool node %q calls %q, which requires.mcp.%s does not declare",
					n.ID, n.Tool, server))
			}
			return
		}
	}
	if f.Tools != nil && !slices.ContainsFunc(f.Tools, func(t Tool) bool { return t.Name == n.Tool }) {
		v.add(CodeUndeclaredTool, path, fmt.Sprintf("Tool node %q calls %q, which the flow's tools do not declare", n.ID, n.Tool))
	}
}

// fanoutTarget checks where a fanout sends its items, and that the channel
// its copies all write in one step can take more than one write.
func (v *validator) fanoutTarget(n *Node, name, path string) {
	target := v.f.node(n.To)
	if target == nil {
		v.add(CodeUnknownNodeRef, path, fmt.Sprintf("Fanout node %s sends its items to %q, which is not a node", name, n.To))
		return
	}
	ch := target.writes()
	if ch == "" || v.f.State == nil {
		return
	}
	if c := v.f.State[ch]; c != nil && c.Reducer == "" {
		v.add(CodeFanoutNeedsReducer, path, fmt.Sprintf(
			`%s writes %q once per item, so that channel needs a reducer - "append" collects the results`, target.ID, ch))
	}
}

// schemaAgrees refuses a schema and an output channel that disagree about
// one value.
func (v *validator) schemaAgrees(n *Node, path string) {
	if v.f.State == nil || n.Schema.Type == "" {
		return
	}
	c := v.f.State[n.Output]
	if c == nil || c.Type == "" || c.Type == n.Schema.Type {
		return
	}
	v.add(CodeSchemaChannelMismatch, join(path, "type"), fmt.Sprintf(
		"LLM node %q schema type %q is incompatible with output channel %q of type %q", n.ID, n.Schema.Type, n.Output, c.Type))
}

func (v *validator) schemaCheck(s *Schema, path string) {
	if s == nil {
		return
	}
	t := s.Type
	switch {
	case t == "":
		v.missing(CodeSchemaMissingType, join(path, "type"), "A schema must say its type")
	case t == "array":
		v.add(CodeSchemaUnknownType, join(path, "type"), `Schema type "array" is not a DSL type: write "list"`)
		t = ""
	case !slices.Contains(SchemaTypes, t):
		v.add(CodeSchemaUnknownType, join(path, "type"), fmt.Sprintf("Unknown schema type %q: a schema's type is one of %s",
			t, strings.Join(SchemaTypes, ", ")))
		t = ""
	}
	if t != "" {
		for _, k := range s.present() {
			if types, ok := schemaKeywordTypes[k]; ok && !slices.Contains(types, t) {
				v.add(CodeSchemaMisplacedKeyword, join(path, k), fmt.Sprintf("Schema keyword %q does not apply to type %q", k, t))
			}
		}
		if t == ChannelList && s.Items == nil {
			v.missing(CodeSchemaListWithoutItems, join(path, "items"), "A list must say what its items are")
		}
	}
	for i, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			v.add(CodeSchemaUnknownRequired, index(join(path, "required"), i),
				fmt.Sprintf("required names %q, which is not one of the properties", r))
		}
	}
	if s.Enum != nil {
		v.enumCheck(s.Enum, t, join(path, "enum"))
	}
	if s.Minimum != nil && s.Maximum != nil && *s.Maximum < *s.Minimum {
		v.add(CodeSchemaInvalid, join(path, "maximum"), "maximum is less than minimum")
	}
	if s.MinLength != nil && *s.MinLength < 0 {
		v.add(CodeSchemaInvalid, join(path, "minLength"), "minLength must not be negative")
	}
	if s.MaxLength != nil && *s.MaxLength < 0 {
		v.add(CodeSchemaInvalid, join(path, "maxLength"), "maxLength must not be negative")
	}
	if s.MinLength != nil && s.MaxLength != nil && *s.MaxLength < *s.MinLength {
		v.add(CodeSchemaInvalid, join(path, "maxLength"), "maxLength is less than minLength")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		v.schemaCheck(s.Properties[name], join(join(path, "properties"), name))
	}
	v.schemaCheck(s.Items, join(path, "items"))
}

func (v *validator) enumCheck(values []any, t, path string) {
	if len(values) == 0 {
		v.add(CodeSchemaInvalid, path, "enum must list at least one value")
		return
	}
	for i, e := range values {
		var ok bool
		switch e.(type) {
		case string:
			ok = t == ChannelString
		case float64, int:
			ok = t == ChannelNumber
		case bool:
			ok = t == ChannelBoolean
		}
		if !ok && slices.Contains(schemaKeywordTypes["enum"], t) {
			b, _ := json.Marshal(e)
			v.add(CodeSchemaInvalid, index(path, i), fmt.Sprintf("enum value %s is not a %s", b, t))
		}
	}
}
