package jcs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects Canonical accepts.
const MaxDepth = 1000

// Errors returned (wrapped) by Canonical, Digest and DigestOf. Test for
// them with errors.Is.
var (
	// ErrInvalidJSON reports input that is not a single JSON text,
	// including trailing data after the value.
	ErrInvalidJSON = errors.New("jcs: invalid json")
	// ErrDuplicateKey reports an object with the same key twice, after
	// escapes are decoded.
	ErrDuplicateKey = errors.New("jcs: duplicate object key")
	// ErrInvalidUnicode reports a string with invalid UTF-8 or a lone
	// UTF-16 surrogate escape.
	ErrInvalidUnicode = errors.New("jcs: invalid unicode in string")
	// ErrNumberRange reports a number too large to be a finite IEEE-754
	// double.
	ErrNumberRange = errors.New("jcs: number out of range")
	// ErrTooDeep reports nesting deeper than MaxDepth.
	ErrTooDeep = errors.New("jcs: nesting too deep")
)

// Canonical returns the RFC 8785 (JSON Canonicalization Scheme) form of
// the JSON text data: object keys sorted by UTF-16 code units at every
// depth, no insignificant whitespace, strings escaped as ECMAScript
// JSON.stringify does and numbers written as ECMAScript
// Number.prototype.toString writes the IEEE-754 double they denote.
// Numbers are read as doubles, so integers beyond 2^53 may be rounded.
//
// Canonical rejects invalid JSON, trailing data, duplicate object keys,
// invalid UTF-8, lone surrogates, numbers that overflow a double and
// nesting deeper than MaxDepth.
func Canonical(data []byte) ([]byte, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.fail(ErrInvalidJSON, "trailing data")
	}
	return v.appendTo(make([]byte, 0, len(data))), nil
}

// Digest returns "sha256:" followed by the lowercase hex SHA-256 of
// Canonical(data).
func Digest(data []byte) (string, error) {
	c, err := Canonical(data)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// DigestOf returns the digest of v marshalled with encoding/json. The
// canonical form of that JSON, not the json.Marshal output itself, is
// hashed, so HTML escaping and field order do not matter.
func DigestOf(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("jcs: marshal: %w", err)
	}
	return Digest(data)
}

// node is a parsed value. The tree is written out once, after every
// object is sorted, so no value is copied once per enclosing object.
type node struct {
	text              []byte   // canonical form of a scalar
	elems             []node   // array elements, when isArray
	members           []member // object members sorted by key, when isObject
	isArray, isObject bool
}

type member struct {
	key   []uint16 // UTF-16 code units, the RFC 8785 sort order
	name  string
	value node
}

func (n *node) appendTo(dst []byte) []byte {
	switch {
	case n.isArray:
		dst = append(dst, '[')
		for i := range n.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = n.elems[i].appendTo(dst)
		}
		return append(dst, ']')
	case n.isObject:
		dst = append(dst, '{')
		for i := range n.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, n.members[i].name)
			dst = append(dst, ':')
			dst = n.members[i].value.appendTo(dst)
		}
		return append(dst, '}')
	default:
		return append(dst, n.text...)
	}
}

// parser reads one JSON text.
type parser struct {
	data  []byte
	pos   int
	depth int
}

func (p *parser) fail(sentinel error, detail string) error {
	return fmt.Errorf("%w: %s at offset %d", sentinel, detail, p.pos)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses the value at p.pos.
func (p *parser) value() (node, error) {
	if p.pos >= len(p.data) {
		return node{}, p.fail(ErrInvalidJSON, "unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return node{text: appendString(nil, s)}, err
	case c == '-' || ('0' <= c && c <= '9'):
		text, err := p.number()
		return node{text: text}, err
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.data)-p.pos >= len(lit) && string(p.data[p.pos:p.pos+len(lit)]) == lit {
				p.pos += len(lit)
				return node{text: []byte(lit)}, nil
			}
		}
		return node{}, p.fail(ErrInvalidJSON, fmt.Sprintf("unexpected character %q", c))
	}
}

// expect consumes c after optional whitespace.
func (p *parser) expect(c byte) error {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return p.fail(ErrInvalidJSON, "unexpected end of input")
	}
	if p.data[p.pos] != c {
		return p.fail(ErrInvalidJSON, fmt.Sprintf("expected %q, found %q", c, p.data[p.pos]))
	}
	p.pos++
	return nil
}

// open consumes an opening bracket and reports whether the container is
// empty.
func (p *parser) open(end byte) (empty bool, err error) {
	p.depth++
	if p.depth > MaxDepth {
		return false, p.fail(ErrTooDeep, fmt.Sprintf("more than %d levels", MaxDepth))
	}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == end {
		p.pos++
		p.depth--
		return true, nil
	}
	return false, nil
}

