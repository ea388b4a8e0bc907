package mcptools

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrExited: a server's process exited by itself since it was last
// checked, and no call has started it again.
var ErrExited = errors.New("mcp server exited")

// Check says whether server can take calls now, for a health check: its
// process is up and answers tools/list within within (zero or less means
// [AskWithin]). A server not running yet is started, as a call would
// start it. A process that exited by itself (killed, crashed) is reported
// once, as [ErrExited] with how it ended, rather than started again, so
// that the death is seen; the check after starts it again, as the next
// call would. A server the flow does not declare is [ErrUnknownServer].
// Nothing is logged: the caller reports the outcome.
func (s *Set) Check(ctx context.Context, server string, within time.Duration) error {
	if s.isClosed() {
		return fmt.Errorf("mcptools: checking %q: %w", server, ErrClosed)
	}
	p, ok := s.servers[server]
	if !ok {
		return fmt.Errorf("mcptools: checking %q: %w", server, ErrUnknownServer)
	}
	if within <= 0 {
		within = AskWithin
	}
	live := p.current()
	if live == nil {
		if d := p.takeDeath(); d != nil {
			return fmt.Errorf("mcptools: %w: %q (pid %d): %v; the next call or check starts it again",
				ErrExited, server, d.cmd.Process.Pid, exitOf(d.exit))
		}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, within, ErrNoAnswer)
	defer cancel()
	if _, err := listWithin(ctx, p); err != nil {
		if live != nil {
			live.told.Store(true) // this round says it is gone
		}
		if errors.Is(context.Cause(ctx), ErrNoAnswer) {
			return fmt.Errorf("mcptools: checking %q: %w within %v: %w", server, ErrNoAnswer, within, err)
		}
		return fmt.Errorf("mcptools: checking %q: %w", server, err)
	}
	return nil
}

// takeDeath returns the instance that last exited by itself, once, unless
// a check has said so already.
func (p *process) takeDeath() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.died
	p.died = nil
	if d == nil || d.told.Load() {
		return nil
	}
	return d
}

// exitOf is how a process ended, in words.
func exitOf(err error) string {
	if err == nil {
		return "it exited with status 0"
	}
	return err.Error()
}
