package journal_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/journal"
)

// fakeModel answers every request with reply, or fails with err.
type fakeModel struct {
	reply flow.ModelReply
	err   error
}

func (m fakeModel) Complete(context.Context, flow.ModelRequest) (flow.ModelReply, error) {
	return m.reply, m.err
}

// readEntries reads every line of a journal file.
func readEntries(t *testing.T, path string) []journal.Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []journal.Entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e journal.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// TestEntries: what a wrapped model and tool caller write, with and
// without payloads; tokens when the model reports them; failures; the
// thread the run's context carries.
func TestEntries(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(250 * time.Millisecond); return now }
	tests := []struct {
		name   string
		detail journal.Detail
		call   func(j *journal.Journal) error
		want   journal.Entry
	}{
		{
			name: "model, metadata",
			call: func(j *journal.Journal) error {
				_, err := j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "hi", Usage: &flow.Usage{InputTokens: 7, OutputTokens: 3}}}).
					Complete(context.Background(), flow.ModelRequest{Node: "greet", Prompt: "say hi"})
				return err
			},
			want: journal.Entry{Node: "greet", Kind: journal.KindLLM, Name: "greet", DurationMS: 250, OK: true,
				Tokens: &journal.Tokens{Input: 7, Output: 3, Total: 10}, Withheld: []string{"prompt", "reply"}},
		},
		{
			name: "model, the provider's cached tokens and total",
			call: func(j *journal.Journal) error {
				_, err := j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "hi", Usage: &flow.Usage{InputTokens: 2006, OutputTokens: 300, CachedTokens: 1920, TotalTokens: 2310}}}).
					Complete(context.Background(), flow.ModelRequest{Node: "greet", Prompt: "say hi"})
				return err
			},
			want: journal.Entry{Node: "greet", Kind: journal.KindLLM, Name: "greet", DurationMS: 250, OK: true,
				Tokens: &journal.Tokens{Input: 2006, Output: 300, Cached: 1920, Total: 2310}, Withheld: []string{"prompt", "reply"}},
		},
		{
			name:   "model, full",
			detail: journal.DetailFull,
			call: func(j *journal.Journal) error {
				_, err := j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "hi"}}).
					Complete(context.Background(), flow.ModelRequest{Node: "greet", Prompt: "say hi"})
				return err
			},
			want: journal.Entry{Node: "greet", Kind: journal.KindLLM, Name: "greet", DurationMS: 250, OK: true, Prompt: "say hi", Reply: "hi"},
		},
		{
			name: "model fails",
			call: func(j *journal.Journal) error {
				_, err := j.WrapModel(fakeModel{err: errors.New("rate limited")}).
					Complete(context.Background(), flow.ModelRequest{Node: "greet", Prompt: "say hi"})
				return err
			},
			want: journal.Entry{Node: "greet", Kind: journal.KindLLM, Name: "greet", DurationMS: 250, Error: "rate limited", Withheld: []string{"prompt"}},
		},
		{
			name: "tool, metadata",
			call: func(j *journal.Journal) error {
				_, err := j.WrapTools(func(context.Context, string, map[string]any) (any, error) { return map[string]any{"ok": true}, nil })(
					context.Background(), "orders.lookup_order", map[string]any{"order_id": "A-1"})
				return err
			},
			want: journal.Entry{Kind: journal.KindTool, Name: "orders.lookup_order", DurationMS: 250, OK: true, Withheld: []string{"args", "result"}},
		},
		{
			name: "model on a thread",
			call: func(j *journal.Journal) error {
				_, err := j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "hi"}}).
					Complete(journal.WithThread(context.Background(), "chat-1"), flow.ModelRequest{Node: "greet", Prompt: "say hi"})
				return err
			},
			want: journal.Entry{Thread: "chat-1", Node: "greet", Kind: journal.KindLLM, Name: "greet", DurationMS: 250, OK: true, Withheld: []string{"prompt", "reply"}},
		},
		{
			name: "tool on a thread",
			call: func(j *journal.Journal) error {
				_, err := j.WrapTools(func(context.Context, string, map[string]any) (any, error) { return "ok", nil })(
					journal.WithThread(context.Background(), "chat-2"), "orders.lookup_order", nil)
				return err
			},
			want: journal.Entry{Thread: "chat-2", Kind: journal.KindTool, Name: "orders.lookup_order", DurationMS: 250, OK: true, Withheld: []string{"result"}},
		},
		{
			name:   "tool fails, full",
			detail: journal.DetailFull,
			call: func(j *journal.Journal) error {
				_, err := j.WrapTools(func(context.Context, string, map[string]any) (any, error) { return nil, errors.New("no order") })(
					context.Background(), "orders.refund", map[string]any{"order_id": "A-1"})
				return err
			},
			want: journal.Entry{Kind: journal.KindTool, Name: "orders.refund", DurationMS: 250, Error: "no order", Args: map[string]any{"order_id": "A-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal.jsonl")
			j, err := journal.Open(journal.Config{Path: path, Detail: tt.detail, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			callErr := tt.call(j)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if (callErr != nil) != (tt.want.Error != "") {
				t.Errorf("the call returned %v: the journal must not change it", callErr)
			}
			got := readEntries(t, path)
			if len(got) != 1 {
				t.Fatalf("%d entries, want 1", len(got))
			}
			g := got[0]
			if g.At.IsZero() {
				t.Errorf("entry has no time")
			}
			g.At = time.Time{}
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(tt.want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("entry = %s, want %s", gb, wb)
			}
		})
	}
}

