package mcptools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// grace is how long a server has to exit after its stdin is closed, and
// again after SIGTERM, before it is killed.
const grace = 5 * time.Second

// inherited are the only variables a server gets from the agent's
// environment, besides the ones its declaration sets.
var inherited = []string{"PATH", "HOME"}

// process is one declared server and, once a call has needed it, its running
// child process.
type process struct {
	name   string
	server Server
	dir    string
	client *mcp.Client
	log    *slog.Logger
	stderr io.Writer

	// starting is held (a one-slot semaphore, so a waiter can give up with
	// its ctx) while a process is being started or the server closed.
	starting chan struct{}

	mu      sync.Mutex
	closed  bool
	live    *instance              // the one calls use; nil before the first and after it ended
	running map[*instance]struct{} // every instance not yet exited, live or abandoned
	// died is the last instance that exited by itself, until a health
	// check has said so (Set.Check).
	died   *instance
	exited sync.WaitGroup // one per watch goroutine
}

// instance is one run of a server's process.
type instance struct {
	session  *mcp.ClientSession
	cmd      *exec.Cmd
	done     chan struct{} // closed once the process has exited and been reaped
	broken   atomic.Bool   // a call found its connection closed
	stopping atomic.Bool   // closed by us, not dead by itself
	exit     error         // how it ended, once done is closed
	told     atomic.Bool   // a health check has said it is gone
}

func newProcess(name string, srv Server, dir string, client *mcp.Client, log *slog.Logger, stderr io.Writer) *process {
	return &process{
		name:     name,
		server:   srv,
		dir:      dir,
		client:   client,
		log:      log,
		stderr:   stderr,
		starting: make(chan struct{}, 1),
		running:  make(map[*instance]struct{}),
	}
}

func (in *instance) usable() bool {
	if in.broken.Load() {
		return false
	}
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// call calls tool on the server.
func (p *process) call(ctx context.Context, tool string, args map[string]any) (any, error) {
	in, err := p.session(ctx)
	if err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: tool}
	if args != nil {
		params.Arguments = args
	}
	res, err := in.session.CallTool(ctx, params)
	if err != nil {
		p.failed(in, err)
		return nil, fmt.Errorf("mcptools: calling %s.%s: %w", p.name, tool, err)
	}
	if res.IsError {
		return nil, &ToolError{Name: p.name + "." + tool, Text: errorText(res)}
	}
	return valueOf(res), nil
}

// listTools asks the server for every tool it has, sorted by name.
func (p *process) listTools(ctx context.Context) ([]Tool, error) {
	in, err := p.session(ctx)
	if err != nil {
		return nil, err
	}
	var tools []Tool
	for t, err := range in.session.Tools(ctx, nil) {
		if err != nil {
			p.failed(in, err)
			return nil, fmt.Errorf("mcptools: listing tools of %q: %w", p.name, err)
		}
		tools = append(tools, Tool{Name: t.Name, Description: t.Description})
	}
	slices.SortFunc(tools, func(a, b Tool) int { return cmp.Compare(a.Name, b.Name) })
	return tools, nil
}

// failed notes that a call on in ended in err. A lost connection means the
// process is gone or going: the next call starts another rather than wait
// for this one's watcher to notice.
func (p *process) failed(in *instance, err error) {
	if !connectionLost(err) {
		return
	}
	in.broken.Store(true)
	p.mu.Lock()
	if p.live == in {
		p.live = nil
	}
	p.mu.Unlock()
}

// connectionLost reports whether err says the server's end of the pipe is
// gone: the call in flight when the process died sees the end of its
// output, the calls after it a closed connection or a broken pipe. A
// server's error answer or a call's own deadline leave the session usable.
func connectionLost(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrClosed)
}

// current returns the live instance when it can take calls.
func (p *process) current() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.live == nil || !p.live.usable() {
		return nil
	}
	return p.live
}

// session returns the live instance, starting one if there is none. Calls
// that arrive while a start is under way wait for it, or for their ctx.
// Each call makes at most one attempt to start: a server that cannot start
// fails the call that needed it, and the next call tries again.
func (p *process) session(ctx context.Context) (*instance, error) {
	if in := p.current(); in != nil {
		return in, nil
	}
	select {
	case p.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("mcptools: starting server %q: %w", p.name, ctx.Err())
	}
	defer func() { <-p.starting }()
	if in := p.current(); in != nil {
		return in, nil // started by the call we waited for
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("mcptools: server %q: %w", p.name, ErrClosed)
	}
	in, err := p.start(ctx)
	if err != nil {
		p.log.WarnContext(ctx, "mcp server did not start", "server", p.name, "err", err)
		return nil, err
	}
	p.mu.Lock()
	p.live = in
	p.died = nil // started again: a death before is past
	p.mu.Unlock()
	return in, nil
}

// start runs the server's command and opens an MCP session on its stdio.
// The process does not belong to ctx: it outlives the call that started it,
// and ends when the Set is closed or by itself.
func (p *process) start(ctx context.Context) (*instance, error) {
	cmd := exec.Command(p.server.Command, p.server.Args...)
	cmd.Dir = p.dir
	cmd.Env = environ(os.Environ(), p.server.Env)
	cmd.Stderr = p.stderr
	t := &mcp.CommandTransport{Command: cmd, TerminateDuration: grace}
	sess, err := p.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("mcptools: starting server %q: %w", p.name, err)
	}
	in := &instance{session: sess, cmd: cmd, done: make(chan struct{})}
	p.mu.Lock()
	p.running[in] = struct{}{}
	p.mu.Unlock()
	p.log.InfoContext(ctx, "mcp server started", "server", p.name, "pid", cmd.Process.Pid)
	p.exited.Add(1)
	go p.watch(in)
	return in, nil
}

// watch waits for in's process to end, by itself or closed by us, and
// forgets it. The session has reaped the process by the time Wait returns.
func (p *process) watch(in *instance) {
	defer p.exited.Done()
	err := in.session.Wait()
	in.exit = err
	close(in.done)
	p.mu.Lock()
	delete(p.running, in)
	if p.live == in {
		p.live = nil
	}
	if !in.stopping.Load() {
		p.died = in
	}
	p.mu.Unlock()
	pid := in.cmd.Process.Pid
	if in.stopping.Load() {
		p.log.Info("mcp server stopped", "server", p.name, "pid", pid, "err", err)
		return
	}
	p.log.Warn("mcp server exited", "server", p.name, "pid", pid, "err", err)
}

// close ends every process of this server and refuses new starts. It returns
// how a process ended when it did not end cleanly.
func (p *process) close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.starting <- struct{}{} // a start under way finishes first
	defer func() { <-p.starting }()
	p.mu.Lock()
	ins := make([]*instance, 0, len(p.running))
	for in := range p.running {
		ins = append(ins, in)
	}
	p.mu.Unlock()
	var errs []error
	for _, in := range ins {
		alive := in.usable() // a process that died by itself was logged as such
		if alive {
			in.stopping.Store(true)
		}
		if err := in.session.Close(); err != nil && alive {
			errs = append(errs, fmt.Errorf("mcptools: server %q (pid %d): %w", p.name, in.cmd.Process.Pid, err))
		}
	}
	p.exited.Wait()
	return errors.Join(errs...)
}

// environ is the environment of a server: PATH and HOME from parent (in
// os.Environ form), and then the declared variables, which win.
func environ(parent []string, declared map[string]string) []string {
	env := make([]string, 0, len(inherited)+len(declared))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := declared[k]; slices.Contains(inherited, k) && !over {
			env = append(env, kv)
		}
	}
	for k, v := range declared {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}
