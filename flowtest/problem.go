package flowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// Problem is one thing wrong with a test file: Code is stable (one of the
// Code… constants), Path names the thing at fault (cases[2].mock.llm.decide),
// Message is for a person.
type Problem struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String renders the problem on one line: path, code and message.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Code + ": " + p.Message
	}
	return p.Path + ": " + p.Code + ": " + p.Message
}

// The codes a Problem carries. docs/testing.md says when each is raised.
const (
	CodeInvalidJSON      = "TEST_INVALID_JSON"    // not one JSON object
	CodeTooLarge         = "TEST_TOO_LARGE"       // a bound of docs/limits.md passed
	CodeUnknownKey       = "TEST_UNKNOWN_KEY"     // a key the test file does not define
	CodeWrongType        = "TEST_WRONG_TYPE"      // a value of the wrong JSON type
	CodeNoCases          = "TEST_NO_CASES"        // cases absent or empty
	CodeMissingName      = "TEST_MISSING_NAME"    // a case without a name
	CodeDuplicateName    = "TEST_DUPLICATE_NAME"  // two cases of one name
	CodeNotLLMNode       = "TEST_NOT_LLM_NODE"    // mock.llm names a node that is not an llm node
	CodeUnknownTool      = "TEST_UNKNOWN_TOOL"    // mock.tools names a tool the flow does not declare
	CodeUnknownChannel   = "TEST_UNKNOWN_CHANNEL" // input or expect.state names an undeclared channel
	CodeUnknownNode      = "TEST_UNKNOWN_NODE"    // expect.path names a node the flow does not have
	CodeEmptyAnswer      = "TEST_EMPTY_ANSWER"    // an answer the engine refuses: null, false, 0 or ""
	CodeErrorAndExpected = "TEST_ERROR_AND_STATE" // expect.error with expect.state: a failed run has no state to compare
)

// The keys each object of a test file may have.
var (
	fileKeys   = []string{"cases"}
	caseKeys   = []string{"name", "input", "answers", "mock", "expect"}
	mockKeys   = []string{"llm", "tools"}
	expectKeys = []string{"state", "path", "error"}
)

// SpecProblems reports everything wrong with a test file for the flow f,
// all at once, each with its path; nil when there is nothing. A mock.llm
// key naming a child agent's node ("<agent>/<node>") is refused: f has no
// children here (SpecProblemsWith).
func SpecProblems(f *flow.Flow, data []byte) []Problem {
	return SpecProblemsWith(f, nil, data)
}

// SpecProblemsWith is SpecProblems for a flow that delegates: children are
// the flows of the agents its agents.json registers, by name, whose llm
// nodes a case may mock as "<agent>/<node>" and whose tools it may mock as
// the flow's own.
func SpecProblemsWith(f *flow.Flow, children map[string]*flow.Flow, data []byte) []Problem {
	var ps problems
	if len(data) > MaxFileBytes {
		ps.add(CodeTooLarge, "", "the file is larger than %d bytes", MaxFileBytes)
		return ps
	}
	var root any
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&root); err != nil {
		ps.add(CodeInvalidJSON, "", "not JSON: %v", err)
		return ps
	}
	if d.More() {
		ps.add(CodeInvalidJSON, "", "more than one JSON value")
		return ps
	}
	obj, ok := ps.object(root, "", "the test file")
	if !ok {
		return ps
	}
	ps.keys(obj, "", fileKeys)
	raw, present := obj["cases"]
	cases, isList := raw.([]any)
	switch {
	case !present || (isList && len(cases) == 0):
		ps.add(CodeNoCases, "cases", "give at least one case")
		return ps
	case !isList:
		ps.add(CodeWrongType, "cases", "want a list of cases")
		return ps
	case len(cases) > MaxCases:
		ps.add(CodeTooLarge, "cases", "%d cases: at most %d in one file", len(cases), MaxCases)
		return ps
	}
	c := checker{f: f, children: children, tools: declaredToolsOf(f, children), names: map[string]int{}, ps: &ps}
	for i, v := range cases {
		c.checkCase(i, v)
	}
	return ps
}

type problems []Problem

