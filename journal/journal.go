// Package journal keeps an agent's journal: one JSON line for every model
// call and every tool call it makes (the API reference's journalledLlm and
// journalledCallTool), in <dir>/.symphonix/journal.jsonl. It records what
// ran, when, for how long and what went wrong, and withholds what a call
// was given and gave back unless it is opened with full detail, and then
// without the secrets it was given (Config.Secrets). The file is capped and
// rotated, and a journal never fails the run it records.
//
// The thread a line belongs to travels on the run's context (WithThread).
// The design is docs/serve.md, "The journal".
package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/secrets"
)

// The kinds of call a journal records: the flow language reference's llm
// and tool.
const (
	KindLLM  = "llm"
	KindTool = "tool"
)

// kindModel is what a model call's kind was before it was KindLLM: a
// journal written then is read back as KindLLM.
const kindModel = "model"

// Detail is how much a journal keeps of each call.
type Detail string

const (
	// DetailMetadata keeps what ran, when, for how long and what went
	// wrong, and withholds what a call was given and what it gave back,
	// naming them in Entry.Withheld. It is the default: a journal holds the
	// rows an agent read and the mail it answered, and keeping those is a
	// decision rather than a convenience.
	DetailMetadata Detail = "metadata"
	// DetailFull keeps the payloads too, without the journal's secrets
	// (Config.Secrets), each cut to its opening (PayloadMaxChars) when it is
	// long.
	DetailFull Detail = "full"
)

// ParseDetail reads a Detail as a flag gives it.
func ParseDetail(s string) (Detail, error) {
	switch d := Detail(s); d {
	case DetailMetadata, DetailFull:
		return d, nil
	}
	return "", fmt.Errorf("%q is not a journal detail: want %s or %s", s, DetailMetadata, DetailFull)
}

// DefaultMaxBytes is the size past which a journal is rotated when
// Config.MaxBytes is zero.
const DefaultMaxBytes = 10 << 20

// PayloadMaxChars is how much of one payload a full-detail journal keeps:
// a longer prompt or reply is kept as its opening and "…", and longer
// arguments or results as the opening of their JSON text.
const PayloadMaxChars = 8 << 10

// Path is where the journal of the agent in dir is kept.
func Path(dir string) string { return filepath.Join(dir, ".symphonix", "journal.jsonl") }

// Config configures Open.
type Config struct {
	// Path: required. The file the journal appends to; it and its folder
	// are created (0600 and 0700) when they are not there.
	Path string
	// MaxBytes: a write that would take the file past this many bytes
	// first moves it to Path+".1" (replacing the one there, so one old
	// file is kept) and starts a new one. 0: DefaultMaxBytes.
	MaxBytes int64
	// Detail: "" is DetailMetadata.
	Detail Detail
	// Secrets: values replaced with secrets.Redacted wherever they occur
	// in an entry's error and payloads (in arguments and results, in
	// every string, key and number) before it is written: the named
	// secrets of the agent (secrets.Named). Values shorter than
	// secrets.Enough are never secrets, and are ignored. nil removes
	// nothing.
	Secrets []string
	// SecretSet: when not nil, used instead of Secrets, and followed as it
	// grows (secrets.Set.Add): a served agent's named secrets follow its
	// .env.
	SecretSet *secrets.Set
	// Logger: where a failed write is said; nil discards.
	Logger *slog.Logger
	// Now: the clock for Entry.At and durations; nil is time.Now.
	Now func() time.Time
}

// Journal writes one JSON line per model call and tool call an agent makes
// (see Entry). Writes are serialized, and a write that fails is logged and
// dropped: a journal never fails the run it records. A nil *Journal
// records nothing.
type Journal struct {
	path    string
	max     int64
	detail  Detail
	secrets *secrets.Set
	log     *slog.Logger
	now     func() time.Time

	mu     sync.Mutex
	f      *os.File // nil until the first write, and after a failure or a rotation
	size   int64
	closed bool
}

