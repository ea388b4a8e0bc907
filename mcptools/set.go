package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config configures [Open].
type Config struct {
	// Logger receives server starts and exits, and one line per call: its
	// name, how long it took and its error. Never arguments or results.
	// Nil discards logs.
	Logger *slog.Logger
	// CallTimeout bounds one call, including starting the server when the
	// call is the one that needs it started. Zero means 60 s.
	CallTimeout time.Duration
	// Stderr receives what the servers write to their standard error, as it
	// is and never logged. Several servers write to it at once, so it must be
	// safe for concurrent use. Nil discards it.
	Stderr io.Writer
}

const defaultCallTimeout = 60 * time.Second

// Set is the MCP servers one flow declares, and their processes once started.
// It is safe for concurrent use; [Set.Call] is the function the flow engine
// is given to call tools with.
type Set struct {
	log      *slog.Logger
	timeout  time.Duration
	servers  map[string]*process // read-only after Open
	declared []string

	mu     sync.Mutex
	closed bool
}

// Open checks the declaration of servers (requires.mcp) and returns a Set
// that will call their tools. It starts nothing: a server's process starts
// on the first call to one of its tools, because an agent that never calls a
// tool (a conversation that never gets to the refund) should not spawn a
// process, hold its resources, or fail to start because of a server it did
// not need.
//
// Processes run in dir, the flow folder ("" is the current directory), so a
// relative command or path in args or env means what it means there.
// A server inherits only PATH and HOME from the agent, plus its declared env
// (which wins over both): the agent's environment holds its own secrets (a
// model's key, the board's token), and a server gets what the flow says it
// needs and nothing more.
func Open(ctx context.Context, dir string, servers map[string]Server, cfg Config) (*Set, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mcptools: flow folder: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("mcptools: flow folder: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("mcptools: flow folder %s is not a directory", abs)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	timeout := cfg.CallTimeout
	if timeout <= 0 {
		timeout = defaultCallTimeout
	}
	// The SDK is given no logger: it may log the messages it carries.
	client := mcp.NewClient(&mcp.Implementation{Name: "symphonix-agent", Version: "v1"}, nil)
	s := &Set{log: log, timeout: timeout, servers: make(map[string]*process, len(servers))}
	for name, srv := range servers {
		if err := srv.check(name); err != nil {
			return nil, err
		}
		s.servers[name] = newProcess(name, srv, abs, client, log, cfg.Stderr)
		for _, t := range srv.Tools {
			s.declared = append(s.declared, name+"."+t.Name)
		}
	}
	slices.Sort(s.declared)
	log.DebugContext(ctx, "mcp servers declared", "servers", len(servers), "tools", len(s.declared), "dir", abs)
	return s, nil
}

// Declared returns every "<server>.<tool>" the flow declares, sorted: the
// most this Set will ever call.
func (s *Set) Declared() []string {
	return slices.Clone(s.declared)
}

// Call calls the tool named "<server>.<tool>" with args, starting the server
// if it is not running, and returns its result as a plain Go value: the
// structured content when the tool gave one; else a single text block,
// parsed when it is JSON and as a string when not; else a list of its
// blocks; nil when it returned nothing.
//
// It refuses, before anything starts, a name without a dot
// ([ErrNoServerName]), a server the flow does not declare
// ([ErrUnknownServer]) and a tool the flow does not declare for that server
// ([ErrUndeclared]). A tool that answers with an error result is a
// [*ToolError] carrying what it said.
//
// A call that fails because the server's process died returns that failure;
// the next call starts the server again. Nothing is retried: a tool call may
// have happened before the process died, and calling a refund twice is worse
// than reporting an error.
func (s *Set) Call(ctx context.Context, name string, args map[string]any) (any, error) {
	p, tool, err := s.resolve(name)
	if err != nil {
		s.log.WarnContext(ctx, "mcp tool call refused", "name", name, "err", err)
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	began := time.Now()
	v, err := p.call(ctx, tool, args)
	took := time.Since(began)
	var te *ToolError
	switch {
	case errors.As(err, &te):
		// What the tool said stays out of the log: it may name a person.
		s.log.InfoContext(ctx, "mcp tool call", "name", name, "duration", took, "tool_error", true)
	case err != nil:
		s.log.WarnContext(ctx, "mcp tool call", "name", name, "duration", took, "err", err)
	default:
		s.log.InfoContext(ctx, "mcp tool call", "name", name, "duration", took)
	}
	return v, err
}

// resolve splits name and applies the declaration to it.
func (s *Set) resolve(name string) (*process, string, error) {
	if s.isClosed() {
		return nil, "", fmt.Errorf("mcptools: calling %q: %w", name, ErrClosed)
	}
	server, tool, ok := strings.Cut(name, ".")
	if !ok || server == "" || tool == "" {
		return nil, "", fmt.Errorf("mcptools: %q: %w", name, ErrNoServerName)
	}
	p, ok := s.servers[server]
	if !ok {
		return nil, "", fmt.Errorf("mcptools: %q: server %q: %w", name, server, ErrUnknownServer)
	}
	if !p.server.declares(tool) {
		return nil, "", fmt.Errorf("mcptools: %q: tool %q of server %q: %w", name, tool, server, ErrUndeclared)
	}
	return p, tool, nil
}

// ListTools asks the server what tools it has, starting it if it is not
// running, and returns them sorted by name. This is the server's own answer,
// whatever the flow declares: the only authority on what a server exposes is
// the server. (The board cannot ask: it holds no credential for any server.)
func (s *Set) ListTools(ctx context.Context, server string) ([]Tool, error) {
	if s.isClosed() {
		return nil, fmt.Errorf("mcptools: listing tools of %q: %w", server, ErrClosed)
	}
	p, ok := s.servers[server]
	if !ok {
		return nil, fmt.Errorf("mcptools: server %q: %w", server, ErrUnknownServer)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tools, err := p.listTools(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "mcp list tools", "server", server, "err", err)
		return nil, err
	}
	return tools, nil
}

// Close ends every server process: it closes each session (the server's
// stdin), waits for the process to exit, and signals it, then kills it, if it
// does not within a grace. Calls after Close return [ErrClosed]. It returns
// how the processes ended when one did not end cleanly.
func (s *Set) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	errs := make([]error, 0, len(s.servers))
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, p := range s.servers {
		wg.Go(func() {
			if err := p.close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Set) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
