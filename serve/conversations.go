package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/symphonix/symphonix/agent"
	"github.com/symphonix/symphonix/transcript"
	"github.com/symphonix/symphonix/waiting"
)

// ConversationsPath is where the threads a served agent in dir has run are
// remembered: pointers only (a name and a time), never a word of what was
// said.
func ConversationsPath(dir string) string {
	return filepath.Join(dir, ".symphonix", "conversations.json")
}

// ConversationsMax is how many threads the index remembers; past it the
// least recently touched are forgotten. A thread that waits is listed
// from the waiting store whatever the index says.
const ConversationsMax = 10000

// conversationsKeep is how long the index remembers a thread nobody has
// touched: as long as the waiting store keeps a run nobody has answered.
const conversationsKeep = waiting.KeepDays * 24 * time.Hour

// Conversation is the pointer to one conversation the agent holds.
type Conversation struct {
	Thread string `json:"thread"`
	// Updated is when a run on the thread last ended or stopped.
	Updated time.Time `json:"updated"`
	// Waiting is whether a run on the thread waits for an answer.
	Waiting bool `json:"waiting"`
	// People: the addresses of the people in it (paired or verified).
	People []string `json:"people,omitempty"`
	// Turns: how many turns the transcript holds of it.
	Turns int `json:"turns,omitempty"`
}

// conversations is the index of the threads the server has run, and who
// is in them. It is written through on every change, replacing the file
// whole; a write that fails is logged and the index carries on in memory.
// One served agent per folder (the lock) means one writer.
type conversations struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	updated map[string]time.Time
	// who: per thread, the visitor who started it and the people in it.
	who map[string]*threadWho
	// visitors: who each visitor is, once a thread of theirs was paired
	// or verified.
	visitors map[string]Person
}

// indexFile is the index's file. threads is as it always was (thread →
// last update); who and visitors came with the door and are left out when
// empty, so a file written without a board reads as it did before, and an
// older agent reading a newer file finds its threads where it looks.
type indexFile struct {
	Threads  map[string]time.Time  `json:"threads"`
	Who      map[string]*threadWho `json:"who,omitempty"`
	Visitors map[string]Person     `json:"visitors,omitempty"`
}

// threadWho is who is in one thread.
type threadWho struct {
	// Visitor: the visitor who started the thread, as the SHA-256 of
	// their cookie (hex); "" for a thread started before the door, or by
	// the operator.
	Visitor string `json:"visitor,omitempty"`
	// People: the people in it, in the order they came in.
	People []Person `json:"people,omitempty"`
}

// Person is somebody the board said is in a conversation.
type Person struct {
	// Address: their canonical address, as the board said it.
	Address string `json:"address"`
	Name    string `json:"name,omitempty"`
	// How: "paired" (they entered the thread's code on the board) or
	// "verified" (the board checked their address and secret).
	How string    `json:"how"`
	At  time.Time `json:"at"`
}

// How a person came into a thread.
const (
	HowPaired   = "paired"
	HowVerified = "verified"
)

// maxPeople is how many people one thread remembers; past it the one who
// came in first is forgotten.
const maxPeople = 100

