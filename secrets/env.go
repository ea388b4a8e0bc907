package secrets

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
)

// Env is an agent folder's .env applied to the agent's environment: what
// the flow's requires.env names and the model's settings are read through
// Getenv, which answers from the process's environment first and from .env
// for what that does not set, as dotenv loaders do. Reload reads the file
// again, so a served agent follows a change to it; a file that cannot be
// read keeps the values last read well. It is safe for concurrent use.
//
// Env only reads: it never sets the process's environment, which every
// agent in a process would share, and never says a value anywhere.
type Env struct {
	path string
	base func(string) string

	mu   sync.RWMutex
	vars map[string]string // the last good reading
	last []byte            // the last bytes read, good or not; nil: no file
	read bool              // the file was read at least once
	fail string            // the last failure to read it, said once
}

// LoadEnv reads DIR/.env and returns the Env that applies it over base,
// the process's environment (nil is an empty one). A file that is not
// there gives nothing. One that cannot be read, or is refused as NamesIn
// refuses it, gives nothing either, and the error, which names the file
// and the line and never what the line holds, is returned beside a usable
// Env: Reload may read it well later.
func LoadEnv(dir string, base func(string) string) (*Env, error) {
	if base == nil {
		base = func(string) string { return "" }
	}
	e := &Env{path: filepath.Join(dir, EnvFile), base: base, vars: map[string]string{}}
	_, err := e.Reload()
	return e, err
}

// Path is the file the Env reads.
func (e *Env) Path() string { return e.path }

// Getenv returns the variable's value: the process's when it sets one,
// otherwise what .env gave it when last read well, otherwise "".
func (e *Env) Getenv(name string) string {
	if v := e.base(name); v != "" {
		return v
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.vars[name]
}

// Len is how many variables .env gave when last read well.
func (e *Env) Len() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.vars)
}

// Reload reads the file again and reports whether what it gives changed.
// Bytes that are the same as the last read change nothing and are not
// parsed again, so a bad file is reported once, not at every reading (and
// so is a file that cannot be read, until it can). A
// file that has gone gives nothing from then on. A file that cannot be read
// or is refused keeps the values of the last good reading, and the error
// names the file and the line, never what it holds.
func (e *Env) Reload() (changed bool, err error) {
	b, err := readEnvBytes(e.path)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		if err.Error() == e.fail {
			return false, nil
		}
		e.fail = err.Error()
		return false, fmt.Errorf("%w; the values last read are kept", err)
	}
	e.fail = ""
	if e.read && bytes.Equal(b, e.last) && (b == nil) == (e.last == nil) {
		return false, nil
	}
	e.read, e.last = true, b
	vars, err := parseEnv(string(b))
	if err != nil {
		return false, fmt.Errorf("secrets: %s %w; the values last read are kept", e.path, err)
	}
	next := make(map[string]string, len(vars))
	for _, v := range vars {
		if v.value != "" || v.written != nil {
			next[v.name] = v.value
		}
	}
	if sameVars(next, e.vars) {
		return false, nil
	}
	e.vars = next
	return true, nil
}

func sameVars(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