func (ps *problems) add(code, path, format string, args ...any) {
	*ps = append(*ps, Problem{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

// object returns v as an object, or says it is not one.
func (ps *problems) object(v any, path, what string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		ps.add(CodeWrongType, path, "%s: want an object", what)
	}
	return m, ok
}

// keys refuses, by name, every key of m not in allowed.
func (ps *problems) keys(m map[string]any, path string, allowed []string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			ps.add(CodeUnknownKey, join(path, k), "unknown key %q (want one of %s)", k, strings.Join(allowed, ", "))
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// checker checks the cases of one file against its flow.
type checker struct {
	f        *flow.Flow
	children map[string]*flow.Flow // the registered agents' flows, by name
	tools    map[string]bool       // "<server>.<tool>" and the flows' tools; nil: no contract
	names    map[string]int        // case name → its index
	ps       *problems
}

func (c *checker) checkCase(i int, v any) {
	path := fmt.Sprintf("cases[%d]", i)
	ps := c.ps
	m, ok := ps.object(v, path, "a case")
	if !ok {
		return
	}
	ps.keys(m, path, caseKeys)
	switch name, ok := m["name"].(string); {
	case m["name"] != nil && !ok:
		ps.add(CodeWrongType, path+".name", "want text")
	case strings.TrimSpace(name) == "":
		ps.add(CodeMissingName, path+".name", "every case needs a name")
	case len(name) > MaxNameBytes:
		ps.add(CodeTooLarge, path+".name", "longer than %d bytes", MaxNameBytes)
	default:
		if first, dup := c.names[name]; dup {
			ps.add(CodeDuplicateName, path+".name", "%q is also the name of cases[%d]", name, first)
		} else {
			c.names[name] = i
		}
	}
	if in, ok := m["input"]; ok {
		if obj, ok := ps.object(in, path+".input", "input"); ok {
			c.channels(obj, path+".input")
		}
	}
	if a, ok := m["answers"]; ok {
		list, ok := a.([]any)
		switch {
		case !ok:
			ps.add(CodeWrongType, path+".answers", "want a list of answers")
		case len(list) > MaxAnswers:
			ps.add(CodeTooLarge, path+".answers", "%d answers: at most %d", len(list), MaxAnswers)
		default:
			for j, v := range list {
				if EmptyAnswer(v) {
					ps.add(CodeEmptyAnswer, fmt.Sprintf("%s.answers[%d]", path, j), "null, false, 0 and \"\" never reach the flow: say \"no\" to refuse an approval")
				}
			}
		}
	}
	if mk, ok := m["mock"]; ok {
		c.checkMock(path+".mock", mk)
	}
	if ex, ok := m["expect"]; ok {
		c.checkExpect(path+".expect", ex)
	}
}

func (c *checker) checkMock(path string, v any) {
	ps := c.ps
	m, ok := ps.object(v, path, "mock")
	if !ok {
		return
	}
	ps.keys(m, path, mockKeys)
	if l, ok := m["llm"]; ok {
		if obj, ok := ps.object(l, path+".llm", "mock.llm"); ok {
			for _, id := range slices.Sorted(maps.Keys(obj)) {
				p := path + ".llm." + id
				f, node, of := c.f, id, "the flow"
				if name, child, ok := strings.Cut(id, "/"); ok {
					f, node, of = c.children[name], child, "agent "+name
					if f == nil {
						ps.add(CodeNotLLMNode, p, "%q names agent %q, which the folder's agents.json does not register", id, name)
						c.replies(p, obj[id], true)
						continue
					}
				}
				if n := nodeOf(f, node); !asksModel(n) {
					what := "no such node"
					if n != nil {
						what = fmt.Sprintf("a %s node", kindOf(n))
					}
					ps.add(CodeNotLLMNode, p, "%q is not an llm node of %s (%s): only llm nodes, and agent nodes choosing among agents, ask the model", node, of, what)
				}
				c.replies(p, obj[id], true)
			}
		}
	}
	if t, ok := m["tools"]; ok {
		if obj, ok := ps.object(t, path+".tools", "mock.tools"); ok {
			for _, name := range slices.Sorted(maps.Keys(obj)) {
				p := path + ".tools." + name
				if _, err := resolveTool(c.tools, name); err != nil {
					ps.add(CodeUnknownTool, p, "%v", err)
				}
				c.replies(p, obj[name], false)
			}
		}
	}
}

// replies checks one mock's value or list; text says an llm reply, which
// must be text or a JSON value written as text.
func (c *checker) replies(path string, v any, text bool) {
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	} else if len(list) > MaxReplies {
		c.ps.add(CodeTooLarge, path, "%d replies: at most %d", len(list), MaxReplies)
		return
	}
	if text {
		for i, r := range list {
			if r == nil {
				p := path
				if isList {
					p = fmt.Sprintf("%s[%d]", path, i)
				}
				c.ps.add(CodeWrongType, p, "want the model's reply: text, or a JSON value for a node with a schema")
			}
		}
	}
}

func (c *checker) checkExpect(path string, v any) {
	ps := c.ps
	m, ok := ps.object(v, path, "expect")
	if !ok {
		return
	}
	ps.keys(m, path, expectKeys)
	if s, ok := m["state"]; ok {
		if obj, ok := ps.object(s, path+".state", "expect.state"); ok {
			c.channels(obj, path+".state")
		}
		if _, also := m["error"]; also {
			ps.add(CodeErrorAndExpected, path, "expect.error and expect.state together: a run that fails has no final state to compare")
		}
	}
	if p, ok := m["path"]; ok {
		list, ok := p.([]any)
		if !ok {
			ps.add(CodeWrongType, path+".path", "want a list of node ids")
		}
		for i, id := range list {
			s, ok := id.(string)
			switch {
			case !ok:
				ps.add(CodeWrongType, fmt.Sprintf("%s.path[%d]", path, i), "want a node id")
			case nodeOf(c.f, s) == nil:
				ps.add(CodeUnknownNode, fmt.Sprintf("%s.path[%d]", path, i), "the flow has no node %q", s)
			}
		}
	}
	if e, ok := m["error"]; ok {
		if s, ok := e.(string); !ok || s == "" {
			ps.add(CodeWrongType, path+".error", "want the text the run's error should contain")
		}
	}
}

// channels refuses each key of obj the flow does not declare as a channel;
// a flow that declares no state checks none.
func (c *checker) channels(obj map[string]any, path string) {
	if c.f.State == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if c.f.State[k] == nil {
			c.ps.add(CodeUnknownChannel, join(path, k), "the flow declares no channel %q", k)
		}
	}
}

func nodeOf(f *flow.Flow, id string) *flow.Node {
	for _, n := range f.Nodes {
		if n != nil && n.ID == id {
			return n
		}
	}
	return nil
}

// asksModel reports whether n asks the model: an llm node, or an agent
// node that chooses among agents.
func asksModel(n *flow.Node) bool {
	return n != nil && (n.Type == flow.KindLLM || (n.Type == flow.KindAgent && len(n.Agents) > 0))
}

func kindOf(n *flow.Node) flow.Kind {
	if n.Type == "" {
		return flow.KindHandler
	}
	return n.Type
}

// DeclaredTools is every tool f may call: "<server>.<tool>" of
// requires.mcp and the names of its tools; nil when it declares none.
func DeclaredTools(f *flow.Flow) map[string]bool { return declaredTools(f) }

// ResolveTool says which of the declared tools (DeclaredTools) a mock key
// names — itself, or the one "<server>.<key>" — or why none; any key when
// declared is nil.
func ResolveTool(declared map[string]bool, key string) (string, error) {
	return resolveTool(declared, key)
}

// declaredToolsOf is every tool f and its children may call — a child's
// calls pass through the agent — or nil when none declares one.
func declaredToolsOf(f *flow.Flow, children map[string]*flow.Flow) map[string]bool {
	out := declaredTools(f)
	for _, c := range children {
		for name := range declaredTools(c) {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}

// declaredTools is every tool f may call: "<server>.<tool>" of
// requires.mcp and the names of its tools; nil when it declares none, and
// so has no contract.
func declaredTools(f *flow.Flow) map[string]bool {
	out := map[string]bool{}
	if f == nil {
		return nil
	}
	if f.Requires != nil {
		for server, s := range f.Requires.MCP {
			if s == nil {
				continue
			}
			for _, t := range s.Tools {
				out[server+"."+t.Name] = true
			}
		}
	}
	for _, t := range f.Tools {
		out[t.Name] = true
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// resolveTool says which declared tool a mock key names: itself, or the one
// declared tool "<server>.<key>".
func resolveTool(declared map[string]bool, key string) (string, error) {
	if declared == nil || declared[key] {
		return key, nil
	}
	var found []string
	for name := range declared {
		if _, tool, ok := strings.Cut(name, "."); ok && tool == key {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("the flow declares no tool %q (declared: %s)", key, strings.Join(slices.Sorted(maps.Keys(declared)), ", "))
	}
	return "", fmt.Errorf("%q could be any of %s: name one as <server>.<tool>", key, strings.Join(found, ", "))
}

// EmptyAnswer reports an answer the engine refuses: null, false, 0 or "".
func EmptyAnswer(a any) bool {
	switch a := a.(type) {
	case nil:
		return true
	case bool:
		return !a
	case string:
		return strings.TrimSpace(a) == ""
	case float64:
		return a == 0
	}
	return false
}
