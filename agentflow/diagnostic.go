package agentflow

import "fmt"

// Position is a place in a source file: Offset is the byte offset from
// 0, Line and Column count from 1, the column in bytes.
type Position struct {
	Offset int
	Line   int
	Column int
}

// String is line:column.
func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Severity is how much a diagnostic matters.
type Severity int

// The severities of the reference's catalogue.
const (
	SeverityError Severity = iota
	SeverityWarning
	SeverityInfo
)

func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	}
	return "error"
}

// The codes of the front end's diagnostics, the reference's own for lex
// and parse errors. Every other code of its catalogue is the checker's.
const (
	CodeLex    = "lex"    // a character sequence no token matches, an unterminated string or comment, a literal out of range, a file too large
	CodeSyntax = "syntax" // tokens the grammar does not accept, nesting too deep, too many errors
)

// Diagnostic is one thing wrong (or worth saying) about a file, from Pos
// up to End (exclusive).
type Diagnostic struct {
	Pos, End Position
	Severity Severity
	Code     string
	Message  string
}

// String is line:col: severity: code: message, as a compiler prints it
// after the file's name.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s: %s", d.Pos, d.Severity, d.Code, d.Message)
}

// HasErrors says whether any of ds is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Limits of the front end (docs/limits.md).
const (
	// MaxSourceBytes is the largest file Lex, Parse and Format read.
	MaxSourceBytes = 4 << 20
	// MaxNesting is how deeply constructs may nest: blocks, brackets,
	// parentheses, not and ?? chains, and each operator or postfix of a
	// chain counts one level.
	MaxNesting = 200
	// MaxErrors is how many syntax errors Parse reports before it stops,
	// and how many lex errors Lex reports (it goes on lexing).
	MaxErrors = 50
)
