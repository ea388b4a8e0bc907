package flow

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validate reports every problem with the flow, in a stable order, and nil
// when there is none: what Load noticed while reading it, then the version,
// the flow as a whole, its state, its nodes, its edges, and last whether
// every node is reached. It answers "will this compile?" without a
// registry: handlers and routers are checked when the flow is built.
func Validate(f *Flow) []Problem {
	if f == nil {
		f = &Flow{}
	}
	v := &validator{f: f, version: -1, ids: map[string]int{}, broken: map[string]bool{}}
	if f.loaded != nil {
		v.problems = append(v.problems, f.loaded.problems...)
		v.broken = f.loaded.broken
	}
	for i, n := range f.Nodes {
		if n == nil || n.ID == "" {
			continue
		}
		if _, seen := v.ids[n.ID]; !seen {
			v.ids[n.ID] = i
		}
	}
	v.versionCheck()
	v.topCheck()
	v.stateCheck()
	for i, n := range f.Nodes {
		v.nodeCheck(i, n)
	}
	for i, e := range f.Edges {
		v.edgeCheck(i, e)
	}
	v.reachCheck()
	if len(v.problems) == 0 {
		return nil
	}
	return v.problems
}

type validator struct {
	f        *Flow
	problems []Problem
	broken   map[string]bool // paths Load already reported
	version  int             // the minor version, -1 when unknown
	ids      map[string]int  // node id to its first index
}

func (v *validator) add(code, path, msg string) {
	v.problems = append(v.problems, Problem{Code: code, Message: msg, Path: path})
}

// missing reports an absent required value, unless Load already reported
// the value as being of the wrong type.
func (v *validator) missing(code, path, msg string) {
	if !v.broken[path] {
		v.add(code, path, msg)
	}
}

// needs refuses a feature used below its version, and reports whether it
// may be used. Nothing is refused when the version is unknown: that is
// reported once, on its own.
func (v *validator) needs(key, path string) bool {
	feat, ok := FeatureByKey(key)
	if !ok {
		panic("flow: no feature " + strconv.Quote(key))
	}
	if v.version < 0 || minor(feat.Since) <= v.version {
		return true
	}
	v.add(CodeFeatureTooNew, path, tooNew(feat))
	return false
}

func (v *validator) given(key string) bool {
	return v.f.loaded != nil && v.f.loaded.keys[key]
}

func (v *validator) isNode(id string) bool {
	_, ok := v.ids[id]
	return ok
}

// isTarget reports whether id may be gone to: a node, or END.
func (v *validator) isTarget(id string) bool {
	return id == End || v.isNode(id)
}

func (v *validator) versionCheck() {
	f := v.f
	switch {
	case v.broken["version"]:
	case f.Version == "" && !v.given("version"):
		v.add(CodeMissingVersion, "version", "Flow has no version")
	case !SupportsVersion(f.Version):
		v.add(CodeUnsupportedVersion, "version", unsupportedVersion(f.Version))
	default:
		v.version = minor(f.Version)
	}
}

func (v *validator) topCheck() {
	f := v.f
	switch {
	case f.Start == "":
		v.missing(CodeMissingStart, "start", "Flow has no start")
	case !v.isNode(f.Start):
		v.add(CodeUnknownStart, "start", fmt.Sprintf("start names %q, which is not a node", f.Start))
	}
	if f.Nodes == nil {
		v.missing(CodeMissingNodes, "nodes", "Flow has no nodes")
	}
	if f.Edges == nil {
		v.missing(CodeMissingEdges, "edges", "Flow has no edges")
	}
	if f.Description != "" {
		v.needs(FeatureDescription, "description")
	}
	for _, io := range []struct {
		key, feature string
		names        []string
	}{{"inputs", FeatureInputs, f.Inputs}, {"outputs", FeatureOutputs, f.Outputs}} {
		if io.names == nil {
			continue
		}
		v.needs(io.feature, io.key)
		for i, name := range io.names {
			p := index(io.key, i)
			if name == "" {
				v.missing(CodeMissingField, p, io.key+" must name a channel")
				continue
			}
			v.declared(name, p)
		}
	}
	if f.Requires != nil {
		v.requiresCheck(f.Requires)
	}
	if f.Tools != nil {
		v.needs(FeatureTools, "tools")
		v.toolsCheck(f.Tools, "tools", true)
	}
	if f.Conversation {
		v.needs(FeatureConversation, "conversation")
	}
	if f.Views != nil {
		v.needs(FeatureViews, "views")
	}
	if f.Kind != "" {
		v.needs(FeatureKind, "kind")
		if !knownKind(f.Kind) {
			v.add(CodeInvalidValue, "kind", fmt.Sprintf("Unknown kind %q: a flow's kind is one of %s", f.Kind, strings.Join(FlowKinds, ", ")))
		}
	}
}

