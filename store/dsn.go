package store

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrDSN: a DSN that names no store this package opens, or an SQLite DSN
// that asks for something the board sets itself.
var ErrDSN = errors.New("store: DSN not accepted")

// acceptedForms is what the errors about a DSN say is accepted.
const acceptedForms = "postgres://…, postgresql://…, a file: URL, or the path of an SQLite file"

// sqliteFile is the name of the embedded store's file in its folder.
const sqliteFile = "board.db"

// boardPragmas are the pragmas every SQLite connection of a store gets,
// whatever form its DSN took: WAL, foreign keys, a busy timeout instead of
// "database is locked" (for another process writing to the same file:
// within the board, writers queue in Go), and synchronous=FULL so that
// what an operator was told is saved survives a power cut. The busy
// timeout comes first, so that a connection opening while another
// process's switches a new file to WAL waits for it rather than failing.
var boardPragmas = []string{"busy_timeout(10000)", "foreign_keys(1)", "journal_mode(WAL)", "synchronous(FULL)"}

// boardParams are the DSN parameters that would change what boardPragmas
// and immediate transactions set, or make the file read-only, in-memory
// or unlocked. A DSN that has one is refused rather than quietly changed;
// only _txlock=immediate is let through, since it changes nothing.
var boardParams = []string{
	"_txlock", "_journal_mode", "_journal", "_busy_timeout", "_timeout", "_foreign_keys", "_fk",
	"_synchronous", "_sync", "_query_only", "mode", "nolock", "immutable",
}

// boardPragmaNames are the pragmas a _pragma parameter may set only as
// boardPragmas does.
var boardPragmaNames = []string{"foreign_keys", "journal_mode", "busy_timeout", "synchronous", "query_only", "locking_mode"}

// scheme matches a URL scheme at the start of a DSN. One letter is a
// drive (C:\…), not a scheme.
var scheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):`)

// source is what a DSN names: a PostgreSQL server, or an SQLite file with
// the caller's extra parameters.
type source struct {
	postgres bool
	path     string     // SQLite: the file, absolute
	params   url.Values // SQLite: the caller's parameters, none of boardParams
}

// parseDSN reads a DSN: postgres:// and postgresql:// URLs name PostgreSQL;
// a file: URL (file:rel/path, file:/abs/path, file:///abs/path, each with
// or without ?parameters) or a path without a scheme names an SQLite
// file. Any other scheme is refused, and so is an SQLite DSN without a
// file or one with a parameter in boardParams. The errors never repeat
// the DSN, which may hold a password.
func parseDSN(dsn string) (source, error) {
	if m := scheme.FindStringSubmatch(dsn); m != nil {
		switch s := strings.ToLower(m[1]); s {
		case "postgres", "postgresql":
			if !strings.HasPrefix(dsn[len(m[0]):], "//") {
				return source{}, fmt.Errorf("%w: a %s DSN is a URL, %s://…", ErrDSN, s, s)
			}
			return source{postgres: true}, nil
		case "file":
		default:
			return source{}, fmt.Errorf("%w: unknown scheme %q: accepted are %s", ErrDSN, s, acceptedForms)
		}
		return parseSQLiteURL(dsn[len(m[0]):])
	}
	// A plain path. As the driver does, what follows a ? is parameters.
	path, query, _ := strings.Cut(dsn, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return source{}, fmt.Errorf("%w: its parameters: %v", ErrDSN, err)
	}
	return sqliteSource(path, params)
}

// parseSQLiteURL reads what follows "file:" in an SQLite URI: an optional
// //authority (empty or localhost), the path, percent-encoded, then
// ?parameters and a #fragment, which is ignored.
func parseSQLiteURL(rest string) (source, error) {
	rest, _, _ = strings.Cut(rest, "#")
	path, query, _ := strings.Cut(rest, "?")
	if after, ok := strings.CutPrefix(path, "//"); ok {
		host, p, _ := strings.Cut(after, "/")
		if host != "" && !strings.EqualFold(host, "localhost") {
			return source{}, fmt.Errorf("%w: a file: URL names a file on this machine: file:///path or file:path, not host %q", ErrDSN, host)
		}
		path = "/" + p
	}
	path, err := url.PathUnescape(path)
	if err != nil {
		return source{}, fmt.Errorf("%w: its path: %v", ErrDSN, err)
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return source{}, fmt.Errorf("%w: its parameters: %v", ErrDSN, err)
	}
	return sqliteSource(path, params)
}

func sqliteSource(path string, params url.Values) (source, error) {
	if path == "" || path == ":memory:" {
		return source{}, fmt.Errorf("%w: an SQLite store is a file, and the DSN names none (in-memory databases are not stores)", ErrDSN)
	}
	// What the board sets may be said again (SQLiteDSN's DSN says it all),
	// not otherwise. It is taken out here and put back by sqliteDSN.
	if v, ok := params["_txlock"]; ok && !(len(v) == 1 && strings.EqualFold(v[0], "immediate")) {
		return source{}, fmt.Errorf("%w: _txlock: the board's transactions are immediate", ErrDSN)
	}
	for _, k := range boardParams {
		if _, ok := params[k]; ok && k != "_txlock" {
			return source{}, fmt.Errorf("%w: parameter %s: the board sets WAL, foreign keys, the busy timeout, synchronous=FULL and immediate transactions itself, on a writable file it locks", ErrDSN, k)
		}
	}
	var pragmas []string
	for _, p := range params["_pragma"] {
		name := strings.ToLower(strings.TrimSpace(p))
		if i := strings.IndexAny(name, "(= "); i >= 0 {
			name = name[:i]
		}
		if !slices.Contains(boardPragmaNames, name) {
			pragmas = append(pragmas, p)
			continue
		}
		if !slices.ContainsFunc(boardPragmas, func(b string) bool { return strings.EqualFold(b, strings.ReplaceAll(p, " ", "")) }) {
			return source{}, fmt.Errorf("%w: _pragma %s: the board sets WAL, foreign keys, the busy timeout and synchronous=FULL itself", ErrDSN, name)
		}
	}
	own := url.Values{}
	for k, v := range params {
		if k != "_txlock" && k != "_pragma" {
			own[k] = v
		}
	}
	if len(pragmas) > 0 {
		own["_pragma"] = pragmas
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return source{}, fmt.Errorf("%w: its path: %v", ErrDSN, err)
	}
	return source{path: abs, params: own}, nil
}

// sqliteDSN is the DSN the driver opens for the SQLite file at path: a
// file: URL with the caller's parameters and the board's.
func sqliteDSN(path string, params url.Values) string {
	q := url.Values{}
	for k, vs := range params {
		q[k] = append([]string(nil), vs...)
	}
	for _, p := range boardPragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return "file:" + escapePath(filepath.ToSlash(path)) + "?" + q.Encode()
}

// escapePath escapes what SQLite's URI parser would not read as part of
// a path: % (it decodes %HH), ? and #.
func escapePath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(p)
}

// SQLiteDSN is the DSN of the embedded store in dir (its file is
// board.db), with the pragmas Open gives every SQLite store.
func SQLiteDSN(dir string) string {
	return sqliteDSN(filepath.Join(dir, sqliteFile), nil)
}