// TestWithoutPayloads names what it took out, and only what was there.
func TestWithoutPayloads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   journal.Entry
		want []string
	}{
		{"model", journal.Entry{Kind: journal.KindLLM, Prompt: "p", Reply: "r"}, []string{"prompt", "reply"}},
		{"model with no reply", journal.Entry{Kind: journal.KindLLM, Prompt: "p"}, []string{"prompt"}},
		{"tool", journal.Entry{Kind: journal.KindTool, Args: map[string]any{"a": 1}, Result: false}, []string{"args", "result"}},
		{"tool with no args", journal.Entry{Kind: journal.KindTool, Result: "x"}, []string{"result"}},
		{"nothing", journal.Entry{Kind: journal.KindTool}, nil},
	}
	for _, tt := range tests {
		got := journal.WithoutPayloads(tt.in)
		if got.Prompt != "" || got.Reply != "" || got.Args != nil || got.Result != nil || !slices.Equal(got.Withheld, tt.want) {
			t.Errorf("WithoutPayloads(%s) = %+v, want no payloads, withheld %q", tt.name, got, tt.want)
		}
	}
}

// TestCutsLongPayloads: a full-detail journal keeps a long payload's
// opening.
func TestCutsLongPayloads(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: path, Detail: journal.DetailFull})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", journal.PayloadMaxChars+10)
	j.Record(t.Context(), journal.Entry{Kind: journal.KindLLM, Name: "n", Prompt: long, Reply: "short"})
	j.Close()
	e := readEntries(t, path)[0]
	if want := strings.Repeat("é", journal.PayloadMaxChars) + "…"; e.Prompt != want || e.Reply != "short" {
		t.Errorf("prompt of %d characters kept as %d, reply %q; want the opening and the short reply whole", len([]rune(long)), len([]rune(e.Prompt)), e.Reply)
	}
}

// TestRotates: a write that would take the file past the cap moves
// it to journal.jsonl.1 first; one old file is kept; nothing is lost from
// the newest lines.
func TestRotates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.jsonl")
	const max = 400
	j, err := journal.Open(journal.Config{Path: path, MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		j.Record(t.Context(), journal.Entry{Kind: journal.KindTool, Name: fmt.Sprintf("tool%02d", i), OK: true})
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > max || st.Size() == 0 {
			t.Errorf("%s is %d bytes, want 1 to %d", p, st.Size(), max)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "journal.jsonl*"))
	if len(files) != 2 {
		t.Errorf("files = %q, want the journal and one old file", files)
	}
	old, cur := readEntries(t, path+".1"), readEntries(t, path)
	all := append(old, cur...)
	if last := all[len(all)-1].Name; last != fmt.Sprintf("tool%02d", n-1) {
		t.Errorf("the last line is %s, want tool%02d", last, n-1)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Name <= all[i-1].Name {
			t.Errorf("lines out of order across the rotation: %s after %s", all[i].Name, all[i-1].Name)
		}
	}
}

// TestSerializesWrites: concurrent calls each get a whole line.
func TestSerializesWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: path, Detail: journal.DetailFull})
	if err != nil {
		t.Fatal(err)
	}
	m := j.WrapModel(fakeModel{reply: flow.ModelReply{Text: strings.Repeat("x", 5000)}})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			_, _ = m.Complete(t.Context(), flow.ModelRequest{Node: fmt.Sprint("n", i), Prompt: strings.Repeat("p", 3000)})
		})
	}
	wg.Wait()
	j.Close()
	if got := len(readEntries(t, path)); got != 50 {
		t.Errorf("%d lines, want 50", got)
	}
}

// TestFailureDoesNotFailTheRun: a journal that cannot write logs it,
// and the call it records returns as if there were no journal.
func TestFailureDoesNotFailTheRun(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	j, err := journal.Open(journal.Config{Path: filepath.Join(t.TempDir(), "journal.jsonl"), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	j.Close() // every write from now on fails
	reply, err := j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "hi"}}).Complete(t.Context(), flow.ModelRequest{Node: "n", Prompt: "secret prompt"})
	if err != nil || reply.Text != "hi" {
		t.Errorf("Complete through a broken journal = %q, %v; want hi, nil", reply.Text, err)
	}
	res, err := j.WrapTools(func(context.Context, string, map[string]any) (any, error) { return 42, nil })(t.Context(), "t", nil)
	if err != nil || res != 42 {
		t.Errorf("tool call through a broken journal = %v, %v; want 42, nil", res, err)
	}
	if !strings.Contains(logged.String(), "journal entry not written") {
		t.Errorf("log = %q, want the failed write said", logged.String())
	}
	if strings.Contains(logged.String(), "secret prompt") {
		t.Errorf("log = %q: it holds the payload", logged.String())
	}

	// A path that cannot be a file is refused at open.
	if _, err := journal.Open(journal.Config{Path: t.TempDir()}); err == nil {
		t.Error("Open on a folder: no error")
	}
	// A nil journal records nothing and wraps nothing.
	var none *journal.Journal
	if m := none.WrapModel(fakeModel{}); m != (fakeModel{}) {
		t.Errorf("nil journal wrapped the model: %T", m)
	}
}

