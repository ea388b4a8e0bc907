package health

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// FileName is the file in an agent's folder that declares its custom
// checks.
const FileName = "health.json"

// Bounds of health.json.
const (
	// MaxFileBytes is the largest health.json.
	MaxFileBytes = 64 << 10
	// MaxFileChecks is the most checks health.json declares.
	MaxFileChecks = 64
	// MaxAddressBytes is the longest tcp address.
	MaxAddressBytes = 512
	// MaxURLBytes is the longest http url.
	MaxURLBytes = 2048
	// MaxCommandWords is the most words (the program and its arguments) of a
	// command.
	MaxCommandWords = 64
)

// Load reads the custom checks declared in dir's health.json. No file is no
// custom checks (nil, nil). The file is decoded strictly: a field it does
// not define, a value of the wrong type, a key given twice or anything out
// of bounds is an error naming the file, the field and the problem, as
// "health.json: checks[2].http.status: …". Every Spec's Dir is dir.
func Load(dir string) ([]Spec, error) {
	path := filepath.Join(dir, FileName)
	data, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	specs, err := decode(data, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return specs, nil
}

// read reads path, refusing a file past MaxFileBytes.
func read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFileBytes)
	}
	return data, nil
}

// decode reads the checks in data, a whole health.json.
func decode(data []byte, dir string) ([]Spec, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("not JSON: at byte %d: %w", syn.Offset, err)
		}
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	top, err := members(data, "")
	if err != nil {
		return nil, err
	}
	var specs []Spec
	for _, m := range top {
		if m.key != "checks" {
			return nil, unknownField("", m.key, "checks")
		}
		items, err := array(m.val, "checks")
		if err != nil {
			return nil, err
		}
		if len(items) > MaxFileChecks {
			return nil, fmt.Errorf("checks: %d checks, at most %d", len(items), MaxFileChecks)
		}
		specs = make([]Spec, 0, len(items))
		names := make(map[string]int, len(items))
		for i, raw := range items {
			path := fmt.Sprintf("checks[%d]", i)
			s, err := decodeSpec(raw, path)
			if err != nil {
				return nil, err
			}
			if j, ok := names[s.Name]; ok {
				return nil, fmt.Errorf("%s.name: %s is checks[%d]'s name already", path, quote(s.Name), j)
			}
			names[s.Name] = i
			s.Dir = dir
			specs = append(specs, s)
		}
	}
	return specs, nil
}

// decodeSpec reads one check at path.
func decodeSpec(raw json.RawMessage, path string) (Spec, error) {
	var s Spec
	mems, err := members(raw, path)
	if err != nil {
		return s, err
	}
	named := false
	var probes []string
	for _, m := range mems {
		p := path + "." + m.key
		switch m.key {
		case "name":
			if s.Name, err = str(m.val, p); err != nil {
				return s, err
			}
			if err := checkName(s.Name); err != nil {
				return s, fmt.Errorf("%s: %w", p, err)
			}
			named = true
		case "tcp":
			if s.TCP, err = str(m.val, p); err != nil {
				return s, err
			}
			if err := checkAddress(s.TCP); err != nil {
				return s, fmt.Errorf("%s: %w", p, err)
			}
			probes = append(probes, m.key)
		case "http":
			if s.HTTP, err = decodeHTTP(m.val, p); err != nil {
				return s, err
			}
			probes = append(probes, m.key)
		case "command":
			if s.Command, err = decodeCommand(m.val, p); err != nil {
				return s, err
			}
			probes = append(probes, m.key)
		default:
			return s, unknownField(path, m.key, "name, tcp, http, command")
		}
	}
	switch {
	case !named:
		return s, fmt.Errorf("%s.name: required", path)
	case len(probes) == 0:
		return s, fmt.Errorf("%s: needs one of tcp, http, command", path)
	case len(probes) > 1:
		return s, fmt.Errorf("%s: has %s; a check is exactly one of tcp, http, command", path, strings.Join(probes, " and "))
	}
	return s, nil
}

