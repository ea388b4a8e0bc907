// Package transcript keeps what was said to a served agent and what it
// answered: one JSON line per turn in DIR/.symphonix/transcript.jsonl
// (the API reference's lgflow/transcript). The journal says what the agent
// did; the transcript says what was said. They are two stores on purpose:
// a journal is capped and read by a board, a conversation is content, kept
// per conversation and for as long as TRANSCRIPT_DAYS says.
//
// Every turn is written without the agent's named secrets (Config.Secrets,
// built from secrets.Named: never every value of the environment, which
// would eat an agent's own host name out of what it said), each side cut to
// its opening past MaxTextChars. Turns older than the days kept are dropped
// when the transcript opens and at most daily after, and the oldest past
// the file's cap, by writing the file anew and renaming it into place.
// Writing never fails a run: a turn that cannot be written is logged.
//
// The design is docs/serve.md, "The transcript".
package transcript

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/symphonix/symphonix/secrets"
)

// EnvDays is the environment variable that says how many days a turn is
// kept.
const EnvDays = "TRANSCRIPT_DAYS"

// How long a turn is kept: DefaultDays when TRANSCRIPT_DAYS is not set, at
// most MaxDays.
const (
	DefaultDays = 30
	MaxDays     = 3650
)

// DefaultMaxBytes is the file's cap when Config.MaxBytes is zero: past it
// the oldest turns are dropped.
const DefaultMaxBytes = 32 << 20

// MaxTextChars is how much of what was asked, and of what was answered, a
// turn keeps: a longer text is kept as its opening and "…", and a value
// that is not text (an object of several inputs) whose JSON is longer, as
// the opening of its JSON text.
const MaxTextChars = 16 << 10

// MaxThreadBytes is the longest thread name a turn is written for.
const MaxThreadBytes = 256

// MaxWhoBytes is the longest address a turn's Who keeps.
const MaxWhoBytes = 256

// MaxReadTurns is the most turns Thread returns at once.
const MaxReadTurns = 500

// maxLineBytes is the longest line read back; a longer one (written by
// hand, or cut by a crash) is skipped.
const maxLineBytes = 1 << 20

// Path is where the transcript of the agent in dir is kept.
func Path(dir string) string { return filepath.Join(dir, ".symphonix", "transcript.jsonl") }

