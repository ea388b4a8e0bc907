package agentflow

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is what sort of token a Token is.
type Kind int

// The token kinds. Comments are hidden tokens: Lex returns them, the
// parser skips them, the formatter keeps them.
const (
	KindEOF          Kind = iota
	KindIdent             // an identifier that is not a word of the grammar
	KindKeyword           // a word of the grammar, reserved or contextual (Reserved says which)
	KindString            // "...", Value unescaped
	KindMLString          // """...""", Value verbatim less leading and trailing newlines
	KindNumber            // 12 or 1.5, Number its value
	KindDuration          // 500ms 5s 10m 2h, Millis its value
	KindPunct             // an operator or punctuation: Text says which
	KindLineComment       // // to the end of the line
	KindBlockComment      // /* to */
	KindIllegal           // a character no token starts with (reported by Lex)
)

var kindNames = [...]string{"end of file", "identifier", "keyword", "string", "multiline string", "number", "duration", "punctuation", "comment", "comment", "illegal character"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one token: its kind, its source text and its span, and for
// literals the value the text means.
type Token struct {
	Kind   Kind
	Text   string
	Value  string  // strings: the value after escapes (or trimming)
	Number float64 // numbers
	Millis int64   // durations, in milliseconds
	Pos    Position
	End    Position // just past the last byte
}

// keywords are the words of the grammar: every literal word it names.
// They lex as KindKeyword; Reserved tells the reserved ones from the
// contextual ones.
var keywords = map[string]bool{}

// contextual are the grammar's words it also accepts as identifiers
// wherever it says Id (values, let, parameters, branches, checks, map
// items, type names).
var contextual = map[string]bool{"input": true, "context": true, "duration": true, "member": true}

func init() {
	for _, w := range strings.Fields(`
		agent agent_runs and as attempts check concurrency else emit expect
		fail false if in let limit limits map none not on or parallel pass
		pipeline progress rate_limit require return retry stage task team
		timeout tools transient true type use verify when write workflow
		after null input context duration member`) {
		keywords[w] = true
	}
}

// Reserved says whether word can never be an identifier: the words the
// reference lists as reserved, and after and null (the grammar names them
// apart from its identifiers). Every word is still a valid field name:
// in a type's fields, an object's fields and after a '.'.
func Reserved(word string) bool { return keywords[word] && !contextual[word] }

// puncts are the grammar's operators and punctuation, longest first.
var puncts = []string{"[*]", "->", "==", "!=", "<=", ">=", "??", "..", "{", "}", "(", ")", "[", "]", ",", ":", "?", "=", "<", ">", "."}

// Lex splits src into tokens, comments included, ending with one
// KindEOF token. What no token matches is reported, and lexing goes on
// after it: the lexer never stops early except for a file larger than
// MaxSourceBytes.
func Lex(src []byte) ([]Token, []Diagnostic) {
	l := &lexer{src: src, line: 1}
	l.toks = make([]Token, 0, len(src)/4+1)
	if len(src) > MaxSourceBytes {
		end := Position{Offset: 0, Line: 1, Column: 1}
		l.errorf(end, end, "file is %d bytes, larger than the %d a source file may be", len(src), MaxSourceBytes)
		return []Token{{Kind: KindEOF, Pos: end, End: end}}, l.diags
	}
	for {
		t := l.next()
		l.toks = append(l.toks, t)
		if t.Kind == KindEOF {
			return l.toks, l.diags
		}
	}
}

type lexer struct {
	src       []byte
	off       int
	line      int
	lineStart int
	toks      []Token
	diags     []Diagnostic
}

func (l *lexer) pos() Position {
	return Position{Offset: l.off, Line: l.line, Column: l.off - l.lineStart + 1}
}

// errorf reports a lex error; past MaxErrors of them, one more says so and
// the rest are not reported.
func (l *lexer) errorf(pos, end Position, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	switch {
	case len(l.diags) > MaxErrors:
		return
	case len(l.diags) == MaxErrors:
		msg = fmt.Sprintf("too many errors (%d): the rest of the file's lex errors are not reported", MaxErrors)
	}
	l.diags = append(l.diags, Diagnostic{Pos: pos, End: end, Severity: SeverityError, Code: CodeLex, Message: msg})
}

// advance moves past n bytes, counting lines.
func (l *lexer) advance(n int) {
	for end := l.off + n; l.off < end; l.off++ {
		if l.src[l.off] == '\n' {
			l.line++
			l.lineStart = l.off + 1
		}
	}
}

// spaceAt is the length of the whitespace at i (JavaScript's \s), or 0.
func spaceAt(src []byte, i int) int {
	switch c := src[i]; c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return 1
	}
	if src[i] < utf8.RuneSelf {
		return 0
	}
	r, n := utf8.DecodeRune(src[i:])
	switch {
	case r == 0xa0, r == 0x1680, r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029,
		r == 0x202f, r == 0x205f, r == 0x3000, r == 0xfeff:
		return n
	}
	return 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isWord(c byte) bool   { return isLetter(c) || isDigit(c) }

func (l *lexer) next() Token {
	for l.off < len(l.src) {
		n := spaceAt(l.src, l.off)
		if n == 0 {
			break
		}
		l.advance(n)
	}
	start := l.pos()
	tok := func(k Kind, n int) Token {
		l.advance(n)
		return Token{Kind: k, Text: string(l.src[start.Offset:l.off]), Pos: start, End: l.pos()}
	}
	src, i := l.src, l.off
	if i >= len(src) {
		return Token{Kind: KindEOF, Pos: start, End: start}
	}
	c := src[i]
	switch {
	case c == '/' && i+1 < len(src) && src[i+1] == '/':
		j := i + 2
		for j < len(src) && src[j] != '\n' && src[j] != '\r' {
			j++
		}
		return tok(KindLineComment, j-i)
	case c == '/' && i+1 < len(src) && src[i+1] == '*':
		k := bytes.Index(src[i+2:], []byte("*/"))
		if k < 0 {
			t := tok(KindBlockComment, len(src)-i)
			l.errorf(start, t.End, "unterminated comment: /* without */")
			return t
		}
		return tok(KindBlockComment, k+4)
	case c == '"' && i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"':
		return l.mlString(start)
	case c == '"':
		return l.string(start)
	case isLetter(c):
		j := i + 1
		for j < len(src) && (isWord(src[j]) || src[j] == '$') {
			j++
		}
		t := tok(KindIdent, j-i)
		if keywords[t.Text] {
			t.Kind = KindKeyword
		}
		return t
	case isDigit(c):
		return l.number(start)
	}
	for _, p := range puncts {
		if strings.HasPrefix(string(src[i:min(len(src), i+3)]), p) {
			return tok(KindPunct, len(p))
		}
	}
	r, n := utf8.DecodeRune(src[i:])
	t := tok(KindIllegal, n)
	if r == utf8.RuneError && n == 1 {
		l.errorf(start, t.End, "invalid UTF-8 byte 0x%02x", c)
	} else {
		l.errorf(start, t.End, "unexpected character %q", r)
	}
	return t
}

var unitMillis = map[string]int64{"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}

// number is a NUMBER or, when a unit follows the digits and no letter,
// digit or _ follows the unit, a DURATION.
func (l *lexer) number(start Position) Token {
	src, i := l.src, l.off
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	for _, unit := range []string{"ms", "s", "m", "h"} {
		k := j + len(unit)
		if k <= len(src) && string(src[j:k]) == unit && (k == len(src) || !isWord(src[k])) {
			l.advance(k - i)
			t := Token{Kind: KindDuration, Text: string(src[i:k]), Pos: start, End: l.pos()}
			n, err := strconv.ParseInt(string(src[i:j]), 10, 64)
			scale := unitMillis[unit]
			if err != nil || n > math.MaxInt64/scale {
				l.errorf(start, t.End, "duration %s is out of range (at most %d ms)", t.Text, int64(math.MaxInt64))
			} else {
				t.Millis = n * scale
			}
			return t
		}
	}
	if j+1 < len(src) && src[j] == '.' && isDigit(src[j+1]) {
		j += 2
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	l.advance(j - i)
	t := Token{Kind: KindNumber, Text: string(src[i:j]), Pos: start, End: l.pos()}
	f, err := strconv.ParseFloat(t.Text, 64)
	if err != nil {
		l.errorf(start, t.End, "number %s is out of range", t.Text)
	}
	t.Number = f
	return t
}

// string is a "..." string on one line; other \x reads as x.
func (l *lexer) string(start Position) Token {
	src := l.src
	var b strings.Builder
	j := l.off + 1
	for {
		if j >= len(src) || src[j] == '\n' || src[j] == '\r' || (src[j] == '\\' && escapesLineEnd(src[j+1:])) {
			if j < len(src) && src[j] == '\\' {
				j++
			}
			l.advance(j - l.off)
			t := Token{Kind: KindString, Text: string(src[start.Offset:j]), Value: b.String(), Pos: start, End: l.pos()}
			l.errorf(start, t.End, "unterminated string: a \"...\" string ends with \" on its own line")
			return t
		}
		switch c := src[j]; c {
		case '"':
			j++
			l.advance(j - l.off)
			return Token{Kind: KindString, Text: string(src[start.Offset:j]), Value: b.String(), Pos: start, End: l.pos()}
		case '\\':
			e := src[j+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				_, n := utf8.DecodeRune(src[j+1:])
				b.Write(src[j+1 : j+1+n])
				j += n - 1
			}
			j += 2
		default:
			b.WriteByte(c)
			j++
		}
	}
}

// escapesLineEnd says whether rest, what follows a backslash in a string,
// is empty or starts with a line terminator, which no escape takes (the
// reference's \\. is JavaScript's, whose . matches neither \n, \r, U+2028
// nor U+2029).
func escapesLineEnd(rest []byte) bool {
	if len(rest) == 0 || rest[0] == '\n' || rest[0] == '\r' {
		return true
	}
	r, _ := utf8.DecodeRune(rest)
	return r == '\u2028' || r == '\u2029'
}

// mlString is a """...""" string: verbatim, less its leading and
// trailing newlines.
func (l *lexer) mlString(start Position) Token {
	src := l.src
	body := start.Offset + 3
	k := bytes.Index(src[body:], []byte(`"""`))
	if k < 0 {
		l.advance(len(src) - l.off)
		t := Token{Kind: KindMLString, Text: string(src[start.Offset:]), Value: strings.Trim(string(src[body:]), "\r\n"), Pos: start, End: l.pos()}
		l.errorf(start, t.End, `unterminated multiline string: """ without a closing """`)
		return t
	}
	l.advance(3 + k + 3)
	return Token{Kind: KindMLString, Text: string(src[start.Offset:l.off]), Value: strings.Trim(string(src[body:body+k]), "\r\n"), Pos: start, End: l.pos()}
}
