package flow

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Readiness answers "is enough written down to generate code?", which is
// not Validate's question ("will this compile?"). A flow is Ready when it is
// valid and has no finding of severity SeverityProblem; warnings are advice.
type Readiness struct {
	Ready    bool
	Findings []Finding
	Plan     Plan
}

// Finding is one thing readiness found.
type Finding struct {
	Code     string
	Severity string
	Message  string
	Path     string
}

// Severities of a Finding.
const (
	SeverityProblem = "problem" // the flow is not ready
	SeverityWarning = "warning" // advice: a run may get this wrong later
)

func (f Finding) String() string {
	s := f.Code + " (" + f.Severity + "): " + f.Message
	if f.Path != "" {
		s = f.Path + ": " + s
	}
	return s
}

// Plan is what generating the flow would write. Handlers, Routers, Tools
// and Services are units, each written from a description; Declared is what
// MCP servers bring: "<server>" for each client and "<server>.<tool>" for
// every tool it declares, whether or not a node calls it.
type Plan struct {
	Handlers []string
	Routers  []string
	Tools    []string
	Services []string
	Declared []string
}

// The codes of readiness findings. Validation problems keep their own codes.
const (
	// Not ready.
	ReadyNoDescription     = "NO_DESCRIPTION"
	ReadyNoInputs          = "NO_INPUTS"
	ReadyNoOutputs         = "NO_OUTPUTS"
	ReadyChannelUntyped    = "CHANNEL_UNTYPED"
	ReadyHandlerUndescribe = "HANDLER_UNDESCRIBED"
	ReadyRouteUnexplained  = "ROUTE_UNEXPLAINED"
	ReadyToolUndescribed   = "TOOL_UNDESCRIBED"
	// Warnings.
	ReadyDescriptionThin    = "DESCRIPTION_TOO_THIN"
	ReadyToolNoEndpoint     = "TOOL_WITHOUT_ENDPOINT"
	ReadyWriteNoApproval    = "WRITE_WITHOUT_APPROVAL"
	ReadyConversationUnread = "CONVERSATION_UNREAD"
	ReadyChannelForgets     = "CHANNEL_FORGETS_BETWEEN_TURNS"
	ReadyAskOverwritesInput = "ASK_OVERWRITES_INPUT"
	ReadyShowsRawData       = "VIEW_SHOWS_RAW_DATA"
	ReadyMCPPackageMissing  = "MCP_PACKAGE_MISSING"
	ReadyFanoutSilences     = "FANOUT_MAY_SILENCE_THE_TAIL"
	ReadyShapeUnchecked     = "LLM_SHAPE_UNCHECKED"
)

// thinWords: a description under this many words is too thin.
const thinWords = 4

var (
	// fetchesWords: a tool that says it does one of these should name where.
	fetchesWords = regexp.MustCompile(`(?i)\b(fetch|fetches|search|searches|generate|generates|look(s)? up|download|downloads|call(s)? the)\b`)
	endpointWord = regexp.MustCompile(`(?i)(https?://|\bendpoint\b|\bAPI\b|/[a-z0-9_-]+/|\bMCP\b)`)
	// writesWords: a tool whose name or description says it changes
	// something outside the run.
	writesWords = regexp.MustCompile(`(?i)^(create|creates|update|updates|delete|deletes|remove|removes|write|writes|send|sends|post|posts|pay|pays|charge|charges|refund|refunds|cancel|cancels|transfer|transfers|insert|inserts|book|books|order|orders|publish|publishes|approve|approves|submit|submits)$`)
	// wordStart splits a tool name into words: snake, kebab and camel case.
	wordStart = regexp.MustCompile(`[_\-.]+|([a-z])([A-Z])`)
	// countedWords: a number channel described as adding up across turns.
	countedWords = regexp.MustCompile(`(?i)(so far|in total|running|across|every message|each message|per conversation|spent|count)`)
)

// CheckReadiness checks f for readiness, as "Ready to generate" in the
// flow language reference describes. The heuristics behind the warnings
// are in docs/flow.md.
func CheckReadiness(f *Flow) Readiness {
	r := &readiness{f: f}
	for _, p := range Validate(f) {
		r.add(p.Code, SeverityProblem, p.Path, "%s", p.Message)
	}
	r.flowLevel()
	r.channels()
	r.nodes()
	r.edges()
	r.tools()
	r.services()
	slices.SortStableFunc(r.findings, func(a, b Finding) int {
		if a.Severity != b.Severity {
			if a.Severity == SeverityProblem {
				return -1
			}
			return 1
		}
		return 0
	})
	ready := true
	for _, fd := range r.findings {
		if fd.Severity == SeverityProblem {
			ready = false
		}
	}
	return Readiness{Ready: ready, Findings: r.findings, Plan: PlanOf(f)}
}

