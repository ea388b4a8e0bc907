package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// How many entries Read returns: DefaultReadLimit when the caller says
// nothing (0), at most MaxReadLimit.
const (
	DefaultReadLimit = 50
	MaxReadLimit     = 500
)

// MaxLineBytes is the longest line Read reads back; a longer one (a
// journal written by hand, or a line cut by a crash) is skipped. A line
// the journal writes is far shorter: each payload is cut to
// PayloadMaxChars.
const MaxLineBytes = 1 << 20

// readChunk is how much of a file Read reads at a time, from its end.
const readChunk = 64 << 10

// QueryError is a value Read refuses: Param names the parameter ("limit"
// or "kind") and Problem says what is wrong with it.
type QueryError struct {
	Param   string
	Problem string
}

func (e *QueryError) Error() string { return e.Param + ": " + e.Problem }

// CheckQuery checks Read's limit and kind, and returns the limit to use: 0
// is DefaultReadLimit.
func CheckQuery(limit int, kind string) (int, error) {
	switch kind {
	case "", KindLLM, KindTool:
	default:
		return 0, &QueryError{Param: "kind", Problem: fmt.Sprintf("%q: want %s or %s, or nothing for both", kind, KindLLM, KindTool)}
	}
	switch {
	case limit == 0:
		return DefaultReadLimit, nil
	case limit < 0 || limit > MaxReadLimit:
		return 0, &QueryError{Param: "limit", Problem: fmt.Sprintf("%d: want 1 to %d (nothing is %d)", limit, MaxReadLimit, DefaultReadLimit)}
	}
	return limit, nil
}

// Read returns the newest entries of the journal at path, newest first:
// at most limit (0 is DefaultReadLimit, at most MaxReadLimit) of kind
// (KindLLM, KindTool, or "" for both). When the file holds fewer it goes
// on into the rotated file (path+".1"). A journal nobody wrote to is no
// entries. A bad limit or kind is a *QueryError naming it. Lines that are
// not entries (cut by a crash, or longer than MaxLineBytes) are skipped.
func Read(path string, limit int, kind string) ([]Entry, error) {
	return ReadWhere(path, limit, kind, nil)
}

// ReadWhere is Read keeping only the entries keep reports true for (nil
// keeps every one), so that limit counts the entries the caller may see.
// It reads no more than the journal holds: the file and the one rotated
// file, each read from its end a chunk at a time.
func ReadWhere(path string, limit int, kind string, keep func(Entry) bool) ([]Entry, error) {
	limit, err := CheckQuery(limit, kind)
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, p := range []string{path, path + ".1"} {
		err := eachLineBackward(p, func(line []byte) bool {
			var e Entry
			if json.Unmarshal(line, &e) != nil || e.Kind == "" {
				return true
			}
			if e.Kind == kindModel {
				e.Kind = KindLLM
			}
			if (kind != "" && e.Kind != kind) || (keep != nil && !keep(e)) {
				return true
			}
			out = append(out, e)
			return len(out) < limit
		})
		if err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

// eachLineBackward calls fn with each line of the file at path, the last
// first, until fn returns false. A missing file has no lines. A line longer
// than MaxLineBytes is skipped; the buffer never holds more than that and
// one chunk.
func eachLineBackward(path string, fn func(line []byte) bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", path)
	}
	pos := st.Size()
	var (
		carry []byte // the end of a line whose start is further back
		long  bool   // carry was dropped: the line is too long to read
		buf   = make([]byte, readChunk)
	)
	for pos > 0 {
		n := int64(readChunk)
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		data := append(append([]byte(nil), buf[:n]...), carry...)
		for {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[i+1:]
			data = data[:i]
			if long || len(line) > MaxLineBytes {
				long = false // the start of a long line: skip it
				continue
			}
			if len(line) > 0 && !fn(line) {
				return nil
			}
		}
		carry = data
		if len(carry) > MaxLineBytes {
			carry, long = nil, true
		}
	}
	if len(carry) > 0 && !long && len(carry) <= MaxLineBytes {
		fn(carry)
	}
	return nil
}
