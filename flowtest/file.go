package flowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Suffix ends the name of every test file: DIR/*.test.json beside
// DIR/flow.json.
const Suffix = ".test.json"

// The bounds on a test file and on a case's run (docs/limits.md).
const (
	// MaxFileBytes is the largest test file that is read.
	MaxFileBytes = 4 << 20
	// MaxCases is the most cases one test file may hold.
	MaxCases = 1000
	// MaxNameBytes is the longest a case's name may be.
	MaxNameBytes = 200
	// MaxAnswers is the most answers one case may give.
	MaxAnswers = 100
	// MaxReplies is the most replies one mock may list.
	MaxReplies = 100
	// DefaultTimeout is how long one case may run when Config.Timeout is
	// zero; more fails the case.
	DefaultTimeout = 30 * time.Second
)

// File is one test file: its cases, run in order.
type File struct {
	Cases []Case `json:"cases"`
}

// Case is one run of the flow and what it should do.
type Case struct {
	// Name says what the case is about; unique in its file.
	Name string `json:"name"`
	// Input is written to the run's channels, as Invoke's input.
	Input map[string]any `json:"input,omitempty"`
	// Answers answer the asks and approvals the run stops at, in the order
	// it stops: "yes" or "no" to an approval, a value to an ask.
	Answers []any `json:"answers,omitempty"`
	// Mock answers the model and the tools.
	Mock Mock `json:"mock,omitzero"`
	// Expect is what the run should do.
	Expect Expect `json:"expect,omitzero"`
}

// Mock is what a case answers for the model and the tools. A single value
// answers every call; a list answers the calls in order, and a call past
// its end fails the case.
type Mock struct {
	// LLM holds the model's replies by llm node id: text, or a JSON value
	// written as text for a node with a schema.
	LLM map[string]Replies `json:"llm,omitempty"`
	// Tools holds the results by tool, "<server>.<tool>" or "<tool>". A
	// result {"error": "text"} (that one key, a string) makes the call fail
	// with that text.
	Tools map[string]Replies `json:"tools,omitempty"`
}

// Expect is what a case expects of its run. Only what it names is
// compared.
type Expect struct {
	// State holds the channels compared, each by exact JSON equality with
	// the final state; channels it does not name are not compared.
	State map[string]any `json:"state,omitempty"`
	// Path is the nodes whose steps ended, in order; nil: not compared.
	Path []string `json:"path,omitempty"`
	// Error: the run must fail with an error containing this text; "":
	// the run must finish.
	Error string `json:"error,omitempty"`
}

// Replies is a mock's answers: Each is the list; Repeat is set when the
// file gave one value rather than a list, which answers every call.
type Replies struct {
	Each   []any
	Repeat bool
}

// UnmarshalJSON reads one value or a list of values.
func (r *Replies) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if list, ok := v.([]any); ok {
		r.Each, r.Repeat = list, false
		return nil
	}
	r.Each, r.Repeat = []any{v}, true
	return nil
}

// MarshalJSON writes Replies back as they were read.
func (r Replies) MarshalJSON() ([]byte, error) {
	if r.Repeat && len(r.Each) == 1 {
		return json.Marshal(r.Each[0])
	}
	return json.Marshal(r.Each)
}

// Read reads a test file, within MaxFileBytes, and returns its bytes.
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", filepath.Base(path), MaxFileBytes)
	}
	return b, nil
}

// Parse decodes a test file. It does not check it: SpecProblems does.
func Parse(data []byte) (*File, error) {
	var f File
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Files lists the test files in dir (*.test.json), sorted by name.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), Suffix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}