// TestFile: nothing is created until the first entry, and a file
// already past the cap when the journal opens is rotated by the first.
func TestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".symphonix", "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: path, MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal file before any entry: %v, want none", err)
	}
	j.Close()

	old := strings.Repeat("x", 150) + "\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err = journal.Open(journal.Config{Path: path, MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	j.Record(t.Context(), journal.Entry{Kind: journal.KindTool, Name: "t", OK: true})
	j.Close()
	if b, err := os.ReadFile(path + ".1"); err != nil || string(b) != old {
		t.Errorf("journal.jsonl.1 = %q, %v; want the old file", b, err)
	}
	if got := readEntries(t, path); len(got) != 1 || got[0].Name != "t" {
		t.Errorf("journal = %+v, want the one new entry", got)
	}
}

// TestWithoutSecrets: the journal's secrets are taken out of what it
// keeps — prompt, reply, error, arguments and result, in their strings,
// keys and numbers — before it is written, at either detail; what is not
// a secret (a short value, a host name nobody named) is kept as it was
// said; a secret where a long payload is cut is removed, not cut in half.
func TestWithoutSecrets(t *testing.T) {
	t.Parallel()
	const (
		key     = "sk-test-0123456789abcdef"
		token   = "orders-token-42424242"
		account = "98765432109"
		short   = "abc1234" // shorter than secrets.Enough
		host    = "build-runner-07"
	)
	list := []string{key, token, account, short}
	type order struct {
		Customer string `json:"customer"`
		Note     string `json:"note"`
	}
	calls := func(j *journal.Journal) {
		ctx := t.Context()
		_, _ = j.WrapModel(fakeModel{reply: flow.ModelReply{Text: "on " + host + " the key is " + key + ", the code " + short}}).
			Complete(ctx, flow.ModelRequest{Node: "n", Prompt: "tell me " + key + " twice: " + key})
		_, _ = j.WrapTools(func(context.Context, string, map[string]any) (any, error) {
			return order{Customer: "Ada", Note: "paid with " + token}, nil
		})(ctx, "orders.lookup", map[string]any{"token": token, token: "as a key", "account": json.Number(account), "n": 3})
		_, _ = j.WrapModel(fakeModel{err: errors.New("401: key " + key + " refused on " + host)}).
			Complete(ctx, flow.ModelRequest{Node: "n", Prompt: "p"})
	}
	for _, detail := range []journal.Detail{journal.DetailFull, journal.DetailMetadata} {
		t.Run(string(detail), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "journal.jsonl")
			j, err := journal.Open(journal.Config{Path: path, Detail: detail, Secrets: list})
			if err != nil {
				t.Fatal(err)
			}
			calls(j)
			j.Close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{key, token, account} {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("the journal holds %q:\n%s", secret, b)
				}
			}
			e := readEntries(t, path)
			if len(e) != 3 {
				t.Fatalf("%d entries, want 3", len(e))
			}
			if want := "401: key REDACTED refused on " + host; e[2].Error != want {
				t.Errorf("error = %q, want %q", e[2].Error, want)
			}
			if detail != journal.DetailFull {
				return
			}
			if want := "tell me REDACTED twice: REDACTED"; e[0].Prompt != want {
				t.Errorf("prompt = %q, want %q", e[0].Prompt, want)
			}
			if want := "on " + host + " the key is REDACTED, the code " + short; e[0].Reply != want {
				t.Errorf("reply = %q, want %q: what is not a secret is kept as it was said", e[0].Reply, want)
			}
			wantArgs := map[string]any{"token": "REDACTED", "REDACTED": "as a key", "account": "REDACTED", "n": float64(3)}
			if !reflect.DeepEqual(e[1].Args, wantArgs) {
				t.Errorf("args = %v, want %v", e[1].Args, wantArgs)
			}
			if want := map[string]any{"customer": "Ada", "note": "paid with REDACTED"}; !reflect.DeepEqual(e[1].Result, want) {
				t.Errorf("result = %v, want %v", e[1].Result, want)
			}
		})
	}

	// A secret where a long prompt is cut is removed whole before the cut.
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Open(journal.Config{Path: path, Detail: journal.DetailFull, Secrets: list})
	if err != nil {
		t.Fatal(err)
	}
	j.Record(t.Context(), journal.Entry{Kind: journal.KindLLM, Name: "n", Prompt: strings.Repeat("x", journal.PayloadMaxChars-12) + key + strings.Repeat("y", 100)})
	j.Close()
	if p := readEntries(t, path)[0].Prompt; strings.Contains(p, key[:5]) || !strings.Contains(p, "xREDACTED") {
		t.Errorf("a prompt with a secret where it is cut kept as …%q", p[len(p)-40:])
	}
}
