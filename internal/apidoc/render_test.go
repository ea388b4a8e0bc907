package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/symphonix/symphonix/api/symphonix/board/v1"
	"github.com/symphonix/symphonix/board"
)

// v1Image is the image of API v1 as released, with its comments: what the
// reference of every later version describes at least.
const v1Image = "../../proto/v1.binpb"

func renderV1(t *testing.T, access accessFunc) string {
	t.Helper()
	image, err := os.ReadFile(v1Image)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := render(image, Package, access)
	if err != nil {
		t.Fatalf("render(%s) = %v", v1Image, err)
	}
	return string(doc)
}

// row is the cells of the services' table row of method, or nil.
func row(doc, method string) []string {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| ["+method+"](") {
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	return nil
}

// section is the text of the method's own section.
func section(doc, heading string) string {
	_, after, ok := strings.Cut(doc, "\n#### "+heading+"\n")
	if !ok {
		return ""
	}
	end := strings.Index(after, "\n#")
	if end < 0 {
		return after
	}
	return after[:end]
}

func TestReference(t *testing.T) {
	t.Parallel()
	doc := renderV1(t, board.AccessOf)
	tests := []struct {
		method  string // of the services' tables
		heading string // of its section
		who     string // the table's cell
		whoLong string // in the section
		errs    []string
		stream  string
		notErrs []string // everyday words the comment uses that are not codes
	}{
		{"Decide", "ApprovalService.Decide", "approver", "an operator token or a signed-in person with role approver or admin",
			[]string{"`invalid_argument`", "`permission_denied`", "`failed_precondition`"}, "unary", nil},
		{"ListAudit", "AuditService.ListAudit", "admin", "an operator token or a signed-in person with role admin",
			[]string{"`invalid_argument`"}, "unary", nil},
		{"Link", "AgentLinkService.Link", "agent token", "an agent token",
			[]string{"`invalid_argument`", "`failed_precondition`", "`unauthenticated`"}, "bidi stream", nil},
		{"ListAgents", "AgentService.ListAgents", "viewer", "with role viewer, approver or admin", []string{"`invalid_argument`"}, "unary", nil},
		{"EnterPairingCode", "UserService.EnterPairingCode", "signed-in person", "never a token", []string{"`not_found`"}, "unary", []string{"`unknown`"}},
		{"WatchApprovals", "ApprovalService.WatchApprovals", "viewer", "role viewer",
			[]string{"`resource_exhausted`", "`unavailable`"}, "server stream", nil},
		{"ReplaceSwitches", "ToolService.ReplaceSwitches", "admin", "role admin", []string{"`invalid_argument`"}, "unary", nil},
	}
	for _, tt := range tests {
		cells := row(doc, tt.method)
		if len(cells) != 5 {
			t.Errorf("%s: services' table row = %q, want 5 cells", tt.method, cells)
			continue
		}
		if cells[3] != tt.who {
			t.Errorf("%s: who may call = %q, want %q", tt.method, cells[3], tt.who)
		}
		if cells[2] != tt.stream {
			t.Errorf("%s: stream = %q, want %q", tt.method, cells[2], tt.stream)
		}
		for _, e := range tt.errs {
			if !strings.Contains(cells[4], e) {
				t.Errorf("%s: errors = %q, want %s among them", tt.method, cells[4], e)
			}
		}
		for _, e := range tt.notErrs {
			if strings.Contains(cells[4], e) {
				t.Errorf("%s: errors = %q, want no %s", tt.method, cells[4], e)
			}
		}
		sec := section(doc, tt.heading)
		if !strings.Contains(sec, "**Who may call:** ") || !strings.Contains(sec, tt.whoLong) {
			t.Errorf("%s: section says\n%s\nwant who may call: %q", tt.heading, sec, tt.whoLong)
		}
	}
	// Messages and enums, with their fields, types and comments.
	for _, want := range []string{
		"\n### Approval\n",
		"| `decide_time` | 5 | `google.protobuf.Timestamp` | `decideTime` | When it was decided. |",
		"| `quorum` | 6 | optional int32 | `quorum` |",
		"| `votes` | 15 | repeated string | `votes` |",
		"| `say` | 2 | [Say](#say) | `say` |",
		"| `show` | 7 | `google.protobuf.Struct` | `show` | **Deprecated.** ",
		"One of `kind`, at most one set: `hello`, `ping`, `pong`,",
		"| `SAY_CANCELLED` | 3 | Cancelled: nobody decided; the run ends.",
		"| `LINK_ERROR_CODE_NOT_FOUND` | 5 |",
		"Reserved, never to be used again: numbers 2; names `truncated`.",
		`"\<server>.\<tool>"`, // as Markdown shows "<server>.<tool>"
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the reference does not say %q", want)
		}
	}
}

