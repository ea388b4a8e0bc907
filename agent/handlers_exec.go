package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/secrets"
)

// HandlerPath is the PATH an executable handler is given when the flow
// does not ask for the agent's own (requires.env naming PATH): a fixed
// one, so that "#!/usr/bin/env python3" finds the system's interpreter
// and nothing of the agent's environment leaks.
const HandlerPath = "/usr/local/bin:/usr/bin:/bin"

// waitDelay is how long a run waits, once the executable has ended or been
// killed, for what it left holding its stdout and stderr.
const waitDelay = time.Second

// execer runs the executables that provide one folder's handlers and
// routers.
type execer struct {
	dir      string // the folder: the executables' working directory
	env      []string
	log      *slog.Logger
	secrets  *secrets.Set
	declared map[string]bool // the channels a handler may write; nil: any
}

// handler is the flow.Handler of the executable p names: the state as a
// JSON object on its stdin, the update as a JSON object on its stdout.
func (x *execer) handler(p Provision) flow.Handler {
	return func(ctx context.Context, s flow.State) (flow.Update, error) {
		out, err := x.run(ctx, p, s)
		if err != nil {
			return nil, err
		}
		return updateOf(p, out, x.declared)
	}
}

// router is the flow.Router of the executable p names: the state on its
// stdin, a JSON string naming the route on its stdout.
func (x *execer) router(p Provision) flow.Router {
	return func(ctx context.Context, s flow.State) (string, error) {
		out, err := x.run(ctx, p, s)
		if err != nil {
			return "", err
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			return "", fmt.Errorf("%s: stdout is not JSON: want a JSON string naming a route, like \"done\"", label(p))
		}
		route, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s: printed %s, want a JSON string naming a route, like \"done\"", label(p), flow.KindOf(v))
		}
		return route, nil
	}
}

// updateOf reads out, what p printed or returned, as an update: a JSON
// object whose every key is a channel the flow declares.
func updateOf(p Provision, out []byte, declared map[string]bool) (flow.Update, error) {
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("%s: stdout is not JSON: want a JSON object of channel to value", label(p))
	}
	return updateOfValue(p, v, declared)
}

func updateOfValue(p Provision, v any, declared map[string]bool) (flow.Update, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: gave %s, want a JSON object of channel to value", label(p), flow.KindOf(v))
	}
	if declared != nil {
		for ch := range m {
			if !declared[ch] {
				return nil, fmt.Errorf("%s: wrote channel %q, which the flow does not declare", label(p), ch)
			}
		}
	}
	return flow.Update(m), nil
}

// label names p in an error: its kind, name and what provides it.
func label(p Provision) string {
	if p.By == ByTool {
		return fmt.Sprintf("%s %q (MCP tool %s)", p.Kind, p.Name, p.Tool)
	}
	return fmt.Sprintf("%s %q (%s)", p.Kind, p.Name, p.Path)
}

// run runs p's executable once with s on its stdin and returns its stdout.
// The executable is checked again first (it may have changed since the
// agent started); it runs in the folder, in its own process group, with
// x.env only, within p.Timeout. The group is killed at the time limit, at
// MaxHandlerStdout, when ctx ends, and once the executable has exited
// (nothing it started outlives it). Its stderr goes to the log.
func (x *execer) run(ctx context.Context, p Provision, s flow.State) ([]byte, error) {
	if err := checkExecutable(x.dir, filepath.FromSlash(p.Path)); err != nil {
		return nil, fmt.Errorf("%s: %w", label(p), err)
	}
	in, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%s: the state is not JSON: %w", label(p), err)
	}
	runCtx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, filepath.Join(x.dir, filepath.FromSlash(p.Path)))
	cmd.Dir = x.dir
	cmd.Env = x.env
	cmd.Stdin = bytes.NewReader(in)
	stdout := &bounded{max: MaxHandlerStdout, over: cancel}
	stderr := &bounded{max: MaxHandlerStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	ownGroup(cmd)
	began := time.Now()
	err = cmd.Run()
	killGroup(cmd)
	x.logStderr(ctx, p, stderr, err)
	switch {
	case stdout.overflow:
		return nil, fmt.Errorf("%s: printed more than %d bytes on stdout: killed", label(p), MaxHandlerStdout)
	case err == nil:
		// It finished, even if the time limit passed as it did.
		x.log.DebugContext(ctx, "handler ran", "kind", p.Kind, "name", p.Name, "path", p.Path, "duration", time.Since(began))
		return stdout.buf.Bytes(), nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", label(p), ctx.Err())
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: did not finish within %s: killed", label(p), p.Timeout)
	default:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return nil, fmt.Errorf("%s: exited with status %d (its stderr is in the agent's log)", label(p), ee.ExitCode())
		}
		if errors.Is(err, exec.ErrWaitDelay) {
			return nil, fmt.Errorf("%s: exited, but what it started held its output open: killed", label(p))
		}
		return nil, fmt.Errorf("%s: %v", label(p), err)
	}
}

// logStderr puts what p printed on stderr in the log, the secrets the
// agent knows removed; nothing of it reaches a client.
func (x *execer) logStderr(ctx context.Context, p Provision, stderr *bounded, runErr error) {
	if stderr.buf.Len() == 0 && stderr.dropped == 0 {
		return
	}
	level := slog.LevelInfo
	if runErr != nil {
		level = slog.LevelWarn
	}
	x.log.Log(ctx, level, "handler stderr", "kind", p.Kind, "name", p.Name, "path", p.Path,
		"stderr", x.secrets.Without(stderr.buf.String()), "dropped_bytes", stderr.dropped)
}

// bounded keeps the first max bytes written to it. Past them it keeps
// nothing more and counts what it dropped; it calls over, when set, the
// first time.
type bounded struct {
	buf      bytes.Buffer
	max      int
	over     func()
	overflow bool
	dropped  int64
}

func (b *bounded) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	b.buf.Write(p[:max(room, 0)])
	b.dropped += int64(len(p) - max(room, 0))
	if !b.overflow {
		b.overflow = true
		if b.over != nil {
			b.over()
		}
	}
	return len(p), nil
}
