package mcptools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// AskWithin is how long [Set.AskForTools] waits for a server when it is
// given no time limit: long enough for a server to start, short enough that
// an agent reporting what its servers offer is not held up by one that hangs.
const AskWithin = 10 * time.Second

// ErrNoAnswer: a server did not say what tools it has within the time
// limit. Silence is an answer of its own: nothing is assumed about the
// server.
var ErrNoAnswer = errors.New("mcp server did not list its tools in time")

// Servers returns the name of every server the flow declares, sorted.
func (s *Set) Servers() []string {
	names := make([]string, 0, len(s.servers))
	for name := range s.servers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// AskForTools asks the server itself what tools it has (tools/list),
// starting it if it is not running, and returns their names, sorted, as the
// server gives them (without the "<server>." prefix). The server is the only
// authority on what it exposes: a board holds no credential for any server
// and cannot ask one, and a flow's declaration says what the flow may call,
// not what is there.
//
// The answer must come within within (zero or less means [AskWithin]),
// starting the server included, whatever the Set's CallTimeout; past it the
// question is withdrawn and the error wraps [ErrNoAnswer]. A server the flow
// does not declare is [ErrUnknownServer], and nothing is started.
func (s *Set) AskForTools(ctx context.Context, server string, within time.Duration) ([]string, error) {
	if s.isClosed() {
		return nil, fmt.Errorf("mcptools: asking %q for its tools: %w", server, ErrClosed)
	}
	p, ok := s.servers[server]
	if !ok {
		return nil, fmt.Errorf("mcptools: asking %q for its tools: %w", server, ErrUnknownServer)
	}
	if within <= 0 {
		within = AskWithin
	}
	ctx, cancel := context.WithTimeoutCause(ctx, within, ErrNoAnswer)
	defer cancel()
	began := time.Now()
	tools, err := listWithin(ctx, p)
	took := time.Since(began)
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrNoAnswer) {
			err = fmt.Errorf("mcptools: asking %q for its tools: %w within %v: %w", server, ErrNoAnswer, within, err)
		}
		s.log.WarnContext(ctx, "mcp server asked for its tools", "server", server, "duration", took, "err", err)
		return nil, err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	s.log.DebugContext(ctx, "mcp server asked for its tools", "server", server, "duration", took, "tools", len(names))
	return names, nil // listTools sorts
}

// listWithin lists p's tools, and returns when ctx ends even if the listing
// has not: a server whose start is abandoned is signalled only after a grace
// (see [Set.Close]), and the answer is due at the limit, not after it. The
// listing then ends by itself within that grace, and [Set.Close] waits for
// it, as it waits for any start under way.
func listWithin(ctx context.Context, p *process) ([]Tool, error) {
	type answer struct {
		tools []Tool
		err   error
	}
	done := make(chan answer, 1) // never blocks the listing
	go func() {
		tools, err := p.listTools(ctx)
		done <- answer{tools, err}
	}()
	select {
	case a := <-done:
		return a.tools, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("mcptools: listing tools of %q: %w", p.name, ctx.Err())
	}
}

// Mismatch is how a flow's declaration of a server and the server's own list
// of tools differ. Declared tools the server does not serve will fail when
// called; tools it serves and the flow does not declare are only there, and
// this flow cannot call them.
type Mismatch struct {
	Server            string
	DeclaredNotServed []string // sorted
	ServedNotDeclared []string // sorted
}

// Compare compares the tools declared for server with the tools it serves
// (names without the "<server>." prefix).
func Compare(server string, declared, served []string) Mismatch {
	m := Mismatch{Server: server}
	for _, name := range declared {
		if !slices.Contains(served, name) && !slices.Contains(m.DeclaredNotServed, name) {
			m.DeclaredNotServed = append(m.DeclaredNotServed, name)
		}
	}
	for _, name := range served {
		if !slices.Contains(declared, name) && !slices.Contains(m.ServedNotDeclared, name) {
			m.ServedNotDeclared = append(m.ServedNotDeclared, name)
		}
	}
	slices.Sort(m.DeclaredNotServed)
	slices.Sort(m.ServedNotDeclared)
	return m
}

// None reports whether the declaration and the server agree.
func (m Mismatch) None() bool {
	return len(m.DeclaredNotServed) == 0 && len(m.ServedNotDeclared) == 0
}

// String says the mismatch in one line, for a report or a log.
func (m Mismatch) String() string {
	if m.None() {
		return fmt.Sprintf("mcp server %q serves what the flow declares", m.Server)
	}
	var parts []string
	if len(m.DeclaredNotServed) > 0 {
		parts = append(parts, "declared but not served: "+strings.Join(m.DeclaredNotServed, ", "))
	}
	if len(m.ServedNotDeclared) > 0 {
		parts = append(parts, "served but not declared: "+strings.Join(m.ServedNotDeclared, ", "))
	}
	return fmt.Sprintf("mcp server %q: %s", m.Server, strings.Join(parts, "; "))
}

// Mismatch asks server for its tools ([Set.AskForTools], within the same
// limit) and compares them with what the flow declares for it.
func (s *Set) Mismatch(ctx context.Context, server string, within time.Duration) (Mismatch, error) {
	served, err := s.AskForTools(ctx, server, within)
	if err != nil {
		return Mismatch{Server: server}, err
	}
	p := s.servers[server] // AskForTools found it
	declared := make([]string, len(p.server.Tools))
	for i, t := range p.server.Tools {
		declared[i] = t.Name
	}
	return Compare(server, declared, served), nil
}