// decodeHTTP reads an http check at path; its status defaults to 200.
func decodeHTTP(raw json.RawMessage, path string) (*HTTPSpec, error) {
	mems, err := members(raw, path)
	if err != nil {
		return nil, err
	}
	h := &HTTPSpec{Status: 200}
	hasURL := false
	for _, m := range mems {
		p := path + "." + m.key
		switch m.key {
		case "url":
			if h.URL, err = str(m.val, p); err != nil {
				return nil, err
			}
			if err := checkURL(h.URL); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			hasURL = true
		case "status":
			n, err := strconv.Atoi(string(m.val))
			if err != nil || n < 100 || n > 599 {
				return nil, fmt.Errorf("%s: %s, must be a whole number from 100 to 599", p, cut(string(m.val), MaxNameBytes))
			}
			h.Status = n
		default:
			return nil, unknownField(path, m.key, "url, status")
		}
	}
	if !hasURL {
		return nil, fmt.Errorf("%s.url: required", path)
	}
	return h, nil
}

// decodeCommand reads a command at path: 1 to MaxCommandWords strings, the
// first not empty, none holding a NUL.
func decodeCommand(raw json.RawMessage, path string) ([]string, error) {
	items, err := array(raw, path)
	if err != nil {
		return nil, fmt.Errorf("%s: must be a list of strings: the program and its arguments", path)
	}
	if len(items) == 0 || len(items) > MaxCommandWords {
		return nil, fmt.Errorf("%s: %d words, must be 1 to %d: the program and its arguments", path, len(items), MaxCommandWords)
	}
	words := make([]string, len(items))
	for i, item := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		if words[i], err = str(item, p); err != nil {
			return nil, err
		}
		if strings.ContainsRune(words[i], 0) {
			return nil, fmt.Errorf("%s: must not hold a NUL", p)
		}
	}
	if words[0] == "" {
		return nil, fmt.Errorf("%s[0]: the program, required", path)
	}
	return words, nil
}

// checkAddress says what is wrong with a tcp address, or nil: host:port,
// the port a number from 1 to 65535.
func checkAddress(addr string) error {
	if len(addr) > MaxAddressBytes {
		return fmt.Errorf("%d bytes, must be at most %d", len(addr), MaxAddressBytes)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: must be host:port", quote(addr))
	}
	if host == "" {
		return fmt.Errorf("%s: the host is required", quote(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%s: the port must be a number from 1 to 65535", quote(addr))
	}
	return nil
}

// checkURL says what is wrong with an http url, or nil. The url is not
// repeated: it may carry a token.
func checkURL(u string) error {
	if len(u) > MaxURLBytes {
		return fmt.Errorf("%d bytes, must be at most %d", len(u), MaxURLBytes)
	}
	p, err := url.Parse(u)
	switch {
	case u == "":
		return errors.New("required")
	case err != nil:
		return errors.New("not a URL")
	case p.Scheme != "http" && p.Scheme != "https":
		return errors.New("must be an http or https URL")
	case p.Host == "":
		return errors.New("the host is required")
	}
	return nil
}

// member is one key and its value in a JSON object, in the file's order.
type member struct {
	key string
	val json.RawMessage
}

// members reads the object raw at path, refusing a key given twice. raw is
// valid JSON.
func members(raw json.RawMessage, path string) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, wrongType(path, "an object")
	}
	var out []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		key := tok.(string) // an object's tokens alternate: a key, then its value
		if seen[key] {
			return nil, fmt.Errorf("%s: given twice", join(path, key))
		}
		seen[key] = true
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("%s: %w", join(path, key), err)
		}
		out = append(out, member{key, val})
	}
	return out, nil
}

// array reads the JSON array raw at path.
func array(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) || json.Unmarshal(raw, &items) != nil {
		return nil, wrongType(path, "a list")
	}
	return items, nil
}

// str reads the JSON string raw at path.
func str(raw json.RawMessage, path string) (string, error) {
	var s string
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)) || json.Unmarshal(raw, &s) != nil {
		return "", wrongType(path, "a string")
	}
	return s, nil
}

func wrongType(path, want string) error {
	if path == "" {
		return fmt.Errorf("must be %s", want)
	}
	return fmt.Errorf("%s: must be %s", path, want)
}

func unknownField(path, key, allowed string) error {
	return fmt.Errorf("%s: unknown field (known: %s)", join(path, key), allowed)
}

// plainKey is a key that needs no quotes in a path.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// join is the path of key in the object at path.
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		key = quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
