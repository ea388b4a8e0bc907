package evals

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
)

// PreviewResult is what a run of a suite would do, found without doing any of
// it: no model is built, no key read, nothing spent.
type PreviewResult struct {
	File       string        `json:"file"`
	Flow       string        `json:"flow"`
	Build      string        `json:"build"`
	Total      int           `json:"total"`
	Calls      PreviewCalls  `json:"calls"`
	Judge      PreviewJudge  `json:"judge"`
	Thresholds *Thresholds   `json:"thresholds,omitempty"`
	Evals      []PreviewCase `json:"evals"`
}

// PreviewCalls counts the runs of the flow and the judge's calls (at
// least: a judge reply that does not fit is asked again).
type PreviewCalls struct {
	Runs  int `json:"runs"`
	Judge int `json:"judge"`
}

// PreviewJudge is the size of the judge's prompts before the answers are
// added: EstimatedInputTokens is Chars / 4, a rough rule for English text.
type PreviewJudge struct {
	Chars                int `json:"chars"`
	EstimatedInputTokens int `json:"estimated_input_tokens"`
}

// PreviewCase is one case a run would run: its name, where it comes from
// (cases[2], or "cases.jsonl line 7") and its judge prompt's length
// before the answer.
type PreviewCase = planned

// Preview previews the suite at path of the flow folder dir, exactly
// as Run prepares it: the same *EvalFileError for a suite that cannot run.
// filter, when set, keeps the cases whose name it matches.
func Preview(ctx context.Context, dir, path string, filter *regexp.Regexp) (*PreviewResult, error) {
	data, err := read(path, MaxFileBytes)
	if err != nil {
		return nil, &EvalFileError{File: filepath.Base(path), Problems: []Problem{{Code: CodeTooLarge, Message: err.Error()}}}
	}
	p, err := prepare(dir, path, filepath.Base(path), data, filter)
	if err != nil {
		return nil, err
	}
	return previewOf(p), nil
}

// PreviewSuite previews a suite given in memory as RunSuite would run it.
func PreviewSuite(ctx context.Context, dir, file string, s *Suite, filter *regexp.Regexp) (*PreviewResult, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	p, err := prepare(dir, "", file, data, filter)
	if err != nil {
		return nil, err
	}
	return previewOf(p), nil
}

func previewOf(p *plan) *PreviewResult {
	pv := &PreviewResult{File: p.file, Flow: p.flow.Name, Build: p.build, Total: len(p.cases), Thresholds: p.suite.Thresholds, Evals: p.cases}
	if pv.Evals == nil {
		pv.Evals = []PreviewCase{}
	}
	pv.Calls = PreviewCalls{Runs: len(p.cases), Judge: len(p.cases)}
	for _, c := range p.cases {
		pv.Judge.Chars += c.JudgeChars
	}
	pv.Judge.EstimatedInputTokens = pv.Judge.Chars / 4
	return pv
}
