package evals

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The bounds on what runs leave behind (docs/limits.md).
const (
	// KeepRuns is how many records are kept per suite; older ones are
	// removed when a run is recorded.
	KeepRuns = 100
	// MaxRecordBytes is the largest record written: past it, the cases'
	// events and then their outputs are left out of the record.
	MaxRecordBytes = 16 << 20
	// DefaultKeepBuilds is how many builds ScoresByBuild returns when
	// asked for 0.
	DefaultKeepBuilds = 20
)

// RunsDir is where the records of the suite at path are kept:
// DIR/.symphonix/evals/<suite file name>/.
func RunsDir(path string) string {
	return filepath.Join(filepath.Dir(path), ".symphonix", "evals", filepath.Base(path))
}

// record writes r as the newest record of the suite at path, removes the
// oldest past KeepRuns, and returns the record's path.
func record(path string, r *Result) (string, error) {
	dir := RunsDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := recordBytes(r)
	if err != nil {
		return "", err
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := r.At.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(rnd[:]) + ".json"
	out := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".record-*")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if runs, err := PastRuns(path); err == nil && len(runs) > KeepRuns {
		for _, old := range runs[KeepRuns:] {
			os.Remove(old.Path)
		}
	}
	return out, nil
}

// recordBytes is r as JSON within MaxRecordBytes: without the cases'
// events, then without their outputs, when it would be larger.
func recordBytes(r *Result) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil || len(b) <= MaxRecordBytes {
		return b, err
	}
	c := *r
	c.Evals = slices.Clone(r.Evals)
	for i := range c.Evals {
		c.Evals[i].EventsDropped += len(c.Evals[i].Events)
		c.Evals[i].Events = []Event{}
	}
	if b, err = json.Marshal(c); err != nil || len(b) <= MaxRecordBytes {
		return b, err
	}
	for i := range c.Evals {
		c.Evals[i].Output = map[string]string{}
	}
	if b, err = json.Marshal(c); err != nil || len(b) <= MaxRecordBytes {
		return b, err
	}
	return nil, fmt.Errorf("the record is larger than %d bytes even without events and outputs", MaxRecordBytes)
}

// PastRun is one kept record of a suite.
type PastRun struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// PastRuns lists the kept records of the suite at path, newest first; none
// for a suite never recorded.
func PastRuns(path string) ([]PastRun, error) {
	dir := RunsDir(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PastRun
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, PastRun{Name: e.Name(), Path: filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(out, func(a, b PastRun) int { return strings.Compare(b.Name, a.Name) })
	return out, nil
}

// BuildScore is how one build of the flow scored on a suite: its latest
// run's numbers, and how many runs scored it.
type BuildScore struct {
	Build string    `json:"build"`
	At    time.Time `json:"at"`
	// Score is the run's mean score; 0 when Scored is 0.
	Score     float64 `json:"score"`
	Passed    bool    `json:"passed"`
	Cases     int     `json:"cases"`
	Completed int     `json:"completed"`
	Scored    int     `json:"scored"`
	// Times is how many kept runs scored this build.
	Times int `json:"times"`
	// Run is the latest run's record name.
	Run      string             `json:"run"`
	Criteria map[string]float64 `json:"criteria"`
	// Threshold is the suite's score threshold at that run; nil for none.
	Threshold *float64 `json:"threshold"`
}

// ScoresByBuild reads the kept runs of the suite at path and groups them
// by the build they scored, newest first, at most keep builds (0:
// DefaultKeepBuilds). A run without a build, or judged by the stand-in,
// is left out, and so is a record that cannot be read. It never fails a
// run: an error is a folder that cannot be listed.
func ScoresByBuild(path string, keep int) ([]BuildScore, error) {
	if keep <= 0 {
		keep = DefaultKeepBuilds
	}
	runs, err := PastRuns(path)
	if err != nil {
		return nil, err
	}
	var out []BuildScore
	index := map[string]int{}
	for _, pr := range runs {
		b, err := read(pr.Path, MaxRecordBytes)
		if err != nil {
			continue
		}
		// Only the run's numbers are read: its cases (their outputs and
		// events) are most of a record and are not wanted here.
		var r struct {
			Build      string      `json:"build"`
			At         time.Time   `json:"at"`
			Judge      string      `json:"judge"`
			Total      int         `json:"total"`
			Completed  int         `json:"completed"`
			Summary    Summary     `json:"summary"`
			Thresholds *Thresholds `json:"thresholds"`
			Passed     bool        `json:"passed"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Build == "" || r.Judge == StandInJudge || r.Judge == "" {
			continue
		}
		if i, ok := index[r.Build]; ok {
			out[i].Times++
			continue
		}
		if len(out) == keep {
			continue
		}
		bs := BuildScore{
			Build: r.Build, At: r.At, Passed: r.Passed, Cases: r.Total, Completed: r.Completed,
			Scored: r.Summary.Scored, Times: 1, Run: pr.Name, Criteria: r.Summary.Criteria,
		}
		if bs.Criteria == nil {
			bs.Criteria = map[string]float64{}
		}
		if r.Summary.Score != nil {
			bs.Score = *r.Summary.Score
		}
		if r.Thresholds != nil {
			bs.Threshold = r.Thresholds.Score
		}
		index[r.Build] = len(out)
		out = append(out, bs)
	}
	return out, nil
}
