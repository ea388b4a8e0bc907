package secrets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The files of an agent folder that name its variables: .env.example asks
// for them (its values are placeholders), .env gives them.
const (
	EnvExampleFile = ".env.example"
	EnvFile        = ".env"
)

// Bounds on a .env or .env.example file.
const (
	// MaxEnvFileBytes is the size past which an env file is refused.
	MaxEnvFileBytes = 64 << 10
	// MaxEnvNames is how many variables one env file may set.
	MaxEnvNames = 1024
)

// NamesIn returns the names of the variables DIR/.env.example and
// DIR/.env set, each once, in the order the files give them: what Named
// reads the values of. A file that is not there is not an error; one that
// is larger than MaxEnvFileBytes, sets more than MaxEnvNames variables or
// has a line that is not a variable, a comment or blank is, named by its
// path and line (never by what the line holds).
//
// Each line is NAME=VALUE, optionally after "export "; a name is letters,
// digits and _, not starting with a digit. A line starting with # is a
// comment, and so is what follows " #" in a value without quotes. A value
// may be in single or double quotes; a double-quoted one reads the escapes
// \n, \r, \t and a backslash before any other character, and may go on
// over several lines. A line that is a name alone (as .env.example often
// has them) names the variable without a value.
func NamesIn(dir string) ([]string, error) {
	var names []string
	seen := make(map[string]bool)
	for _, file := range []string{EnvExampleFile, EnvFile} {
		vars, err := readEnvFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		for _, v := range vars {
			if !seen[v.name] {
				seen[v.name] = true
				names = append(names, v.name)
			}
		}
	}
	return names, nil
}

// ValuesIn returns the values DIR/.env gives its variables, as Named
// would list them (at least Enough long, each once): secrets whether or
// not the process's environment holds them, since an MCP server that
// reads the file has them all the same. The file is read as NamesIn reads
// it, and fails as it fails.
func ValuesIn(dir string) ([]string, error) {
	vars, err := readEnvFile(filepath.Join(dir, EnvFile))
	if err != nil {
		return nil, err
	}
	var l list
	for _, v := range vars {
		l.add(v.value)
		for _, w := range v.written {
			l.add(w)
		}
	}
	return l.values, nil
}

// envVar is one variable an env file sets: its value as a loader that
// reads quotes and escapes gives it, and as written (within its quotes and
// with them, the comment after it kept), as a loader that does not (docker
// --env-file) gives it.
type envVar struct {
	name, value string
	written     []string
}

// readEnvFile reads the variables the env file at path sets; none when
// there is no file.
func readEnvFile(path string) ([]envVar, error) {
	b, err := readEnvBytes(path)
	if err != nil || b == nil {
		return nil, err
	}
	vars, err := parseEnv(string(b))
	if err != nil {
		return nil, fmt.Errorf("secrets: %s %w", path, err)
	}
	return vars, nil
}

// readEnvBytes reads the env file at path, at most MaxEnvFileBytes; nil
// and no error when there is no file.
func readEnvBytes(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxEnvFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("secrets: reading %s: %w", path, err)
	}
	if len(b) > MaxEnvFileBytes {
		return nil, fmt.Errorf("secrets: %s is larger than %d bytes (secrets.MaxEnvFileBytes)", path, MaxEnvFileBytes)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// parseEnv reads the variables of an env file's text (see NamesIn). Its
// errors start with the line ("line 3: …") and never repeat the text.
func parseEnv(text string) ([]envVar, error) {
	var vars []envVar
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, MaxEnvFileBytes+1)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimSpace(rest)
		}
		name, value, hasValue := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !isName(name) {
			return nil, fmt.Errorf("line %d: not NAME=VALUE, a comment or blank (a name is letters, digits and _, not starting with a digit)", n)
		}
		if len(vars) == MaxEnvNames {
			return nil, fmt.Errorf("line %d: more than %d variables (secrets.MaxEnvNames)", n, MaxEnvNames)
		}
		if !hasValue {
			vars = append(vars, envVar{name: name})
			continue
		}
		value = strings.TrimSpace(value)
		v := envVar{name: name}
		switch {
		case strings.HasPrefix(value, `"`):
			// A double-quoted value ends at the next quote that is not
			// escaped, on this line or one after it.
			start := n
			body := value[1:]
			for {
				if i := closingQuote(body); i >= 0 {
					v.value, v.written = unescape(body[:i]), []string{body[:i], `"` + body[:i+1]}
					break
				}
				if !sc.Scan() {
					return nil, fmt.Errorf("line %d: a quoted value that is never closed", start)
				}
				n++
				body += "\n" + strings.TrimRight(sc.Text(), "\r")
			}
		case strings.HasPrefix(value, `'`):
			i := strings.IndexByte(value[1:], '\'')
			if i < 0 {
				return nil, fmt.Errorf("line %d: a quoted value that is never closed", n)
			}
			v.value, v.written = value[1:1+i], []string{value[:2+i]}
		default:
			v.value, v.written = value, []string{value}
			if i := strings.Index(value, " #"); i >= 0 {
				v.value = strings.TrimSpace(value[:i])
			}
		}
		vars = append(vars, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return vars, nil
}

// isName reports whether s is a variable's name: letters, digits and _,
// not starting with a digit.
func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// closingQuote is the index in s of the first double quote that no
// backslash escapes, or -1.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unescape reads the escapes of a double-quoted value: \n, \r and \t, and
// a backslash before any other character is that character.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
