package subscription

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
)

// ErrNoBoard: [Subscription.Set] was given a board's word, and no board is
// configured.
var ErrNoBoard = errors.New("no board is configured")

// Config describes one agent's subscription to [New].
type Config struct {
	// Declared is the flow's declaration: for each MCP server (by name), the
	// tools the flow may call there. It is the most that can ever be switched
	// on. A server's name may not be empty or hold a dot; a tool's may not be
	// empty. Nil declares nothing.
	Declared map[string][]string
	// Board: a board is configured, and it is the switch. False means the
	// declaration is switched on and nothing else is ever asked.
	Board bool
	// Memory is the file the board's last word is kept in, so that it
	// outlives a restart while the board is unreachable ([MemoryPath] is the
	// usual place). Empty keeps it in this process only: after a restart the
	// agent calls nothing until the board speaks. Unused without a board.
	Memory string
}

// Subscription is which of its declared tools an agent is switched on for,
// and where that came from. It is safe for concurrent use: the board's word
// ([Subscription.Set]) applies to the next [Subscription.MayCallTool].
type Subscription struct {
	declared []string            // sorted; read-only after New
	isDecl   map[string]struct{} // the same, as a set
	board    bool
	memory   string

	// writing is held across a change and the write of its memory, so the
	// file ends up holding the last word given, never an earlier one.
	writing sync.Mutex

	mu     sync.Mutex
	on     map[string]struct{}
	source Source
}

// New returns the subscription of an agent configured as cfg. Without a
// board, the declaration is switched on ([NoBoard]). With one, nothing is
// switched on ([NobodyDecided]) until the board speaks
// ([Subscription.Set]) or its last word is read back from memory
// ([Subscription.Recall]). New reads nothing from disk.
func New(cfg Config) (*Subscription, error) {
	s := &Subscription{
		isDecl: make(map[string]struct{}),
		board:  cfg.Board,
		memory: cfg.Memory,
		on:     make(map[string]struct{}),
		source: NobodyDecided,
	}
	for server, tools := range cfg.Declared {
		switch {
		case server == "":
			return nil, errors.New("subscription: a server has an empty name")
		case strings.Contains(server, "."):
			return nil, fmt.Errorf("subscription: server %q: a server's name may not contain a dot", server)
		}
		for _, tool := range tools {
			if tool == "" {
				return nil, fmt.Errorf("subscription: server %q: a tool has an empty name", server)
			}
			name := server + "." + tool
			if _, dup := s.isDecl[name]; !dup {
				s.isDecl[name] = struct{}{}
				s.declared = append(s.declared, name)
			}
		}
	}
	slices.Sort(s.declared)
	if !cfg.Board {
		s.source = NoBoard
		for _, name := range s.declared {
			s.on[name] = struct{}{}
		}
	}
	return s, nil
}

// Declared returns every "<server>.<tool>" the flow declares, sorted: the
// most that can be switched on.
func (s *Subscription) Declared() []string {
	return slices.Clone(s.declared)
}

// Board reports whether a board is configured.
func (s *Subscription) Board() bool { return s.board }

// Set applies the board's word: on is every tool it switches on, and every
// other declared tool is off. It applies at once, to the next call.
//
// A name the flow does not declare is dropped, because the declaration is the
// upper bound, and returned in undeclared (sorted) so the caller can report
// it. The word is kept in memory (the Config's file) for when the board is
// unreachable; err is the failure to keep it, and the word applies even then.
// Without a board, Set changes nothing and returns [ErrNoBoard].
func (s *Subscription) Set(on []string) (undeclared []string, err error) {
	if !s.board {
		return nil, fmt.Errorf("subscription: the board's word: %w", ErrNoBoard)
	}
	kept, undeclared := s.within(on)
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	s.on = kept
	s.source = FromBoard
	s.mu.Unlock()
	if s.memory == "" {
		return undeclared, nil
	}
	if err := writeMemory(s.memory, sortedNames(kept)); err != nil {
		return undeclared, err
	}
	return undeclared, nil
}

