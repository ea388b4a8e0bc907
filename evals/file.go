package evals

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/symphonix/symphonix/flowtest"
)

// Suffix ends the name of every suite: DIR/*.eval.json beside
// DIR/flow.json.
const Suffix = ".eval.json"

// The bounds on a suite, its dataset and its runs (docs/limits.md).
const (
	// MaxFileBytes is the largest suite file that is read.
	MaxFileBytes = 4 << 20
	// MaxDatasetBytes is the largest dataset file that is read.
	MaxDatasetBytes = 64 << 20
	// MaxDatasetLineBytes is the longest line of a dataset.
	MaxDatasetLineBytes = 1 << 20
	// MaxCases is the most cases one suite may hold, its dataset's rows
	// included.
	MaxCases = 10000
	// MaxNameBytes is the longest a case's name may be.
	MaxNameBytes = 200
	// MaxCriteria is the most criteria a suite may have.
	MaxCriteria = 32
	// MaxDescriptionBytes is the longest a criterion's description, the
	// judge's instructions or a case's reference may be.
	MaxDescriptionBytes = 4 << 10
	// MaxAttempts is the most attempts the judge may be given per case.
	MaxAttempts = 10
	// DefaultAttempts is the judge's attempts when the suite gives none.
	DefaultAttempts = 3
	// MaxOutputBytes bounds each judged channel, as JSON, in the judge's
	// prompt and in the result; a longer one is cut and ends with "…".
	MaxOutputBytes = 8 << 10
	// MaxEvents is the most events a case's result keeps; later ones are
	// counted, not kept.
	MaxEvents = 200
	// DefaultTimeout is how long one case may run when Config.Timeout is
	// zero, answers included; more ends it as an agent error.
	DefaultTimeout = 2 * time.Minute
)

// Suite is one eval file.
type Suite struct {
	// Description says what the suite is about.
	Description string `json:"description,omitempty"`
	// Cases are the suite's own cases, run before the dataset's.
	Cases []Case `json:"cases,omitempty"`
	// Dataset names a JSON Lines file beside the suite, one case a line.
	Dataset string `json:"dataset,omitempty"`
	// Output names the channels the judge reads; empty: the flow's
	// declared outputs, else every channel the run wrote.
	Output []string `json:"output,omitempty"`
	// Criteria are what the judge scores, each from 0 to 1.
	Criteria []Criterion `json:"criteria"`
	// Judge configures the judge.
	Judge Judge `json:"judge,omitzero"`
	// Thresholds, when set, are what a run must reach to pass.
	Thresholds *Thresholds `json:"thresholds,omitempty"`
}

// Case is one run of the flow and what a good answer says.
type Case struct {
	Name string `json:"name"`
	// Input is written to the run's channels.
	Input map[string]any `json:"input,omitempty"`
	// Answers answer the asks and approvals the run stops at, in order.
	Answers []any `json:"answers,omitempty"`
	// Mock holds the tools the case mocks; the model is never mocked.
	Mock Mock `json:"mock,omitzero"`
	// Reference is what a good answer says, shown to the judge.
	Reference string `json:"reference,omitempty"`
	// Expect are deterministic checks, reported per case.
	Expect flowtest.Expect `json:"expect,omitzero"`
}

// Mock is what a case mocks: tools only.
type Mock struct {
	Tools map[string]flowtest.Replies `json:"tools,omitempty"`
}

// Criterion is one thing the judge scores.
type Criterion struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight,omitempty"`
}

// Judge is the suite's word on its judge.
type Judge struct {
	// Model is the judge's model when JUDGE_MODEL is not set.
	Model string `json:"model,omitempty"`
	// Instructions are added to the judge's prompt.
	Instructions string `json:"instructions,omitempty"`
	// Attempts is how many times the judge is asked for a reply that fits
	// the schema; 0: DefaultAttempts.
	Attempts int `json:"attempts,omitempty"`
}

// Thresholds are what a run must reach: a mean score, and a mean per
// criterion.
type Thresholds struct {
	Score    *float64           `json:"score,omitempty"`
	Criteria map[string]float64 `json:"criteria,omitempty"`
}

// weight is c's weight, 1 when the suite gives none.
func (c Criterion) weight() float64 {
	if c.Weight == 0 {
		return 1
	}
	return c.Weight
}

// Suites lists the suites in dir (*.eval.json), sorted by name.
func Suites(dir string) ([]string, error) {
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

// read reads a file within max bytes.
func read(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", filepath.Base(path), max)
	}
	return b, nil
}

// parse decodes a suite that Problems accepted.
func parse(data []byte) (*Suite, error) {
	var s Suite
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
