package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestRedactDSN(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://ann:s3cret@db.example:5432/board":          "postgres://ann:***@db.example:5432/board",
		"postgresql://ann@db.example/board":                    "postgresql://ann@db.example/board",
		"postgres://db.example/board?user=ann&password=s3cret": "postgres://db.example/board?password=***&user=ann",
		"file:/var/lib/board.db":                               "file:/var/lib/board.db",
		"/var/lib/board.db":                                    "/var/lib/board.db",
		"host=db password=s3cret":                              "***",
		"":                                                     "",
	} {
		got := RedactDSN(in)
		if got != want || strings.Contains(got, "s3cret") {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutput(t *testing.T) {
	t.Parallel()
	tab := Table{Header: []string{"NAME", "ROLE"}}
	tab.Append("ann", "")
	tab.Append("bob\twith a tab", "admin")
	type row struct {
		Name string `json:"name"`
	}
	for _, c := range []struct {
		args []string
		v    any
		want string
	}{
		{nil, nil, "NAME            ROLE\nann             -\nbob with a tab  admin\n"},
		{[]string{"-o", "json"}, []row{{"ann"}}, "[\n  {\n    \"name\": \"ann\"\n  }\n]\n"},
		{[]string{"--output", "json"}, []row(nil), "[]\n"},
	} {
		var o Output
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlag(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := o.Print(&b, tab, c.v); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("Print with %v = %q, want %q", c.args, b.String(), c.want)
		}
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	(&Output{}).AddFlag(fs)
	if err := fs.Parse([]string{"-o", "yaml"}); err == nil || !strings.Contains(err.Error(), `"yaml": want table or json`) {
		t.Errorf("-o yaml = %v, want refused", err)
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]int{
		nil:                                   0,
		errors.New("x"):                       1,
		ErrReported:                           1,
		Usagef("--x: bad"):                    2,
		fmt.Errorf("wrapped: %w", Usagef("")): 2,
	} {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
	var b bytes.Buffer
	Report(&b, "board", ErrReported)
	Report(&b, "board", nil)
	Report(&b, "board", errors.New("two\nlines"))
	if b.String() != "board: two lines\n" {
		t.Errorf("Report printed %q", b.String())
	}
}

func TestLogger(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log, err := Logger("json", "warn", &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("quiet")
	log.Warn("loud", "k", "v")
	if got := b.String(); !strings.HasPrefix(got, `{"time":`) || !strings.Contains(got, `"msg":"loud","k":"v"`) || strings.Contains(got, "quiet") {
		t.Errorf("json at warn wrote %q", got)
	}
	if _, err := Logger("xml", "info", &b); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("Logger(xml) = %v", err)
	}
	if _, err := Logger("text", "loud", &b); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("Logger(text, loud) = %v", err)
	}
}