// PlanOf lists what generating f would write.
func PlanOf(f *Flow) Plan {
	var p Plan
	for _, n := range f.Nodes {
		if n != nil && n.Kind() == KindHandler && n.Handler != "" {
			p.Handlers = append(p.Handlers, n.Handler)
		}
	}
	for _, e := range f.Edges {
		// A channel router ("=decision") is the engine's, not a unit.
		if e != nil && e.Router != "" && !strings.HasPrefix(e.Router, ChannelRouterPrefix) {
			p.Routers = append(p.Routers, e.Router)
		}
	}
	for _, t := range f.Tools {
		p.Tools = append(p.Tools, t.Name)
	}
	if f.Requires != nil {
		for name := range f.Requires.Services {
			p.Services = append(p.Services, name)
		}
		for server, decl := range f.Requires.MCP {
			p.Declared = append(p.Declared, server)
			if decl != nil {
				for _, t := range decl.Tools {
					p.Declared = append(p.Declared, server+"."+t.Name)
				}
			}
		}
	}
	for _, l := range []*[]string{&p.Handlers, &p.Routers, &p.Tools, &p.Services, &p.Declared} {
		sort.Strings(*l)
		*l = slices.Compact(*l)
	}
	return p
}

type readiness struct {
	f        *Flow
	findings []Finding
}

func (r *readiness) add(code, severity, path, format string, a ...any) {
	msg := format
	if len(a) > 0 {
		msg = fmt.Sprintf(format, a...)
	}
	r.findings = append(r.findings, Finding{Code: code, Severity: severity, Message: msg, Path: path})
}

func (r *readiness) thin(path, what, desc string) {
	if n := len(strings.Fields(desc)); desc != "" && n < thinWords {
		r.add(ReadyDescriptionThin, SeverityWarning, path, "%s is described in %d word(s); under %d is too thin to write code from", what, n, thinWords)
	}
}

func (r *readiness) flowLevel() {
	f := r.f
	if strings.TrimSpace(f.Description) == "" {
		r.add(ReadyNoDescription, SeverityProblem, "description", "The flow has no description: say what it is for")
	} else {
		r.thin("description", "The flow", f.Description)
	}
	if len(f.Inputs) == 0 {
		r.add(ReadyNoInputs, SeverityProblem, "inputs", "The flow names no inputs: say which channels a run is handed")
	}
	if len(f.Outputs) == 0 {
		r.add(ReadyNoOutputs, SeverityProblem, "outputs", "The flow names no outputs: say which channels a run hands back")
	}
}

func (r *readiness) channels() {
	f := r.f
	for _, name := range readinessKeys(f.State) {
		ch := f.State[name]
		path := "state." + name
		if ch == nil || ch.Type == "" {
			r.add(ReadyChannelUntyped, SeverityProblem, path, "Channel %q has no type: the handlers that read and write it will disagree about its shape", name)
			continue
		}
		if f.Conversation && ch.Type == ChannelNumber && !ch.Remembers && countedWords.MatchString(ch.Description) {
			r.add(ReadyChannelForgets, SeverityWarning, path, "Channel %q is counted across the conversation but does not say remembers: it is back at its default by the next message", name)
		}
	}
}

func (r *readiness) nodes() {
	f := r.f
	readsHistory := false
	for i, n := range f.Nodes {
		if n == nil {
			continue
		}
		path := fmt.Sprintf("nodes[%d]", i)
		for _, s := range []string{n.Prompt, n.Ask} {
			if slices.Contains(placeholders(s), "history") {
				readsHistory = true
			}
		}
		if n.Kind() == KindHandler {
			if strings.TrimSpace(n.Description) == "" {
				r.add(ReadyHandlerUndescribe, SeverityProblem, path, "Handler node %q has no description: it is the whole specification its code is written from", n.ID)
			} else {
				r.thin(path+".description", fmt.Sprintf("Handler node %q", n.ID), n.Description)
			}
		}
		if n.Kind() == KindAsk && n.Output != "" && slices.Contains(f.Inputs, n.Output) {
			r.add(ReadyAskOverwritesInput, SeverityWarning, path, "Ask node %q writes its answer over %q, which the run was handed as an input", n.ID, n.Output)
		}
		if n.Approval != nil {
			for j, ch := range n.Approval.Show {
				if c := f.State[ch]; c != nil && (c.Type == ChannelList || c.Type == ChannelObject) {
					r.add(ReadyShowsRawData, SeverityWarning, fmt.Sprintf("%s.approval.show[%d]", path, j),
						"The approval card shows %q, a whole %s, which comes out as JSON in the conversation: show the fields a person decides on", ch, c.Type)
				}
			}
		}
		if n.Kind() == KindTool && n.Approval == nil && r.writes(n.Tool) {
			r.add(ReadyWriteNoApproval, SeverityWarning, path, "Tool node %q calls %q, which changes something, and nobody is asked first: give the node an approval", n.ID, n.Tool)
		}
		if n.Kind() == KindLLM && n.Schema == nil {
			if c := f.State[n.Output]; c != nil && (c.Type == ChannelList || c.Type == ChannelObject) {
				r.add(ReadyShapeUnchecked, SeverityWarning, path,
					"LLM node %q fills %q, a %s, from a model with no schema: the answer's shape is read, not checked - give the node a schema", n.ID, n.Output, c.Type)
			}
		}
		if n.Kind() == KindFanout && !r.routedAround(n.ID) {
			r.add(ReadyFanoutSilences, SeverityWarning, path,
				"Fan-out %q sends nothing for an empty %q, and then nothing after it runs either: route around it from the node in front of it", n.ID, n.Over)
		}
	}
	if f.Conversation && !readsHistory {
		r.add(ReadyConversationUnread, SeverityWarning, "conversation", "The flow is a conversation but no prompt reads {{history}}: every message is answered as if it were the first")
	}
}