// Open checks cfg and the file, and creates the file's folder. The
// file itself is created by the first entry, so a journal nobody wrote to
// leaves nothing behind. It fails when the configuration is wrong, the
// folder cannot be made, or the path is not a file.
func Open(cfg Config) (*Journal, error) {
	if cfg.Path == "" {
		return nil, errors.New("journal: Config.Path is required")
	}
	if cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("journal: Config.MaxBytes is %d; want 0 (the default) or more", cfg.MaxBytes)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Detail == "" {
		cfg.Detail = DetailMetadata
	}
	if _, err := ParseDetail(string(cfg.Detail)); err != nil {
		return nil, fmt.Errorf("journal: Config.Detail: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	switch st, err := os.Stat(cfg.Path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("journal: %w", err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("journal: %s is not a file", cfg.Path)
	}
	set := cfg.SecretSet
	if set == nil {
		set = secrets.NewSet(cfg.Secrets)
	}
	return &Journal{
		path: cfg.Path, max: cfg.MaxBytes, detail: cfg.Detail, secrets: set, log: cfg.Logger, now: cfg.Now,
	}, nil
}

// Path is the file the journal writes.
func (j *Journal) Path() string { return j.path }

// Detail is how much the journal keeps.
func (j *Journal) Detail() Detail { return j.detail }

// open opens the file for appending, creating it. The caller holds j.mu.
func (j *Journal) open() error {
	if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	j.f, j.size = f, st.Size()
	return nil
}

// Record writes one entry: under DetailFull with its payloads, and
// WithoutPayloads otherwise. Its error and payloads are written without the
// journal's secrets (Config.Secrets), and then each payload cut to its
// opening, so no secret is ever cut in half. It never fails; a write that
// cannot be made is logged.
func (j *Journal) Record(ctx context.Context, e Entry) {
	if j == nil {
		return
	}
	if j.detail == DetailFull {
		e = cutPayloads(j.withoutSecrets(e))
	} else {
		e = j.withoutSecrets(WithoutPayloads(e))
	}
	line, err := json.Marshal(e)
	if err != nil {
		// A result that is not JSON (a tool's own type gone wrong): keep
		// the line, without it.
		e.Result = fmt.Sprintf("(not JSON: %v)", err)
		if line, err = json.Marshal(e); err != nil {
			j.log.WarnContext(ctx, "journal entry not written", "path", j.path, "kind", e.Kind, "name", e.Name, "err", err)
			return
		}
	}
	line = append(line, '\n')
	if err := j.write(ctx, line); err != nil {
		j.log.WarnContext(ctx, "journal entry not written", "path", j.path, "kind", e.Kind, "name", e.Name, "err", err)
	}
}

// write appends one line, rotating the file first when the line would take
// it past the cap. A rotation that fails is logged, and the line written all
// the same.
func (j *Journal) write(ctx context.Context, line []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errors.New("the journal is closed")
	}
	if j.f == nil {
		if err := j.open(); err != nil {
			return err
		}
	}
	if j.size > 0 && j.size+int64(len(line)) > j.max {
		if err := j.rotate(); err != nil {
			j.log.WarnContext(ctx, "journal not rotated", "path", j.path, "err", err)
		}
		if err := j.open(); err != nil {
			return err
		}
	}
	n, err := j.f.Write(line)
	j.size += int64(n)
	if err != nil {
		// Start again from a fresh handle at the next write.
		j.f.Close()
		j.f = nil
		return err
	}
	return nil
}

// rotate moves the file to path.1 and leaves j.f nil, for write to open a
// new one. When the move fails the file is opened again and grows on: a
// journal past its cap loses nothing, one that cannot be written loses
// everything. The caller holds j.mu.
func (j *Journal) rotate() error {
	j.f.Close()
	j.f = nil
	if err := os.Rename(j.path, j.path+".1"); err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	return nil
}

// Close closes the file; entries recorded afterwards are dropped.
func (j *Journal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// WrapModel returns m with every call it answers recorded (the API
// reference's journalledLlm): a KindLLM entry named for the llm node,
// with the run it was made in and the tokens the model reports. A nil
// Journal returns m.
func (j *Journal) WrapModel(m flow.Model) flow.Model {
	if j == nil || m == nil {
		return m
	}
	return journalledModel{j: j, m: m}
}

type journalledModel struct {
	j *Journal
	m flow.Model
}

func (jm journalledModel) Complete(ctx context.Context, req flow.ModelRequest) (flow.ModelReply, error) {
	start := jm.j.now()
	reply, err := jm.m.Complete(ctx, req)
	e := Entry{
		At:         start.UTC(),
		Thread:     threadFrom(ctx),
		Run:        flow.RunOf(ctx),
		Node:       req.Node,
		Kind:       KindLLM,
		Name:       req.Node,
		DurationMS: jm.j.now().Sub(start).Milliseconds(),
		OK:         err == nil,
		Prompt:     req.Prompt,
	}
	if err != nil {
		e.Error = err.Error()
	} else {
		e.Reply = reply.Text
	}
	if u := reply.Usage; u != nil {
		e.Tokens = &Tokens{Input: u.InputTokens, Output: u.OutputTokens, Cached: u.CachedTokens, Total: u.TotalTokens}
		if e.Tokens.Total == 0 {
			e.Tokens.Total = u.InputTokens + u.OutputTokens
		}
	}
	jm.j.Record(ctx, e)
	return reply, err
}

// WrapTools returns call with every call it makes recorded (the API
// reference's journalledCallTool): a KindTool entry named for the tool,
// with the run it was made in. A nil Journal returns call.
func (j *Journal) WrapTools(call flow.ToolCaller) flow.ToolCaller {
	if j == nil || call == nil {
		return call
	}
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		start := j.now()
		res, err := call(ctx, name, args)
		e := Entry{
			At:         start.UTC(),
			Thread:     threadFrom(ctx),
			Run:        flow.RunOf(ctx),
			Kind:       KindTool,
			Name:       name,
			DurationMS: j.now().Sub(start).Milliseconds(),
			OK:         err == nil,
			Args:       args,
		}
		if err != nil {
			e.Error = err.Error()
		} else {
			e.Result = res
		}
		j.Record(ctx, e)
		return res, err
	}
}