// next consumes a ',' (more elements follow) or the closing end.
func (p *parser) next(end byte) (more bool, err error) {
	p.skipSpace()
	if p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
			return true, nil
		case end:
			p.pos++
			p.depth--
			return false, nil
		}
	}
	if p.pos >= len(p.data) {
		return false, p.fail(ErrInvalidJSON, "unexpected end of input")
	}
	return false, p.fail(ErrInvalidJSON, fmt.Sprintf("expected ',' or %q, found %q", end, p.data[p.pos]))
}

func (p *parser) array() (node, error) {
	n := node{isArray: true}
	empty, err := p.open(']')
	if err != nil {
		return n, err
	}
	for more := !empty; more; {
		v, err := p.value()
		if err != nil {
			return n, err
		}
		n.elems = append(n.elems, v)
		if more, err = p.next(']'); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (p *parser) object() (node, error) {
	n := node{isObject: true}
	empty, err := p.open('}')
	if err != nil {
		return n, err
	}
	seen := make(map[string]bool)
	for more := !empty; more; {
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return n, p.fail(ErrInvalidJSON, "expected string object key")
		}
		at := p.pos
		name, err := p.str()
		if err != nil {
			return n, err
		}
		if seen[name] {
			return n, fmt.Errorf("%w %q at offset %d", ErrDuplicateKey, name, at)
		}
		seen[name] = true
		if err := p.expect(':'); err != nil {
			return n, err
		}
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return n, err
		}
		n.members = append(n.members, member{utf16.Encode([]rune(name)), name, v})
		if more, err = p.next('}'); err != nil {
			return n, err
		}
	}
	slices.SortFunc(n.members, func(a, b member) int { return slices.Compare(a.key, b.key) })
	return n, nil
}

// str parses the string at p.pos and returns it decoded.
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	var b []byte
	for {
		if p.pos >= len(p.data) {
			return "", p.fail(ErrInvalidJSON, "unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return "", p.fail(ErrInvalidJSON, "control character in string")
		case c == '\\':
			var err error
			if b, err = p.escape(b); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail(ErrInvalidUnicode, "invalid utf-8")
			}
			b = append(b, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// escape decodes the escape sequence at p.pos and appends it to b.
func (p *parser) escape(b []byte) ([]byte, error) {
	if p.pos+1 >= len(p.data) {
		return nil, p.fail(ErrInvalidJSON, "unterminated string")
	}
	c := p.data[p.pos+1]
	if simple, ok := unescapes[c]; ok {
		p.pos += 2
		return append(b, simple), nil
	}
	if c != 'u' {
		return nil, p.fail(ErrInvalidJSON, fmt.Sprintf("invalid escape %q", c))
	}
	r, err := p.hex4()
	if err != nil {
		return nil, err
	}
	if utf16.IsSurrogate(r) {
		if r >= 0xdc00 {
			return nil, p.fail(ErrInvalidUnicode, "lone low surrogate")
		}
		if p.pos+1 >= len(p.data) || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
			return nil, p.fail(ErrInvalidUnicode, "lone high surrogate")
		}
		lo, err := p.hex4()
		if err != nil {
			return nil, err
		}
		if lo < 0xdc00 || lo > 0xdfff {
			return nil, p.fail(ErrInvalidUnicode, "lone high surrogate")
		}
		r = utf16.DecodeRune(r, lo)
	}
	return utf8.AppendRune(b, r), nil
}

var unescapes = map[byte]byte{
	'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t',
}

// hex4 consumes `\uXXXX` at p.pos and returns the code unit.
func (p *parser) hex4() (rune, error) {
	if len(p.data)-p.pos < 6 {
		return 0, p.fail(ErrInvalidJSON, "short unicode escape")
	}
	v, err := strconv.ParseUint(string(p.data[p.pos+2:p.pos+6]), 16, 16)
	if err != nil {
		return 0, p.fail(ErrInvalidJSON, "invalid unicode escape")
	}
	p.pos += 6
	return rune(v), nil
}

// appendString appends s as a JSON string escaped as RFC 8785 requires.
func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// number parses the number at p.pos and returns its canonical form.
func (p *parser) number() ([]byte, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	intStart := p.pos
	if n := digits(); n == 0 {
		return nil, p.fail(ErrInvalidJSON, "invalid number")
	} else if n > 1 && p.data[intStart] == '0' {
		return nil, p.fail(ErrInvalidJSON, "leading zero in number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail(ErrInvalidJSON, "invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail(ErrInvalidJSON, "invalid number")
		}
	}
	text := string(p.data[start:p.pos])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		// The grammar is checked above, so the only failure is overflow.
		return nil, fmt.Errorf("%w: %s at offset %d", ErrNumberRange, text, start)
	}
	return appendNumber(nil, f), nil
}

// appendNumber appends f as ECMAScript Number.prototype.toString does.
// f must be finite.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits d1.d2...dk and exponent x, so that
	// f = 0.d1...dk × 10^n with n = x+1, as in ECMA-262 Number::toString.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	i := slices.Index(e, 'e')
	x, _ := strconv.Atoi(string(e[i+1:]))
	digits := slices.DeleteFunc(e[:i], func(c byte) bool { return c == '.' })
	k, n := len(digits), x+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