// routedAround reports whether some conditional edge into the fan-out id
// offers a route elsewhere, so an empty list can skip it.
func (r *readiness) routedAround(id string) bool {
	for _, e := range r.f.Edges {
		if e == nil || e.Routes == nil {
			continue
		}
		into, elsewhere := false, false
		for _, to := range e.Routes {
			if to == id {
				into = true
			} else {
				elsewhere = true
			}
		}
		if into && elsewhere {
			return true
		}
	}
	return false
}

func (r *readiness) edges() {
	for i, e := range r.f.Edges {
		if e == nil || e.Routes == nil {
			continue
		}
		for _, route := range readinessKeys(e.Routes) {
			if strings.TrimSpace(e.When[route]) == "" {
				r.add(ReadyRouteUnexplained, SeverityProblem, fmt.Sprintf("edges[%d].when.%s", i, route),
					"Route %q of router %q has no sentence in when: say when it is taken", route, e.Router)
			}
		}
	}
}

// toolDescription finds what the flow says about a tool: in tools, or in
// requires.mcp for "<server>.<tool>".
func (r *readiness) toolDescription(name string) (desc string, declared bool) {
	for _, t := range r.f.Tools {
		if t.Name == name {
			return t.Description, true
		}
	}
	if server, tool, ok := strings.Cut(name, "."); ok && r.f.Requires != nil {
		if decl := r.f.Requires.MCP[server]; decl != nil {
			for _, t := range decl.Tools {
				if t.Name == tool {
					return t.Description, true
				}
			}
		}
	}
	return "", false
}

// writes reports whether a tool's name, or its description, starts with a
// verb that changes something outside the run.
func (r *readiness) writes(tool string) bool {
	desc, _ := r.toolDescription(tool)
	_, name, ok := strings.Cut(tool, ".")
	if !ok {
		name = tool
	}
	nameVerb := strings.Fields(wordStart.ReplaceAllString(name, "$1 $2") + " x")[0]
	descVerb := strings.Fields(desc + " x")[0]
	return writesWords.MatchString(nameVerb) || writesWords.MatchString(descVerb)
}

func (r *readiness) tools() {
	for i, n := range r.f.Nodes {
		if n == nil || n.Kind() != KindTool || n.Tool == "" {
			continue
		}
		desc, declared := r.toolDescription(n.Tool)
		if declared && strings.TrimSpace(desc) == "" {
			r.add(ReadyToolUndescribed, SeverityProblem, fmt.Sprintf("nodes[%d].tool", i), "Tool %q is declared without a description", n.Tool)
		}
	}
	for i, t := range r.f.Tools {
		path := fmt.Sprintf("tools[%d].description", i)
		r.thin(path, fmt.Sprintf("Tool %q", t.Name), t.Description)
		if fetchesWords.MatchString(t.Description) && !endpointWord.MatchString(t.Description) {
			r.add(ReadyToolNoEndpoint, SeverityWarning, path, "Tool %q says what it fetches but not from where: name the endpoint, or a model will pick a provider and guess its parameters", t.Name)
		}
	}
}

func (r *readiness) services() {
	req := r.f.Requires
	if req == nil {
		return
	}
	hasMCPPackage := false
	for pkg := range req.Packages {
		if strings.Contains(pkg, "modelcontextprotocol") {
			hasMCPPackage = true
		}
	}
	for _, name := range readinessKeys(req.Services) {
		desc := req.Services[name]
		path := "requires.services." + name
		r.thin(path, fmt.Sprintf("Service %q", name), desc)
		if strings.Contains(desc, "MCP") && !hasMCPPackage {
			r.add(ReadyMCPPackageMissing, SeverityWarning, path, "Service %q talks to an MCP server but requires.packages has no MCP client package", name)
		}
	}
}

func readinessKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