// TestEveryMethodHasAnAccess checks that the board's policy table names
// every method of the API: one it does not is refused to everybody, and
// the reference would not be written.
func TestEveryMethodHasAnAccess(t *testing.T) {
	t.Parallel()
	n := 0
	for _, p := range procedures(t) {
		n++
		if _, ok := board.AccessOf(p); !ok {
			t.Errorf("board.AccessOf(%s): not in the policy table", p)
		}
	}
	if n == 0 {
		t.Fatal("no methods registered")
	}
}

// TestMissingAccessIsAnError: a method the table does not name stops the
// reference, naming the method.
func TestMissingAccessIsAnError(t *testing.T) {
	t.Parallel()
	image, err := os.ReadFile(v1Image)
	if err != nil {
		t.Fatal(err)
	}
	const missing = "/symphonix.board.v1.AuditService/ListAudit"
	_, err = render(image, Package, func(p string) (board.Access, bool) {
		if p == missing {
			return board.Access{}, false
		}
		return board.AccessOf(p)
	})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("render without %s = %v, want an error naming it", missing, err)
	}
}

// TestCommittedReference checks docs/api.md against the board's table as
// it is now, for every method: a role changed in board/auth.go without go
// generate fails here before CI's regeneration does.
func TestCommittedReference(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, p := range procedures(t) {
		a, ok := board.AccessOf(p)
		if !ok {
			continue // TestEveryMethodHasAnAccess
		}
		service, method := serviceMethod(p)
		sec := section(doc, service+"."+method)
		if sec == "" {
			t.Errorf("docs/api.md: no section for %s (go generate ./...)", p)
			continue
		}
		if want := "**Who may call:** " + whoLong(a) + "."; !strings.Contains(sec, want) {
			t.Errorf("docs/api.md: %s does not say %q (go generate ./...)", p, want)
		}
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`"*" for all`, `"\*" for all`},
		{`as "<server>.<tool>"`, `as "\<server>.\<tool>"`},
		{"in `a*b <c>` code", "in `a*b <c>` code"},
		{"snake_case stays", "snake_case stays"},
		{"'-', '_' and '.'", `'-', '\_' and '.'`},
		{"# not a heading", `\# not a heading`},
		{"- not a list", `\- not a list`},
		{"a - b", "a - b"},
		{`back\slash`, `back\\slash`},
	}
	for _, tt := range tests {
		if got := escape(tt.in); got != tt.want {
			t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRun writes the reference from an image file, as go generate does
// from buf's output.
func TestRun(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "api.md")
	var stderr strings.Builder
	if err := run(t.Context(), []string{"-image", v1Image, "-o", out}, nil, &stderr); err != nil {
		t.Fatalf("run = %v (stderr %q)", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# API reference\n") {
		t.Errorf("%s begins %q, want the reference", out, string(data[:min(len(data), 40)]))
	}
	if err := run(t.Context(), nil, nil, &stderr); err == nil {
		t.Error("run with no image = nil, want an error")
	}
}

// procedures are the methods of the API as the generated Go registers them.
func procedures(t *testing.T) []string {
	t.Helper()
	var out []string
	protoregistry.GlobalFiles.RangeFilesByPackage(Package, func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				out = append(out, "/"+string(sd.FullName())+"/"+string(sd.Methods().Get(j).Name()))
			}
		}
		return true
	})
	slices.Sort(out)
	return out
}

func serviceMethod(procedure string) (service, method string) {
	full, method, _ := strings.Cut(strings.TrimPrefix(procedure, "/"), "/")
	return full[strings.LastIndex(full, ".")+1:], method
}
