package evals

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/flowtest"
)

// Problem is one thing wrong with a suite: Code is stable (one of the
// Code… constants), Path names the thing at fault (cases[2].mock.llm),
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

// The codes a Problem carries. docs/evals.md says when each is raised.
const (
	CodeInvalidJSON          = "EVAL_INVALID_JSON"          // not one JSON object
	CodeTooLarge             = "EVAL_TOO_LARGE"             // a bound of docs/limits.md passed
	CodeUnknownKey           = "EVAL_UNKNOWN_KEY"           // a key the suite does not define
	CodeWrongType            = "EVAL_WRONG_TYPE"            // a value of the wrong JSON type or out of its range
	CodeNoCases              = "EVAL_NO_CASES"              // neither cases nor a dataset with a row
	CodeMissingName          = "EVAL_MISSING_NAME"          // a case without a name
	CodeDuplicateName        = "EVAL_DUPLICATE_NAME"        // two cases, or two criteria, of one name
	CodeNoCriteria           = "EVAL_NO_CRITERIA"           // criteria absent or empty
	CodeCriterionName        = "EVAL_CRITERION_NAME"        // a criterion's name not ^[a-z][a-z0-9_]{0,63}$
	CodeCriterionDescription = "EVAL_CRITERION_DESCRIPTION" // a criterion without a description
	CodeMockedModel          = "EVAL_MOCKED_MODEL"          // mock.llm: an eval runs the model for real
	CodeUnknownChannel       = "EVAL_UNKNOWN_CHANNEL"       // input, expect.state or output naming an undeclared channel
	CodeUnknownTool          = "EVAL_UNKNOWN_TOOL"          // mock.tools naming a tool the flow does not declare
	CodeUnknownNode          = "EVAL_UNKNOWN_NODE"          // expect.path naming a node the flow does not have
	CodeEmptyAnswer          = "EVAL_EMPTY_ANSWER"          // an answer of null, false, 0 or ""
	CodeErrorAndState        = "EVAL_ERROR_AND_STATE"       // expect.error with expect.state
	CodeDataset              = "EVAL_DATASET"               // the dataset unreadable, or a row wrong (with its line)
	CodeThreshold            = "EVAL_THRESHOLD"             // a threshold out of 0..1, or naming no criterion
	CodeFlow                 = "EVAL_FLOW"                  // the folder's flow cannot be loaded or is invalid
)

// EvalFileError is a suite that cannot run at all, as opposed to one that
// scores badly: every problem with it, said at once. Run and Preview return
// it before a model is built.
type EvalFileError struct {
	File     string
	Problems []Problem
}