// NeverSpoke applies a board saying it has never decided for this agent
// (its store was replaced, say): nothing is switched on, [NobodyDecided],
// and the word remembered from before is forgotten, on disk too, so a
// restart cannot bring it back. err is the failure to forget it on disk;
// nothing is on even then. Without a board it changes nothing and returns
// [ErrNoBoard].
func (s *Subscription) NeverSpoke() error {
	if !s.board {
		return fmt.Errorf("subscription: the board's word: %w", ErrNoBoard)
	}
	s.writing.Lock()
	defer s.writing.Unlock()
	s.mu.Lock()
	s.on = map[string]struct{}{}
	s.source = NobodyDecided
	s.mu.Unlock()
	if s.memory == "" {
		return nil
	}
	if err := os.Remove(s.memory); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("subscription: forget the board's last word: %w", err)
	}
	return nil
}

// Unreachable notes that the board can no longer be reached (its link went
// down). What it said last stays switched on, now named [FromMemory]; a
// board that never spoke still leaves nothing on. The board's next word
// ([Subscription.Set]) is [FromBoard] again.
func (s *Subscription) Unreachable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.source == FromBoard {
		s.source = FromMemory
	}
}

// Recall reads the board's last word back from memory, for an agent that
// has just started and not yet heard from its board: it is then switched on
// for what the board last said, within today's declaration, [FromMemory].
//
// No memory file, or no memory configured, is an agent that never heard from
// the board: nothing changes and Recall returns nil. A file that cannot be
// read or is not a word the board said is an error wrapping
// [ErrMemoryUnreadable], and nothing changes either: an unreadable memory is
// a board that never spoke, never everything. Recall changes nothing once the
// board has spoken, and nothing without a board.
func (s *Subscription) Recall() error {
	if !s.board || s.memory == "" {
		return nil
	}
	s.writing.Lock()
	defer s.writing.Unlock()
	names, found, err := readMemory(s.memory)
	if err != nil || !found {
		return err
	}
	kept, _ := s.within(names) // the declaration may have shrunk since
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.source != NobodyDecided {
		return nil
	}
	s.on = kept
	s.source = FromMemory
	return nil
}

// MayCallTool answers whether the tool called name ("<server>.<tool>") may
// be called now, where that answer came from, and when it may not, a
// refusal a model can act on.
func (s *Subscription) MayCallTool(name string) Answer {
	s.mu.Lock()
	_, on := s.on[name]
	src := s.source
	var now []string
	if !on {
		now = sortedNames(s.on)
	}
	s.mu.Unlock()
	if on {
		return Answer{Tool: name, Allowed: true, Source: src}
	}
	why := NotSwitchedOn
	if _, ok := s.isDecl[name]; !ok {
		why = Undeclared
	}
	return Answer{Tool: name, Source: src, Reason: why, Refusal: refusal(name, why, src, now)}
}

// On returns what is switched on now, sorted, and where that came from.
func (s *Subscription) On() ([]string, Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedNames(s.on), s.source
}

// NothingSwitchedOn reports whether no tool may be called now, and where
// that came from: a board that never spoke ([NobodyDecided]), a board that
// switched everything off ([FromBoard], [FromMemory]), or a flow that
// declares no tool ([NoBoard]).
func (s *Subscription) NothingSwitchedOn() (bool, Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.on) == 0, s.source
}

// within splits names into those the flow declares, as a set, and the
// others, sorted and without repeats.
func (s *Subscription) within(names []string) (kept map[string]struct{}, undeclared []string) {
	kept = make(map[string]struct{}, len(names))
	for _, name := range names {
		if _, ok := s.isDecl[name]; ok {
			kept[name] = struct{}{}
		} else if !slices.Contains(undeclared, name) {
			undeclared = append(undeclared, name)
		}
	}
	slices.Sort(undeclared)
	return kept, undeclared
}

func sortedNames(set map[string]struct{}) []string {
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