// DaysFrom reads TRANSCRIPT_DAYS from getenv: DefaultDays when it is not
// set, and otherwise a whole number of days from 1 to MaxDays. Anything
// else is an error naming the variable.
func DaysFrom(getenv func(string) string) (int, error) {
	if getenv == nil {
		return DefaultDays, nil
	}
	v := strings.TrimSpace(getenv(EnvDays))
	if v == "" {
		return DefaultDays, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxDays {
		return 0, fmt.Errorf("%s: %q: want a whole number of days from 1 to %d (not set: %d)", EnvDays, v, MaxDays, DefaultDays)
	}
	return n, nil
}

// Turn is one line of the transcript: what was asked on a thread, what the
// agent answered, and when (the time the conversation's history gives the
// same turn, so the two copies agree).
type Turn struct {
	At     time.Time `json:"at"`
	Thread string    `json:"thread"`
	// Who is the address of the person who asked, when the agent knows it
	// (paired or verified); "" otherwise.
	Who      string `json:"who,omitempty"`
	Asked    any    `json:"asked"`
	Answered any    `json:"answered"`
}

// Conversation is the pointer to one conversation the transcript holds:
// no word of what was said.
type Conversation struct {
	Thread string `json:"thread"`
	// Last is the time of its newest turn.
	Last time.Time `json:"last"`
	// Turns is how many turns the transcript holds of it.
	Turns int `json:"turns"`
}

// Config configures Open.
type Config struct {
	// Path: required. The file; it and its folder are created (0600,
	// 0700) by the first turn.
	Path string
	// Days: how many days a turn is kept (DaysFrom). 0 is DefaultDays.
	Days int
	// MaxBytes: the file's cap; past it the oldest turns are dropped. 0 is
	// DefaultMaxBytes.
	MaxBytes int64
	// Secrets: required. What is taken out of every turn before it is
	// written: the agent's named secrets (secrets.NewSet of secrets.Named
	// and the values its .env gives). An empty Set says there are none;
	// nil is refused, because neither "everything this process inherited"
	// nor "nothing" is safe to assume on the agent's behalf.
	Secrets *secrets.Set
	// Logger: where a turn that could not be written is said; nil
	// discards.
	Logger *slog.Logger
	// Now: the clock that decides which turns are old; nil is time.Now.
	Now func() time.Time
}

// Transcript is an agent's transcript. It is safe for concurrent use; one
// served agent per folder (the lock) means one writer. A nil *Transcript
// keeps nothing and holds nothing.
type Transcript struct {
	path    string
	keep    time.Duration
	max     int64
	secrets *secrets.Set
	log     *slog.Logger
	now     func() time.Time

	mu     sync.Mutex
	size   int64
	pruned time.Time                // when old turns were last dropped
	convs  map[string]*Conversation // by thread
}

// Open checks cfg, drops the turns older than cfg.Days (and the oldest past
// the cap) and reads what is left into the list of conversations. A missing
// file is an empty transcript. It fails when cfg is wrong or the file
// cannot be read or written anew.
func Open(cfg Config) (*Transcript, error) {
	switch {
	case cfg.Path == "":
		return nil, errors.New("transcript: Config.Path is required")
	case cfg.Secrets == nil:
		return nil, errors.New("transcript: Config.Secrets is required: the agent's named secrets (secrets.Named), or an empty Set when it truly has none")
	case cfg.Days < 0 || cfg.Days > MaxDays:
		return nil, fmt.Errorf("transcript: Config.Days is %d; want 0 (the default, %d) to %d", cfg.Days, DefaultDays, MaxDays)
	case cfg.MaxBytes < 0:
		return nil, fmt.Errorf("transcript: Config.MaxBytes is %d; want 0 (the default) or more", cfg.MaxBytes)
	}
	if cfg.Days == 0 {
		cfg.Days = DefaultDays
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	t := &Transcript{
		path: cfg.Path, keep: time.Duration(cfg.Days) * 24 * time.Hour, max: cfg.MaxBytes,
		secrets: cfg.Secrets, log: cfg.Logger, now: cfg.Now, convs: map[string]*Conversation{},
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.prune(0); err != nil {
		return nil, err
	}
	return t, nil
}

// Path is the file the transcript keeps.
func (t *Transcript) Path() string { return t.path }

// Write adds a turn. Its asked and answered are written without the
// transcript's secrets and then cut to MaxTextChars each; a turn with no
// thread, or a thread longer than MaxThreadBytes, is not written. Turns
// past their days are dropped first when a day has passed since that was
// last done, and the oldest turns when the file would pass its cap. It
// never fails: a turn that cannot be written is logged and dropped.
func (t *Transcript) Write(ctx context.Context, turn Turn) {
	if t == nil {
		return
	}
	if turn.Thread == "" || len(turn.Thread) > MaxThreadBytes {
		t.log.WarnContext(ctx, "transcript turn not written: no thread, or a thread name too long", "path", t.path)
		return
	}
	if len(turn.Who) > MaxWhoBytes {
		turn.Who = ""
	}
	if turn.At.IsZero() {
		turn.At = t.now()
	}
	turn.At = turn.At.UTC()
	turn.Asked = cut(t.secrets.WithoutValue(turn.Asked))
	turn.Answered = cut(t.secrets.WithoutValue(turn.Answered))
	line, err := json.Marshal(turn)
	if err != nil {
		t.log.WarnContext(ctx, "transcript turn not written", "path", t.path, "thread", turn.Thread, "err", err)
		return
	}
	line = append(line, '\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.write(line, turn); err != nil {
		t.log.WarnContext(ctx, "transcript turn not written", "path", t.path, "thread", turn.Thread, "err", err)
	}
}

// write appends line, pruning first when a day has passed or the file
// would pass its cap. The caller holds t.mu.
func (t *Transcript) write(line []byte, turn Turn) error {
	if t.now().Sub(t.pruned) >= 24*time.Hour || t.size+int64(len(line)) > t.max {
		if err := t.prune(int64(len(line))); err != nil {
			// Dropping old turns failed: the turn is still worth keeping.
			t.log.Warn("transcript: old turns not dropped", "path", t.path, "err", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	n, err := f.Write(line)
	t.size += int64(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	t.count(turn.Thread, turn.At)
	return nil
}

// count adds a turn at at to thread's pointer. The caller holds t.mu.
func (t *Transcript) count(thread string, at time.Time) {
	c := t.convs[thread]
	if c == nil {
		c = &Conversation{Thread: thread}
		t.convs[thread] = c
	}
	c.Turns++
	if at.After(c.Last) {
		c.Last = at
	}
}

// prune writes the file anew without the turns older than the days kept,
// and without the oldest turns while what is left and room more bytes
// would pass three quarters of the cap (so a full transcript is not written
// anew at every turn), renames it into place, and reads the pointers again.
// The caller holds t.mu.
func (t *Transcript) prune(room int64) error {
	now := t.now()
	t.pruned = now
	oldest := now.Add(-t.keep)
	type line struct {
		at   time.Time
		size int64
	}
	var lines []line
	err := eachLine(t.path, func(b []byte) {
		var turn Turn
		if json.Unmarshal(b, &turn) != nil || turn.Thread == "" {
			lines = append(lines, line{}) // not a turn: dropped
			return
		}
		lines = append(lines, line{at: turn.At, size: int64(len(b)) + 1})
	})
	if errors.Is(err, fs.ErrNotExist) {
		t.size, t.convs = 0, map[string]*Conversation{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	keep := make([]bool, len(lines))
	var total int64
	for i, l := range lines {
		if !l.at.IsZero() && l.at.After(oldest) {
			keep[i] = true
			total += l.size
		}
	}
	target := t.max
	if total+room > t.max {
		target = t.max / 4 * 3
	}
	for i := 0; i < len(lines) && total+room > target; i++ {
		if keep[i] {
			keep[i] = false
			total -= lines[i].size
		}
	}
	dropped := slices.Contains(keep, false)
	convs := map[string]*Conversation{}
	t.convs = convs
	if !dropped {
		t.size = total
		return eachLine(t.path, func(b []byte) {
			var turn Turn
			if json.Unmarshal(b, &turn) == nil {
				t.count(turn.Thread, turn.At)
			}
		})
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), ".transcript-*.jsonl")
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	i := 0
	err = eachLine(t.path, func(b []byte) {
		k := i < len(keep) && keep[i]
		i++
		if !k {
			return
		}
		var turn Turn
		if json.Unmarshal(b, &turn) != nil {
			return
		}
		w.Write(b)
		w.WriteByte('\n')
		t.count(turn.Thread, turn.At)
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), t.path)
	}
	if err != nil {
		return fmt.Errorf("transcript: dropping old turns: %w", err)
	}
	t.size = total
	return nil
}

// Thread returns the last n turns of thread (1 to MaxReadTurns), oldest
// first; none when the transcript holds none of it.
func (t *Transcript) Thread(thread string, n int) ([]Turn, error) {
	if n < 1 || n > MaxReadTurns {
		return nil, fmt.Errorf("transcript: %d turns: want 1 to %d", n, MaxReadTurns)
	}
	out := []Turn{}
	if t == nil {
		return out, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.convs[thread] == nil {
		return out, nil
	}
	err := eachLine(t.path, func(b []byte) {
		var turn Turn
		if json.Unmarshal(b, &turn) != nil || turn.Thread != thread {
			return
		}
		if len(out) == n {
			out = append(out[:0], out[1:]...)
		}
		out = append(out, turn)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	slices.SortStableFunc(out, func(a, b Turn) int { return a.At.Compare(b.At) })
	return out, nil
}

// Conversations returns the pointer to every conversation the transcript
// holds, the most recent first: the thread, the time of its last turn and
// how many turns it has — never a word of what was said.
func (t *Transcript) Conversations() []Conversation {
	if t == nil {
		return []Conversation{}
	}
	t.mu.Lock()
	out := make([]Conversation, 0, len(t.convs))
	for _, c := range t.convs {
		out = append(out, *c)
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b Conversation) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(a.Thread, b.Thread)
	})
	return out
}

// Has reports whether the transcript holds any turn of thread.
func (t *Transcript) Has(thread string) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.convs[thread] != nil
}

// eachLine calls fn with every line of the file at path, without its
// newline; a line longer than maxLineBytes is skipped.
func eachLine(path string, fn func([]byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	skipping := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping {
				long = append(long, chunk...)
				if len(long) > maxLineBytes {
					long, skipping = nil, true
				}
			}
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return err
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if skipping {
			skipping = false
		} else if l := trimNewline(line); len(l) > 0 && len(l) <= maxLineBytes {
			fn(l)
		}
		if err != nil { // io.EOF
			return nil
		}
	}
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}

// cut keeps the opening of v: a string of more than MaxTextChars
// characters is kept as its first MaxTextChars and "…"; any other value
// whose JSON text is longer, as the opening of that text.
func cut(v any) any {
	if s, ok := v.(string); ok {
		return opening(s, MaxTextChars)
	}
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(not JSON: %v)", err)
	}
	if utf8.RuneCount(b) > MaxTextChars {
		return opening(string(b), MaxTextChars)
	}
	return v
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
