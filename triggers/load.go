package triggers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// The codes of an *Error, which Load, LoadFlow and For return.
const (
	// CodeFileUnreadable: the trigger file cannot be read (missing,
	// unreadable, over MaxFileBytes).
	CodeFileUnreadable = "TRIGGER_FILE_UNREADABLE"
	// CodeFlowUnreadable: the flow the file names cannot be read: missing,
	// outside the file's folder, over MaxFlowBytes, or not JSON a flow can
	// be read from.
	CodeFlowUnreadable = "TRIGGER_FLOW_UNREADABLE"
	// CodeInvalidFile: the file is not a trigger file: not JSON, a
	// duplicate or unknown key, a value of the wrong type, or a file that
	// names another flow than the one it was found for.
	CodeInvalidFile = "INVALID_TRIGGER_FILE"
)

// Bounds of what Load and LoadFlow read.
const (
	// MaxFileBytes bounds a trigger file.
	MaxFileBytes = 256 << 10
	// MaxFlowBytes bounds the flow a trigger file names.
	MaxFlowBytes = 1 << 20
	// maxDepth is the deepest nesting of arrays and objects in a trigger
	// file.
	maxDepth = 64
)

// Error is why a trigger file or its flow cannot be read. Code is one of
// CodeFileUnreadable, CodeFlowUnreadable, CodeInvalidFile; File is the
// file at fault; Path, for CodeInvalidFile, where in it
// ("triggers[2].queueLimit"), empty for the file as a whole.
type Error struct {
	Code    string
	File    string
	Path    string
	Message string
	err     error
}

func (e *Error) Error() string {
	where := e.File
	if e.Path != "" {
		where += ": " + e.Path
	}
	return where + ": " + e.Code + ": " + e.Message
}

// Unwrap is the underlying error, such as fs.ErrNotExist.
func (e *Error) Unwrap() error { return e.err }

// Loaded is a trigger file as read: the file, its folder (which the flow's
// path is relative to) and its own path.
type Loaded struct {
	File *File
	Dir  string
	Path string
}

// Load reads and parses the trigger file at path. It only reads: what is
// wrong with the triggers themselves is Problems' answer, so a caller that
// only looks at a file is not made to satisfy rules it is not about to act
// on. It is strict about the JSON: one object, no duplicate key, no key
// the format does not define, every value of its type. Errors are *Error.
func Load(path string) (*Loaded, error) {
	data, err := readBounded(path, MaxFileBytes)
	if err != nil {
		return nil, &Error{Code: CodeFileUnreadable, File: path, Message: err.Error(), err: err}
	}
	f, err := parseFile(data)
	if err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return nil, &Error{Code: CodeInvalidFile, File: path, Path: pe.path, Message: pe.msg}
		}
		return nil, &Error{Code: CodeInvalidFile, File: path, Message: err.Error()}
	}
	return &Loaded{File: f, Dir: filepath.Dir(path), Path: path}, nil
}

// LoadFlow reads the flow the file names, relative to the file's folder:
// the only place a flow is chosen, so by the time an occurrence exists the
// flow has been read and nothing it carries can name another. A path
// leaving the folder (absolute, "..", or through a link) is refused. The
// flow is read, not validated: flow.Validate says what is wrong with it.
// Errors are *Error with CodeFlowUnreadable.
func LoadFlow(l *Loaded) (*flow.Flow, error) {
	name := l.File.Flow
	fail := func(msg string, err error) error {
		return &Error{Code: CodeFlowUnreadable, File: l.Path, Path: "flow", Message: msg, err: err}
	}
	if msg := flowPathProblem(name); msg != "" {
		return nil, fail(msg, nil)
	}
	root, err := os.OpenRoot(l.Dir)
	if err != nil {
		return nil, fail(err.Error(), err)
	}
	defer root.Close()
	fh, err := root.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, fail(fmt.Sprintf("%q: %v", name, unwrapPath(err)), err)
	}
	defer fh.Close()
	data, err := readAll(fh, MaxFlowBytes)
	if err != nil {
		return nil, fail(fmt.Sprintf("%q: %v", name, err), err)
	}
	fl, err := flow.Load(data)
	if err != nil {
		return nil, fail(fmt.Sprintf("%q: %v", name, err), err)
	}
	return fl, nil
}

