// Package pause keeps whether an agent is taking new work: a small file in
// the agent's folder, DIR/.symphonix/pause.json, beside its waiting runs and
// journal. `agent pause` and `agent resume` write it on the agent's machine;
// a running agent writes it when the board pauses or resumes it, and reads
// it when it starts, so a restarted agent stays paused. The file holds the
// last word, paused or not, with why, who, when and where it was decided.
// A folder without one was never paused.
//
// A paused agent stays up, linked and healthy, and finishes what it has in
// flight; it refuses new work. The design is docs/serve.md, "Pause".
package pause

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Where a pause, or the end of one, was decided (State.Origin).
const (
	// Local: on the agent's machine (agent pause, agent resume).
	Local = "local"
	// Board: by an operator on the board.
	Board = "board"
)

// The bounds of a State, the same as the board keeps.
const (
	MaxReason = 512
	MaxBy     = 256
)

// maxFileBytes bounds how much of a pause file Read reads: a State within
// its bounds is well under it.
const maxFileBytes = 4 << 10

// State is the last word on whether the agent takes new work.
type State struct {
	// Paused: the agent refuses new work.
	Paused bool `json:"paused"`
	// Reason: why; at most MaxReason bytes of UTF-8.
	Reason string `json:"reason,omitempty"`
	// By: who decided (an operator's name on the board, or the user on
	// this machine); at most MaxBy bytes of UTF-8.
	By string `json:"by,omitempty"`
	// Time: when it was decided.
	Time time.Time `json:"time"`
	// Origin: Local or Board; "" only in the zero State (never decided).
	Origin string `json:"origin"`
}

// Equal reports whether s and o say the same: paused or not, why, who,
// when and where.
func (s State) Equal(o State) bool {
	return s.Paused == o.Paused && s.Reason == o.Reason && s.By == o.By && s.Time.Equal(o.Time) && s.Origin == o.Origin
}

// Path is where the pause of the agent in dir is kept.
func Path(dir string) string { return filepath.Join(dir, ".symphonix", "pause.json") }

// Read returns the pause of the agent in dir: the zero State (not paused)
// when there is no file. A file that cannot be read as a State within its
// bounds is an error naming it.
func Read(dir string) (State, error) {
	path := Path(dir)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("pause: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return State{}, fmt.Errorf("pause: %s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return State{}, fmt.Errorf("pause: %s: more than %d bytes: not a pause file", path, maxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s State
	if err := dec.Decode(&s); err != nil {
		return State{}, fmt.Errorf("pause: %s: not a pause file: %w", path, err)
	}
	if err := s.Check(); err != nil {
		return State{}, fmt.Errorf("pause: %s: %w", path, err)
	}
	return s, nil
}

// Check says what is wrong with s, naming the field: an origin that is
// neither Local nor Board, a reason or by past its bound or not UTF-8, or
// no time.
func (s State) Check() error {
	switch {
	case s.Origin != Local && s.Origin != Board:
		return fmt.Errorf("origin: %q: want %q or %q", s.Origin, Local, Board)
	case s.Time.IsZero():
		return errors.New("time: required")
	}
	for _, f := range []struct {
		name, value string
		max         int
	}{{"reason", s.Reason, MaxReason}, {"by", s.By, MaxBy}} {
		switch {
		case len(f.value) > f.max:
			return fmt.Errorf("%s: %d bytes: at most %d", f.name, len(f.value), f.max)
		case !utf8.ValidString(f.value):
			return fmt.Errorf("%s: not UTF-8", f.name)
		}
	}
	return nil
}

// Write keeps s as the pause of the agent in dir, atomically: a crash
// leaves the old word or the new one, never half of one. It refuses a
// State that Check refuses, and writes nothing then.
func Write(dir string, s State) (err error) {
	if err := s.Check(); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	s.Time = s.Time.UTC()
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	data = append(data, '\n')
	path := Path(dir)
	folder := filepath.Dir(path)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	f, err := os.CreateTemp(folder, "pause.json.*.tmp")
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("pause: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pause: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pause: %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	if d, err := os.Open(folder); err == nil {
		_ = d.Sync() // the rename survives a crash where the file system allows
		d.Close()
	}
	return nil
}

// Say is the state in words, for a line: "paused by ann at
// 2026-12-02T09:00:00Z (on this machine): the database is being migrated",
// "taking work: resumed by bob at … (on the board)", or "taking work" when
// it was never decided.
func (s State) Say() string {
	switch {
	case s.Paused:
		return "paused " + s.Why()
	case s.Origin == "":
		return "taking work"
	}
	return "taking work: resumed " + s.Why()
}

// Why is who decided, when, where and why: "by ann at
// 2026-12-02T09:00:00Z (on this machine): the database is being migrated".
func (s State) Why() string {
	var b strings.Builder
	if s.By != "" {
		b.WriteString("by " + s.By + " ")
	}
	if !s.Time.IsZero() {
		b.WriteString("at " + s.Time.UTC().Format(time.RFC3339) + " ")
	}
	if s.Origin == Board {
		b.WriteString("(on the board)")
	} else {
		b.WriteString("(on this machine)")
	}
	if s.Reason != "" {
		b.WriteString(": " + s.Reason)
	}
	return b.String()
}
