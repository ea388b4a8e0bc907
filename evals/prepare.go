package evals

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/jcs"
)

// plan is a suite prepared to run: checked, its dataset read once, every
// case it will run counted. Preview and Run share it, so a preview that
// accepts a suite is a promise about the run.
type plan struct {
	dir         string
	path        string // the suite's path; "" for one given in memory
	file        string // its name
	flow        *flow.Flow
	build       string
	suite       *Suite
	dataset     string // the dataset's path; "" for none
	datasetName string // as the suite names it
	output      []string
	filter      *regexp.Regexp
	cases       []planned // the cases that will run, in order
}

// planned is one case a run will run.
type planned struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// JudgeChars is the length of the judge's prompt for the case, before
	// the answer is added to it.
	JudgeChars int `json:"judge_chars"`
}

// prepare checks the suite data (at path, named file) against the flow of
// dir and reads its dataset, all before any model is built. A suite that
// cannot run is an *EvalFileError with every problem; any other error is a
// folder that cannot be read.
func prepare(dir, path, file string, data []byte, filter *regexp.Regexp) (*plan, error) {
	flowBytes, err := os.ReadFile(filepath.Join(dir, "flow.json"))
	if err != nil {
		return nil, err
	}
	fail := func(ps []Problem) error { return &EvalFileError{File: file, Problems: ps} }
	f, err := flow.LoadFile(filepath.Join(dir, "flow.json"))
	if err == nil {
		err = flow.Check(f)
	}
	if err != nil {
		return nil, fail([]Problem{{Code: CodeFlow, Path: "flow.json", Message: err.Error()}})
	}
	build, err := jcs.Digest(flowBytes)
	if err != nil {
		return nil, fail([]Problem{{Code: CodeFlow, Path: "flow.json", Message: err.Error()}})
	}
	_, c := problemsOf(data, f)
	ps := c.ps
	p := &plan{dir: dir, path: path, file: file, flow: f, build: build, filter: filter}
	s, err := parse(data)
	if err != nil && len(*ps) == 0 {
		ps.add(CodeInvalidJSON, "", "%v", err)
	}
	// The dataset is checked even when the file has problems, so that
	// every problem is said at once: its name is taken as the file gives
	// it, when it is one Problems accepted.
	p.datasetName = datasetOf(data)
	if p.datasetName != "" && !hasProblemAt(*ps, "dataset") {
		p.dataset = filepath.Join(filepath.Dir(pathOr(path, filepath.Join(dir, file))), p.datasetName)
	}
	// The dataset is read here once, every row checked (the names with
	// the suite's own cases), and read again, a row at a time, as a run
	// goes: a suite of many rows never sits in memory whole.
	total := 0
	if s != nil {
		total = len(s.Cases)
	}
	err = p.each(func(cs Case, source string, raw map[string]any) error {
		total++
		if total > MaxCases {
			c.ps.add(CodeTooLarge, "dataset", "more than %d cases with the suite's own: at most %d", MaxCases, MaxCases)
			return errStop
		}
		c.checkCase(source, raw, cs.Name)
		if len(*c.ps) > maxProblems {
			return errStop
		}
		return nil
	}, true)
	if err != nil && !errors.Is(err, errStop) {
		ps.add(CodeDataset, "dataset", "%v", err)
	}
	if total == 0 && p.dataset != "" && len(*ps) == 0 {
		ps.add(CodeNoCases, "dataset", "the dataset has no rows and the suite no cases")
	}
	if len(*ps) > 0 {
		return nil, fail(*ps)
	}
	p.suite = s
	p.output = s.Output
	if len(p.output) == 0 {
		p.output = f.Outputs
	}
	err = p.each(func(cs Case, source string, _ map[string]any) error {
		if filter == nil || filter.MatchString(cs.Name) {
			p.cases = append(p.cases, planned{Name: cs.Name, Source: source, JudgeChars: len(judgePrompt(s, cs, nil))})
		}
		return nil
	}, false)
	if err != nil {
		return nil, fail([]Problem{{Code: CodeDataset, Path: "dataset", Message: err.Error()}})
	}
	return p, nil
}

// datasetOf is the dataset the suite's bytes name, if they name one as
// text.
func datasetOf(data []byte) string {
	var v struct {
		Dataset any `json:"dataset"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	s, _ := v.Dataset.(string)
	return s
}

func hasProblemAt(ps []Problem, path string) bool {
	for _, p := range ps {
		if p.Path == path {
			return true
		}
	}
	return false
}

// maxProblems is where a dataset stops being read for problems: past it,
// more lines say nothing a person can act on first.
const maxProblems = 100

var errStop = errors.New("stop")

func pathOr(path, def string) string {
	if path == "" {
		return def
	}
	return path
}

// each calls fn with each case of the suite, its own then its dataset's,
// in order, with where it came from; raw, for a dataset's row, is the row
// as decoded, when checking (a row is then not parsed into a Case beyond
// its name).
func (p *plan) each(fn func(c Case, source string, raw map[string]any) error, checking bool) error {
	if !checking {
		for i, c := range p.suite.Cases {
			if err := fn(c, fmt.Sprintf("cases[%d]", i), nil); err != nil {
				return err
			}
		}
	}
	if p.dataset == "" {
		return nil
	}
	f, err := os.Open(p.dataset)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: %w", p.datasetName, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxDatasetBytes {
		return fmt.Errorf("%s: larger than %d bytes", p.datasetName, MaxDatasetBytes)
	}
	r := bufio.NewReaderSize(io.LimitReader(f, MaxDatasetBytes), 64<<10)
	for line := 1; ; line++ {
		b, err := readLine(r)
		if err == io.EOF {
			return nil
		}
		source := fmt.Sprintf("%s line %d", p.datasetName, line)
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var c Case
		if checking {
			var raw any
			d := json.NewDecoder(bytes.NewReader(b))
			if err := d.Decode(&raw); err != nil || d.More() {
				return fmt.Errorf("%s: not one JSON object", source)
			}
			obj, ok := raw.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: want a case, an object", source)
			}
			c.Name = source
			if err := fn(c, source, obj); err != nil {
				return err
			}
			continue
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if c.Name == "" {
			c.Name = source
		}
		if err := fn(c, source, nil); err != nil {
			return err
		}
	}
}

// readLine reads one line, without its end, within MaxDatasetLineBytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return line, nil
			}
			return nil, err
		}
		line = append(line, chunk...)
		if len(line) > MaxDatasetLineBytes {
			return nil, fmt.Errorf("a line longer than %d bytes", MaxDatasetLineBytes)
		}
		if !isPrefix {
			return line, nil
		}
	}
}