// Entry is one line of the journal: one model call or one tool call.
type Entry struct {
	// At is when the call started, in UTC.
	At time.Time `json:"at"`
	// Thread is the conversation the call was made for: the thread on the
	// run's context (WithThread); empty when it carries none.
	Thread string `json:"thread,omitempty"`
	// Run is the id of the run the call was made in (flow.RunOf): the
	// engine puts it on the context of every model and tool call. Empty
	// for a call made outside a run.
	Run string `json:"run,omitempty"`
	// Node is the node that made the call, when it is known: an llm
	// node's id. A tool call does not say which node made it.
	Node string `json:"node,omitempty"`
	// Kind is KindLLM or KindTool. A line written as "model" (before
	// the kind was llm) is read back as KindLLM.
	Kind string `json:"kind"`
	// Name is the llm node's id for a model call and the tool's name
	// ("server.tool") for a tool call.
	Name string `json:"name"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// OK is false when the call failed, and Error then says why.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Tokens is what a model call spent, when the model reported it.
	Tokens *Tokens `json:"tokens,omitempty"`

	// The payloads: a model call's prompt and reply, a tool call's
	// arguments and result. A journal keeps them only under DetailFull.
	Prompt string         `json:"prompt,omitempty"`
	Reply  string         `json:"reply,omitempty"`
	Args   map[string]any `json:"args,omitempty"`
	Result any            `json:"result,omitempty"`

	// Withheld names the payloads that were there and were taken out, so
	// that a reader can tell "there was nothing" from "there was something
	// and you are not being shown it".
	Withheld []string `json:"withheld,omitempty"`
}

// Tokens is what one model call spent, as the provider reported it.
// Cached is how many of Input the provider read from its prompt cache (0
// when it did not say); Total is the provider's total, or Input + Output
// when it gave none.
type Tokens struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	Cached int `json:"cached"`
	Total  int `json:"total"`
}

// WithoutPayloads returns e with its payloads taken out and named in
// Withheld: what ran, when, for how long and what went wrong, without what
// it was given or what it gave back.
func WithoutPayloads(e Entry) Entry {
	var withheld []string
	if e.Prompt != "" {
		withheld = append(withheld, "prompt")
	}
	if e.Reply != "" {
		withheld = append(withheld, "reply")
	}
	if len(e.Args) > 0 {
		withheld = append(withheld, "args")
	}
	if e.Result != nil {
		withheld = append(withheld, "result")
	}
	e.Prompt, e.Reply, e.Args, e.Result = "", "", nil, nil
	e.Withheld = append(e.Withheld[:len(e.Withheld):len(e.Withheld)], withheld...)
	return e
}

// withoutSecrets returns e with the journal's secrets removed from its
// error and payloads. e's arguments and result are not changed: they are
// the run's.
func (j *Journal) withoutSecrets(e Entry) Entry {
	if j.secrets.Len() == 0 {
		return e
	}
	e.Error = j.secrets.Without(e.Error)
	e.Prompt = j.secrets.Without(e.Prompt)
	e.Reply = j.secrets.Without(e.Reply)
	if e.Args != nil {
		args, _ := j.secrets.WithoutValue(e.Args).(map[string]any)
		e.Args = args
	}
	if e.Result != nil {
		e.Result = j.secrets.WithoutValue(e.Result)
	}
	return e
}

// cutPayloads keeps each payload's opening: PayloadMaxChars of text, and
// of the JSON text of arguments and results.
func cutPayloads(e Entry) Entry {
	e.Prompt = opening(e.Prompt, PayloadMaxChars)
	e.Reply = opening(e.Reply, PayloadMaxChars)
	if len(e.Args) > 0 {
		if b, err := json.Marshal(e.Args); err == nil && utf8.RuneCount(b) > PayloadMaxChars {
			e.Args = map[string]any{"opening": opening(string(b), PayloadMaxChars)}
		}
	}
	if e.Result != nil {
		if b, err := json.Marshal(e.Result); err == nil && utf8.RuneCount(b) > PayloadMaxChars {
			e.Result = opening(string(b), PayloadMaxChars)
		}
	}
	return e
}

// opening returns s, or its first n characters and "…" when it is longer.
func opening(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// threadKey carries the thread a run is for from whoever starts the run,
// through the engine, to the journalled model and tools (the API
// reference's runContext), so a line can say which conversation it belongs
// to.
type threadKey struct{}

// WithThread returns ctx carrying thread: the lines of the model and tool
// calls a run on ctx makes name it. It is the one context value in the
// agent that is not the caller's identity.
func WithThread(ctx context.Context, thread string) context.Context {
	return context.WithValue(ctx, threadKey{}, thread)
}

func threadFrom(ctx context.Context) string {
	s, _ := ctx.Value(threadKey{}).(string)
	return s
}