// openConversations reads the index at path, forgetting what is older than
// conversationsKeep. A missing file is an empty index; an unreadable one is
// logged and started again.
func openConversations(ctx context.Context, path string, now time.Time, log *slog.Logger) *conversations {
	c := &conversations{path: path, log: log, updated: map[string]time.Time{},
		who: map[string]*threadWho{}, visitors: map[string]Person{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c
	case err != nil:
		log.WarnContext(ctx, "conversations index not read", "path", path, "err", err)
		return c
	}
	var f indexFile
	if err := json.Unmarshal(data, &f); err != nil {
		log.WarnContext(ctx, "conversations index not read; starting a new one", "path", path, "err", err)
		return c
	}
	for t, at := range f.Threads {
		if validThread(t) == nil && now.Sub(at) <= conversationsKeep {
			c.updated[t] = at
		}
	}
	// Who is in a thread is kept as long as the thread; a visitor as long
	// as a thread of theirs.
	started := map[string]bool{}
	for t, w := range f.Who {
		if _, ok := c.updated[t]; ok && w != nil {
			c.who[t] = w
			if w.Visitor != "" {
				started[w.Visitor] = true
			}
		}
	}
	for v, p := range f.Visitors {
		if started[v] && p.Address != "" {
			c.visitors[v] = p
		}
	}
	return c
}

// touch records that a run on thread ended or stopped at now.
func (c *conversations) touch(ctx context.Context, thread string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touchLocked(thread, now)
	c.saveLogged(ctx)
}

// touchLocked is touch with c.mu held, and without saving.
func (c *conversations) touchLocked(thread string, now time.Time) {
	c.updated[thread] = now.UTC()
	for len(c.updated) > ConversationsMax {
		oldest := ""
		for t, at := range c.updated {
			if oldest == "" || at.Before(c.updated[oldest]) {
				oldest = t
			}
		}
		delete(c.updated, oldest)
		delete(c.who, oldest)
	}
}

// saveLogged saves the index, and logs a failure. The caller holds c.mu.
func (c *conversations) saveLogged(ctx context.Context) {
	if err := c.save(); err != nil {
		c.log.WarnContext(ctx, "conversations index not written", "path", c.path, "err", err)
	}
}

// save replaces the file with the index. The caller holds c.mu.
func (c *conversations) save() error {
	f := indexFile{Threads: c.updated}
	if len(c.who) > 0 {
		f.Who = c.who
	}
	if len(c.visitors) > 0 {
		f.Visitors = c.visitors
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".conversations-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.path)
}

// list is every thread the index remembers and every thread that waits in
// the agent's store, most recently updated first. A waiting thread the
// index does not know (one `agent run` left) is dated by when it paused.
func (c *conversations) list(ctx context.Context, a *agent.Agent) ([]Conversation, error) {
	c.mu.Lock()
	byThread := make(map[string]*Conversation, len(c.updated))
	for t, at := range c.updated {
		byThread[t] = &Conversation{Thread: t, Updated: at, People: addresses(c.who[t])}
	}
	c.mu.Unlock()
	waits, err := a.WaitingThreads(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range waits {
		if _, ok := byThread[t]; !ok {
			byThread[t] = &Conversation{Thread: t}
		}
	}
	out := make([]Conversation, 0, len(byThread))
	for _, t := range slices.Sorted(maps.Keys(byThread)) {
		conv := byThread[t]
		p, err := a.Graph.Pending(ctx, t)
		if err != nil {
			return nil, err
		}
		if p != nil {
			conv.Waiting = true
			if p.At.After(conv.Updated) {
				conv.Updated = p.At
			}
		}
		out = append(out, *conv)
	}
	slices.SortStableFunc(out, func(a, b Conversation) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}

// known reports whether the index remembers thread.
func (c *conversations) known(thread string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.updated[thread]
	return ok
}

// withTurns adds to list what the transcript holds: each thread's turn
// count, its last turn when that is later, and the threads only the
// transcript holds; most recently updated first.
func withTurns(list []Conversation, held []transcript.Conversation) []Conversation {
	if len(held) == 0 {
		return list
	}
	at := make(map[string]int, len(list))
	for i, c := range list {
		at[c.Thread] = i
	}
	for _, h := range held {
		i, ok := at[h.Thread]
		if !ok {
			list = append(list, Conversation{Thread: h.Thread})
			i = len(list) - 1
		}
		list[i].Turns = h.Turns
		if h.Last.After(list[i].Updated) {
			list[i].Updated = h.Last
		}
	}
	slices.SortStableFunc(list, func(a, b Conversation) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.Thread, b.Thread)
	})
	return list
}