func (e *EvalFileError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return fmt.Sprintf("%s: %d %s: %s", e.File, len(e.Problems), plural(len(e.Problems), "problem", "problems"), strings.Join(lines, "; "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// The keys each object of a suite may have.
var (
	suiteKeys     = []string{"description", "cases", "dataset", "output", "criteria", "judge", "thresholds"}
	caseKeys      = []string{"name", "input", "answers", "mock", "reference", "expect"}
	mockKeys      = []string{"tools"}
	expectKeys    = []string{"state", "path", "error"}
	criterionKeys = []string{"name", "description", "weight"}
	judgeKeys     = []string{"model", "instructions", "attempts"}
	thresholdKeys = []string{"score", "criteria"}
)

// criterionName is what a criterion's name must match.
var criterionName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Problems reports everything wrong with a suite's bytes for the flow f,
// all at once, each with its path; nil when there is nothing. A nil f
// checks the file alone: no channel, node or tool is refused. It does not
// read the dataset: the runners do (datasetProblems), before a model call.
func Problems(data []byte, f *flow.Flow) []Problem {
	ps, _ := problemsOf(data, f)
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// problemsOf is Problems, and the checker that holds the cases' names, to
// check a dataset's rows with.
func problemsOf(data []byte, f *flow.Flow) (problems, *checker) {
	var ps problems
	c := &checker{f: f, names: map[string]string{}, ps: &ps}
	if f != nil {
		c.tools = flowtest.DeclaredTools(f)
	}
	if len(data) > MaxFileBytes {
		ps.add(CodeTooLarge, "", "the file is larger than %d bytes", MaxFileBytes)
		return ps, c
	}
	var root any
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&root); err != nil {
		ps.add(CodeInvalidJSON, "", "not JSON: %v", err)
		return ps, c
	}
	if d.More() {
		ps.add(CodeInvalidJSON, "", "more than one JSON value")
		return ps, c
	}
	obj, ok := ps.object(root, "", "the eval file")
	if !ok {
		return ps, c
	}
	ps.keys(obj, "", suiteKeys)
	if v, ok := obj["description"]; ok {
		ps.text(v, "description", MaxDescriptionBytes, false)
	}
	raw, hasCases := obj["cases"]
	cases, isList := raw.([]any)
	ds, hasDataset := obj["dataset"]
	switch {
	case hasCases && !isList:
		ps.add(CodeWrongType, "cases", "want a list of cases")
	case len(cases) > MaxCases:
		ps.add(CodeTooLarge, "cases", "%d cases: at most %d in one suite", len(cases), MaxCases)
	case len(cases) == 0 && !hasDataset:
		ps.add(CodeNoCases, "cases", "give at least one case, or a dataset")
	default:
		for i, v := range cases {
			c.checkCase(fmt.Sprintf("cases[%d]", i), v, "")
		}
	}
	if hasDataset {
		s, ok := ds.(string)
		switch {
		case !ok || s == "":
			ps.add(CodeWrongType, "dataset", "want the name of a JSON Lines file beside the eval file")
		case filepath.IsAbs(s) || strings.Contains(filepath.ToSlash(s), "..") || strings.ContainsAny(s, `/\`):
			ps.add(CodeDataset, "dataset", "%q: name a file beside the eval file, without a folder", s)
		}
	}
	if v, ok := obj["output"]; ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			ps.add(CodeWrongType, "output", "want a list of the channels the judge reads")
		}
		for i, x := range list {
			p := fmt.Sprintf("output[%d]", i)
			s, ok := x.(string)
			switch {
			case !ok || s == "":
				ps.add(CodeWrongType, p, "want a channel's name")
			case f != nil && f.State != nil && f.State[s] == nil:
				ps.add(CodeUnknownChannel, p, "the flow declares no channel %q", s)
			}
		}
	}
	criteria := c.checkCriteria(obj)
	if v, ok := obj["judge"]; ok {
		c.checkJudge(v)
	}
	if v, ok := obj["thresholds"]; ok {
		c.checkThresholds(v, criteria)
	}
	return ps, c
}

type problems []Problem

func (ps *problems) add(code, path, format string, args ...any) {
	*ps = append(*ps, Problem{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) object(v any, path, what string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		ps.add(CodeWrongType, path, "%s: want an object", what)
	}
	return m, ok
}

func (ps *problems) keys(m map[string]any, path string, allowed []string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			ps.add(CodeUnknownKey, join(path, k), "unknown key %q (want one of %s)", k, strings.Join(allowed, ", "))
		}
	}
}

// text checks v is text within max bytes; required refuses "".
func (ps *problems) text(v any, path string, max int, required bool) (string, bool) {
	s, ok := v.(string)
	switch {
	case !ok:
		ps.add(CodeWrongType, path, "want text")
	case len(s) > max:
		ps.add(CodeTooLarge, path, "longer than %d bytes", max)
	case required && strings.TrimSpace(s) == "":
		return "", false
	default:
		return s, true
	}
	return "", false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// checker checks a suite's cases (and its dataset's rows) against its
// flow.
type checker struct {
	f     *flow.Flow
	tools map[string]bool
	names map[string]string // case name → the path of the case that has it
	ps    *problems
}

// checkCase checks one case at path; defaultName, for a dataset's row, is
// its name when it gives none (and then input is required).
func (c *checker) checkCase(path string, v any, defaultName string) {
	ps := c.ps
	m, ok := ps.object(v, path, "a case")
	if !ok {
		return
	}
	ps.keys(m, path, caseKeys)
	name, given := m["name"]
	switch s, ok := name.(string); {
	case given && !ok:
		ps.add(CodeWrongType, path+".name", "want text")
	case strings.TrimSpace(s) == "" && defaultName == "":
		ps.add(CodeMissingName, path+".name", "every case needs a name")
	case len(s) > MaxNameBytes:
		ps.add(CodeTooLarge, path+".name", "longer than %d bytes", MaxNameBytes)
	default:
		if strings.TrimSpace(s) == "" {
			s = defaultName
		}
		if first, dup := c.names[s]; dup {
			ps.add(CodeDuplicateName, path+".name", "%q is also the name of %s", s, first)
		} else {
			c.names[s] = path
		}
	}
	if in, ok := m["input"]; ok {
		if obj, ok := ps.object(in, path+".input", "input"); ok {
			c.channels(obj, path+".input")
		}
	} else if defaultName != "" {
		ps.add(CodeDataset, path, "the row has no input: every row of a dataset needs one")
	}
	if a, ok := m["answers"]; ok {
		list, ok := a.([]any)
		switch {
		case !ok:
			ps.add(CodeWrongType, path+".answers", "want a list of answers")
		case len(list) > flowtest.MaxAnswers:
			ps.add(CodeTooLarge, path+".answers", "%d answers: at most %d", len(list), flowtest.MaxAnswers)
		default:
			for j, v := range list {
				if flowtest.EmptyAnswer(v) {
					ps.add(CodeEmptyAnswer, fmt.Sprintf("%s.answers[%d]", path, j), "null, false, 0 and \"\" never reach the flow: say \"no\" to refuse an approval")
				}
			}
		}
	}
	if v, ok := m["reference"]; ok {
		ps.text(v, path+".reference", MaxDescriptionBytes, false)
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
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "tools":
		case "llm":
			ps.add(CodeMockedModel, path+".llm", "an eval runs the model for real: mocked replies belong in a *.test.json (agent test)")
		default:
			ps.add(CodeUnknownKey, join(path, k), "unknown key %q (want one of %s)", k, strings.Join(mockKeys, ", "))
		}
	}
	t, ok := m["tools"]
	if !ok {
		return
	}
	obj, ok := ps.object(t, path+".tools", "mock.tools")
	if !ok {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		p := path + ".tools." + name
		if _, err := flowtest.ResolveTool(c.tools, name); err != nil {
			ps.add(CodeUnknownTool, p, "%v", err)
		}
		if list, ok := obj[name].([]any); ok && len(list) > flowtest.MaxReplies {
			ps.add(CodeTooLarge, p, "%d results: at most %d", len(list), flowtest.MaxReplies)
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
			ps.add(CodeErrorAndState, path, "expect.error and expect.state together: a run that fails has no final state to compare")
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
			case !hasNode(c.f, s):
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

// checkCriteria checks the criteria and returns their names.
func (c *checker) checkCriteria(obj map[string]any) map[string]bool {
	ps := c.ps
	names := map[string]bool{}
	raw, ok := obj["criteria"]
	list, isList := raw.([]any)
	switch {
	case !ok || (isList && len(list) == 0):
		ps.add(CodeNoCriteria, "criteria", "give at least one criterion for the judge to score")
		return names
	case !isList:
		ps.add(CodeWrongType, "criteria", "want a list of criteria")
		return names
	case len(list) > MaxCriteria:
		ps.add(CodeTooLarge, "criteria", "%d criteria: at most %d", len(list), MaxCriteria)
		return names
	}
	for i, v := range list {
		path := fmt.Sprintf("criteria[%d]", i)
		m, ok := ps.object(v, path, "a criterion")
		if !ok {
			continue
		}
		ps.keys(m, path, criterionKeys)
		switch name, ok := m["name"].(string); {
		case !ok:
			ps.add(CodeCriterionName, path+".name", "every criterion needs a name: lower-case letters, digits and _, starting with a letter, at most 64")
		case !criterionName.MatchString(name):
			ps.add(CodeCriterionName, path+".name", "%q: want lower-case letters, digits and _, starting with a letter, at most 64", name)
		case names[name]:
			ps.add(CodeDuplicateName, path+".name", "%q names another criterion too", name)
		default:
			names[name] = true
		}
		if d, ok := m["description"]; !ok {
			ps.add(CodeCriterionDescription, path+".description", "say what the judge looks for: the description is all the judge knows of the criterion")
		} else if _, ok := ps.text(d, path+".description", MaxDescriptionBytes, true); !ok {
			if s, isText := d.(string); isText && strings.TrimSpace(s) == "" {
				ps.add(CodeCriterionDescription, path+".description", "empty: say what the judge looks for")
			}
		}
		if w, ok := m["weight"]; ok {
			if n, ok := w.(float64); !ok || n <= 0 || n > 1000 {
				ps.add(CodeWrongType, path+".weight", "want a number above 0, at most 1000")
			}
		}
	}
	return names
}

func (c *checker) checkJudge(v any) {
	ps := c.ps
	m, ok := ps.object(v, "judge", "judge")
	if !ok {
		return
	}
	ps.keys(m, "judge", judgeKeys)
	if x, ok := m["model"]; ok {
		ps.text(x, "judge.model", MaxNameBytes, false)
	}
	if x, ok := m["instructions"]; ok {
		ps.text(x, "judge.instructions", MaxDescriptionBytes, false)
	}
	if x, ok := m["attempts"]; ok {
		if n, ok := x.(float64); !ok || n != float64(int(n)) || n < 1 || n > MaxAttempts {
			ps.add(CodeWrongType, "judge.attempts", "want a whole number from 1 to %d", MaxAttempts)
		}
	}
}

func (c *checker) checkThresholds(v any, criteria map[string]bool) {
	ps := c.ps
	m, ok := ps.object(v, "thresholds", "thresholds")
	if !ok {
		return
	}
	ps.keys(m, "thresholds", thresholdKeys)
	if x, ok := m["score"]; ok {
		threshold(ps, "thresholds.score", x)
	}
	if x, ok := m["criteria"]; ok {
		obj, ok := ps.object(x, "thresholds.criteria", "thresholds.criteria")
		if !ok {
			return
		}
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			p := "thresholds.criteria." + name
			if !criteria[name] {
				ps.add(CodeThreshold, p, "no criterion is named %q", name)
			}
			threshold(ps, p, obj[name])
		}
	}
}

func threshold(ps *problems, path string, v any) {
	if n, ok := v.(float64); !ok || n < 0 || n > 1 {
		ps.add(CodeThreshold, path, "want a score from 0 to 1")
	}
}

// channels refuses each key of obj the flow does not declare as a channel.
func (c *checker) channels(obj map[string]any, path string) {
	if c.f == nil || c.f.State == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if c.f.State[k] == nil {
			c.ps.add(CodeUnknownChannel, join(path, k), "the flow declares no channel %q", k)
		}
	}
}

func hasNode(f *flow.Flow, id string) bool {
	if f == nil {
		return true
	}
	for _, n := range f.Nodes {
		if n != nil && n.ID == id {
			return true
		}
	}
	return false
}
