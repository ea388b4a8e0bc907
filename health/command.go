package health

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// MaxOutputBytes is the most of a command's output (standard output and
// error together) a command check keeps, for the detail when it fails.
const MaxOutputBytes = 4 << 10

// waitDelay is how long a killed command's output is waited for: a process
// it started elsewhere that holds its output open is not waited for longer.
const waitDelay = time.Second

// commandCheck runs args in dir, without a shell, and wants exit status 0.
// The command is killed, with every process it started, when its context
// ends.
func commandCheck(args []string, dir string) func(context.Context) error {
	return func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		out := &capped{max: MaxOutputBytes}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.WaitDelay = waitDelay
		killGroup(cmd)
		err := cmd.Run()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("killed: %w", context.Cause(ctx))
		}
		var exit *exec.ExitError
		if o := out.String(); o != "" && errors.As(err, &exit) {
			return fmt.Errorf("%w: %s", err, o)
		}
		return err
	}
}

// capped keeps the first max bytes written to it and drops the rest,
// never refusing a write: the command is not stopped by its own output.
type capped struct {
	max     int
	buf     []byte
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - len(c.buf)
	if len(p) > room {
		c.buf = append(c.buf, p[:room]...)
		c.dropped = true
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// String is the output kept, trimmed, ending in "…" when some was
// dropped.
func (c *capped) String() string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(c.buf), "\uFFFD"))
	if c.dropped {
		s += ellipsis
	}
	return s
}