// unwrapPath drops the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// flowPathProblem says what is wrong with the flow's path as written, ""
// when nothing: it must be given, relative, and inside the file's folder.
func flowPathProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "the file names no flow: set \"flow\" to the flow's file, relative to this one"
	case len(name) > maxFlowPath:
		return fmt.Sprintf("%d bytes, at most %d", len(name), maxFlowPath)
	case filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`):
		return fmt.Sprintf("%q is absolute: name the flow relative to the trigger file", clip(name))
	case !filepath.IsLocal(filepath.FromSlash(name)):
		return fmt.Sprintf("%q leaves the trigger file's folder", clip(name))
	}
	return ""
}

// maxFlowPath bounds the flow's path as written.
const maxFlowPath = 512

// FileFor is the trigger file that governs the flow at flowPath, or ""
// when none does: NAME.triggers.json beside NAME.json, by name, wins;
// otherwise the plain triggers.json beside it when its "flow" names this
// flow. A triggers.json that cannot be read, or names no flow or one
// outside its folder, is returned too, so that loading and checking it
// says what is wrong rather than the file being passed over in silence.
func FileFor(flowPath string) string {
	dir, base := filepath.Split(flowPath)
	named := filepath.Join(dir, strings.TrimSuffix(base, filepath.Ext(base))+".triggers.json")
	if base != FileName && isFile(named) {
		return named
	}
	plain := filepath.Join(dir, FileName)
	if !isFile(plain) {
		return ""
	}
	l, err := Load(plain)
	if err != nil || flowPathProblem(l.File.Flow) != "" || namesFlow(l, flowPath) {
		return plain
	}
	return ""
}

// namesFlow reports whether a loaded file's "flow" is the flow at flowPath.
func namesFlow(l *Loaded, flowPath string) bool {
	if flowPathProblem(l.File.Flow) != "" {
		return false
	}
	return filepath.Clean(filepath.Join(l.Dir, filepath.FromSlash(l.File.Flow))) == filepath.Clean(flowPath)
}

// For loads the trigger file that governs the flow at flowPath (FileFor):
// nil and no error when there is none. A NAME.triggers.json that names
// another flow than NAME.json is refused (CodeInvalidFile): which flow it
// starts would depend on how it was found.
func For(flowPath string) (*Loaded, error) {
	path := FileFor(flowPath)
	if path == "" {
		return nil, nil
	}
	l, err := Load(path)
	if err != nil {
		return nil, err
	}
	if !namesFlow(l, flowPath) && flowPathProblem(l.File.Flow) == "" {
		return nil, &Error{Code: CodeInvalidFile, File: path, Path: "flow",
			Message: fmt.Sprintf("names %q, but the file is %s's: name %q", clip(l.File.Flow), filepath.Base(flowPath), filepath.Base(flowPath))}
	}
	return l, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// readBounded reads a file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer fh.Close()
	return readAll(fh, max)
}

func readAll(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}

// pathError is a problem at a place in the file.
type pathError struct {
	path, msg string
}

func (e *pathError) Error() string { return e.path + ": " + e.msg }

// shape is what a key holds.
type shape int

const (
	aString shape = iota
	aBool
	anInt
	anObject // an object whose keys are free (input, body)
	anything
	theTriggers
	aDelivery
)

var fileKeys = map[string]shape{"flow": aString, "triggers": theTriggers}

var triggerKeys = map[string]shape{
	"id": aString, "kind": aString, "schedule": aString, "timeZone": aString, "catchUp": aBool,
	"method": aString, "path": aString, "secret": aString, "input": anObject,
	"overlap": aString, "queueLimit": anInt, "deliver": aDelivery,
}

var deliveryKeys = map[string]shape{"urlEnv": aString, "body": anything, "attempts": anInt}

// parseFile reads a trigger file strictly, naming the place of the first
// thing wrong.
func parseFile(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	r := &reader{dec: dec}
	v, err := r.value("", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the trigger file's object")
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("a trigger file is a JSON object")
	}
	if err := check(top, "", fileKeys, "a trigger file (flow, triggers)"); err != nil {
		return nil, err
	}
	var f File
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil { // checked above: only numbers out of range for an int are left
		return nil, fmt.Errorf("cannot be read: %v", err)
	}
	return &f, nil
}

// check holds an object to the keys it may have.
func check(obj map[string]any, path string, keys map[string]shape, name string) error {
	for _, k := range sortedKeys(obj) {
		p := join(path, k)
		s, ok := keys[k]
		if !ok {
			return &pathError{p, "not a key of " + name + suggest(k, keys)}
		}
		v := obj[k]
		if v == nil && s != anything {
			continue // null is the key absent
		}
		if err := checkShape(v, p, s); err != nil {
			return err
		}
	}
	return nil
}

func checkShape(v any, p string, s shape) error {
	switch s {
	case aString:
		if _, ok := v.(string); !ok {
			return &pathError{p, "want a string, got " + kindOf(v)}
		}
	case aBool:
		if _, ok := v.(bool); !ok {
			return &pathError{p, "want true or false, got " + kindOf(v)}
		}
	case anInt:
		n, ok := v.(json.Number)
		if !ok {
			return &pathError{p, "want a whole number, got " + kindOf(v)}
		}
		if i, err := strconv.ParseInt(string(n), 10, 32); err != nil || i < -1<<31 {
			return &pathError{p, fmt.Sprintf("want a whole number, got %s", n)}
		}
	case anObject:
		if _, ok := v.(map[string]any); !ok {
			return &pathError{p, "want an object, got " + kindOf(v)}
		}
	case theTriggers:
		list, ok := v.([]any)
		if !ok {
			return &pathError{p, "want a list of triggers, got " + kindOf(v)}
		}
		for i, e := range list {
			ep := p + "[" + strconv.Itoa(i) + "]"
			obj, ok := e.(map[string]any)
			if !ok {
				return &pathError{ep, "want a trigger (an object), got " + kindOf(e)}
			}
			if err := check(obj, ep, triggerKeys, "a trigger (id, kind, schedule, timeZone, catchUp, method, path, secret, input, overlap, queueLimit, deliver)"); err != nil {
				return err
			}
		}
	case aDelivery:
		obj, ok := v.(map[string]any)
		if !ok {
			return &pathError{p, "want an object, got " + kindOf(v)}
		}
		return check(obj, p, deliveryKeys, "a delivery (urlEnv, body, attempts)")
	}
	return nil
}

// suggest offers the key a misspelt one was probably meant to be.
func suggest(k string, keys map[string]shape) string {
	for want := range keys {
		if strings.EqualFold(k, want) {
			return fmt.Sprintf("; did you mean %q?", want)
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func kindOf(v any) string {
	switch v.(type) {
	case json.Number:
		return "a number"
	case nil:
		return "null"
	}
	return flow.KindOf(v)
}

// reader parses JSON into nil, bool, json.Number, string, []any and
// map[string]any, refusing a duplicate key and nesting past maxDepth, and
// naming where.
type reader struct {
	dec *json.Decoder
}

func (r *reader) token(path string) (json.Token, error) {
	t, err := r.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		if path == "" {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		return nil, &pathError{path, "not JSON: " + err.Error()}
	}
	return t, nil
}

func (r *reader) value(path string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &pathError{path, fmt.Sprintf("nested deeper than %d", maxDepth)}
	}
	t, err := r.token(path)
	if err != nil {
		return nil, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	switch d {
	case '{':
		obj := map[string]any{}
		for r.dec.More() {
			kt, err := r.token(path)
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			if _, dup := obj[k]; dup {
				return nil, &pathError{join(path, k), "the key is given twice"}
			}
			v, err := r.value(join(path, k), depth+1)
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
		if _, err := r.token(path); err != nil {
			return nil, err
		}
		return obj, nil
	case '[':
		list := []any{}
		for r.dec.More() {
			v, err := r.value(path+"["+strconv.Itoa(len(list))+"]", depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := r.token(path); err != nil {
			return nil, err
		}
		return list, nil
	}
	return nil, &pathError{path, fmt.Sprintf("unexpected %v", d)}
}

// join appends a key to a path: a.b, or a["odd key"].
func join(path, key string) string {
	if !plainKey(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c == '-' || c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return true
}
