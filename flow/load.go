package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
)

// Errors returned (wrapped) by Load. Test for them with errors.Is.
var (
	// ErrInvalidJSON reports data that is not one JSON value, including
	// trailing data after it.
	ErrInvalidJSON = errors.New("flow: invalid json")
	// ErrDuplicateKey reports an object with the same key twice, after
	// escapes are decoded. Which of two values counts is not a question a
	// flow file should leave open.
	ErrDuplicateKey = errors.New("flow: duplicate key")
	// ErrNotObject reports JSON that is not an object at the top.
	ErrNotObject = errors.New("flow: a flow is a json object")
)

// maxDepth is the deepest nesting of arrays and objects Load accepts.
const maxDepth = 200

// Load parses a flow from JSON. It fails only on what stops it reading the
// flow at all: JSON that is malformed, has a duplicate key, or is not an
// object. Everything else — a value of the wrong type, a key the DSL does
// not define — is kept for Validate, which reports it with every other
// problem. Load does not validate: pass the result to Validate.
func Load(data []byte) (*Flow, error) {
	v, err := parse(data)
	if err != nil {
		return nil, err
	}
	if v.kind != jObject {
		return nil, ErrNotObject
	}
	d := &decoder{info: &loadInfo{broken: map[string]bool{}, keys: map[string]bool{}}}
	return d.flow(v), nil
}

// LoadFile reads and parses the flow in the named file, as Load does.
func LoadFile(name string) (*Flow, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// jvalue is one parsed JSON value, objects keeping their keys in order.
type jvalue struct {
	kind jkind
	b    bool
	s    string // a string, or a number's text
	arr  []*jvalue
	obj  []jmember
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

type jmember struct {
	key string
	val *jvalue
}

func parse(data []byte) (*jvalue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec}
	v, err := p.value("", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the flow", ErrInvalidJSON)
	}
	return v, nil
}

type parser struct {
	dec *json.Decoder
}

func (p *parser) token() (json.Token, error) {
	t, err := p.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return t, nil
}

func (p *parser) value(path string, depth int) (*jvalue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d at %s", ErrInvalidJSON, maxDepth, where(path))
	}
	t, err := p.token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case nil:
		return &jvalue{kind: jNull}, nil
	case bool:
		return &jvalue{kind: jBool, b: t}, nil
	case json.Number:
		return &jvalue{kind: jNumber, s: string(t)}, nil
	case string:
		return &jvalue{kind: jString, s: t}, nil
	case json.Delim:
		switch t {
		case '{':
			v := &jvalue{kind: jObject}
			seen := map[string]bool{}
			for p.dec.More() {
				kt, err := p.token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("%w: object key is not a string at %s", ErrInvalidJSON, where(path))
				}
				if seen[key] {
					return nil, fmt.Errorf("%w %q in %s", ErrDuplicateKey, key, where(path))
				}
				seen[key] = true
				child, err := p.value(join(path, key), depth+1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, jmember{key, child})
			}
			if _, err := p.token(); err != nil { // '}'
				return nil, err
			}
			return v, nil
		case '[':
			v := &jvalue{kind: jArray}
			for p.dec.More() {
				child, err := p.value(index(path, len(v.arr)), depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, child)
			}
			if _, err := p.token(); err != nil { // ']'
				return nil, err
			}
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: unexpected %v at %s", ErrInvalidJSON, t, where(path))
}

// where names a path in an error, the top being "the flow".
func where(path string) string {
	if path == "" {
		return "the flow"
	}
	return path
}

var plainKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// join appends an object key to a path: a.b, or a["odd key"] when the key
// would not read back unambiguously.
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends an array index to a path: a[3].
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// raw renders a parsed value back to compact JSON, keys in their order.
func raw(v *jvalue) json.RawMessage {
	var b bytes.Buffer
	writeJSON(&b, v)
	return json.RawMessage(b.Bytes())
}

func writeJSON(b *bytes.Buffer, v *jvalue) {
	switch v.kind {
	case jNull:
		b.WriteString("null")
	case jBool:
		b.WriteString(strconv.FormatBool(v.b))
	case jNumber:
		b.WriteString(v.s)
	case jString:
		writeString(b, v.s)
	case jArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case jObject:
		b.WriteByte('{')
		for i, m := range v.obj {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			writeJSON(b, m.val)
		}
		b.WriteByte('}')
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes; Encode ends it with a newline
	b.Truncate(b.Len() - 1)
}

// toAny converts a parsed value to the values encoding/json decodes into
// an any: nil, bool, float64, string, []any, map[string]any.
func toAny(v *jvalue) any {
	switch v.kind {
	case jBool:
		return v.b
	case jNumber:
		f, _ := strconv.ParseFloat(v.s, 64)
		return f
	case jString:
		return v.s
	case jArray:
		a := make([]any, len(v.arr))
		for i, e := range v.arr {
			a[i] = toAny(e)
		}
		return a
	case jObject:
		m := make(map[string]any, len(v.obj))
		for _, mem := range v.obj {
			m[mem.key] = toAny(mem.val)
		}
		return m
	}
	return nil
}