func (v *validator) requiresCheck(r *Requires) {
	v.needs(FeatureRequires, "requires")
	for i, name := range r.Env {
		if name == "" {
			v.missing(CodeMissingField, index("requires.env", i), "requires.env must name an environment variable")
		}
	}
	if r.Packages != nil {
		v.needs(FeaturePackages, "requires.packages")
	}
	if r.Services != nil {
		v.needs(FeatureServices, "requires.services")
	}
	if r.MCP == nil {
		return
	}
	v.needs(FeatureMCP, "requires.mcp")
	for _, name := range slices.Sorted(maps.Keys(r.MCP)) {
		p := join("requires.mcp", name)
		switch {
		case name == "":
			v.add(CodeInvalidMCPServer, p, "An MCP server needs a name")
		case strings.Contains(name, "."):
			v.add(CodeInvalidMCPServer, p, fmt.Sprintf(`MCP server name %q must not contain ".": its tools are called "<server>.<tool>"`, name))
		}
		s := r.MCP[name]
		if s == nil {
			continue
		}
		if s.Command == "" {
			v.missing(CodeMissingField, join(p, "command"), fmt.Sprintf("MCP server %q has no command", name))
		}
		if s.Tools != nil {
			v.toolsCheck(s.Tools, join(p, "tools"), false)
		}
	}
}

// toolsCheck checks a list of declared tools. Only the flow's own tools
// have a bare-name form that predates descriptions.
func (v *validator) toolsCheck(tools []Tool, path string, versioned bool) {
	seen := map[string]bool{}
	for i, t := range tools {
		p := index(path, i)
		if versioned && t.described() {
			v.needs(FeatureToolDescription, p)
		}
		switch {
		case t.Name == "":
			if !v.broken[p] {
				v.missing(CodeMissingField, join(p, "name"), "A tool needs a name")
			}
		case seen[t.Name]:
			v.add(CodeDuplicateTool, p, fmt.Sprintf("Tool %q is declared twice", t.Name))
		}
		seen[t.Name] = true
	}
}

func (v *validator) stateCheck() {
	if v.f.State == nil {
		return
	}
	v.needs(FeatureState, "state")
	for _, name := range slices.Sorted(maps.Keys(v.f.State)) {
		p := join("state", name)
		switch {
		case name == "":
			v.add(CodeInvalidValue, p, "A channel needs a name")
		case strings.HasPrefix(name, "__"):
			v.add(CodeReservedChannel, p, fmt.Sprintf(`Channel name %q is reserved: names beginning "__" are the engine's own`, name))
		}
		c := v.f.State[name]
		if c == nil {
			continue
		}
		switch {
		case c.Type == ChannelFile:
			v.needs(FeatureFileChannel, join(p, "type"))
		case c.Type == "array":
			v.needs(FeatureChannelType, join(p, "type"))
			v.add(CodeUnknownChannelType, join(p, "type"), `Channel type "array" is not a DSL type: write "list"`)
		case c.Type != "":
			v.needs(FeatureChannelType, join(p, "type"))
			if !slices.Contains(ChannelTypes, c.Type) {
				v.add(CodeUnknownChannelType, join(p, "type"), fmt.Sprintf("Unknown channel type %q: a channel's type is one of %s",
					c.Type, strings.Join(ChannelTypes, ", ")))
			}
		}
		if c.Description != "" {
			v.needs(FeatureChannelDescription, join(p, "description"))
		}
		if c.Remembers {
			v.needs(FeatureRemembers, join(p, "remembers"))
		}
		if c.Accept != "" {
			v.needs(FeatureFileChannel, join(p, "accept"))
			if c.Type != ChannelFile {
				v.add(CodeMisplacedKey, join(p, "accept"), fmt.Sprintf("Channel %q has accept, which belongs on a file channel", name))
			}
		}
	}
}

// declared refuses a channel the flow's state does not declare. Nothing is
// checked for a flow that declares no state: its schema is the caller's.
func (v *validator) declared(ch, path string) {
	if v.f.State == nil || ch == "" {
		return
	}
	if _, ok := v.f.State[ch]; !ok {
		v.add(CodeUndeclaredChannel, path, fmt.Sprintf("Channel %q is not declared in state", ch))
	}
}

// reads is declared for a channel being read, which may also be one the
// engine provides.
func (v *validator) reads(ch, path string) {
	if ch == ErrorChannel || (ch == HistoryChannel && v.f.Conversation) {
		return
	}
	v.declared(ch, path)
}

var placeholder = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// placeholders returns the channels a template reads: {{channel}}, and
// {{channel.field}} or {{channel[0]}} read channel.
func placeholders(s string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		name := strings.TrimSpace(m[1])
		if i := strings.IndexAny(name, ".["); i >= 0 {
			name = name[:i]
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// reachCheck refuses a node nothing routes to — LangGraph's
// UnreachableNodeError, said before the graph is built. A node is routed to
// by start, an edge or a route, a fanout's to, an onError or an onReject.
func (v *validator) reachCheck() {
	f := v.f
	if f.Start == "" || v.broken["edges"] {
		return
	}
	to := map[string]bool{f.Start: true}
	for _, e := range f.Edges {
		if e == nil {
			continue
		}
		to[e.To] = true
		for _, d := range e.Routes {
			to[d] = true
		}
	}
	for _, n := range f.Nodes {
		if n == nil {
			continue
		}
		to[n.OnError] = true
		if n.Type == KindFanout {
			to[n.To] = true
		}
		if n.Approval != nil {
			to[n.Approval.OnReject] = true
		}
	}
	for i, n := range f.Nodes {
		if n == nil || n.ID == "" || v.ids[n.ID] != i || slices.Contains(ReservedIDs, n.ID) {
			continue
		}
		if !to[n.ID] {
			v.add(CodeUnreachableNode, index("nodes", i), fmt.Sprintf("Node %q is not reachable: nothing routes to it", n.ID))
		}
	}
}
