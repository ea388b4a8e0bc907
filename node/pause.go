package node

import (
	"errors"
	"fmt"
	"os/user"
	"strings"
	"time"

	"github.com/symphonix/symphonix/agentlink"
	"github.com/symphonix/symphonix/lock"
	"github.com/symphonix/symphonix/pause"
)

// ErrPaused: Run was asked for a new run of an agent that is paused. A
// run already waiting on the thread may still be answered; `agent resume`
// (Resume), or the board, lets new runs start again.
var ErrPaused = errors.New("the agent is paused")

// Pause is `agent pause --reason R DIR`: the agent in cfg.Dir stops taking
// new work, from this machine (origin local), by the user running it. It
// writes the folder's pause file (pause.Path), whether or not the agent is
// running: a served agent notices within a second, says so, and tells its
// board; one started later starts paused. It says what it did on Stdout.
// cfg.Reason is required, at most pause.MaxReason bytes.
func Pause(cfg Config) error {
	return setPause(cfg, true)
}

// Resume is `agent resume DIR`: the agent in cfg.Dir takes new work again,
// as Pause says, with cfg.Reason (optional) kept as why.
func Resume(cfg Config) error {
	return setPause(cfg, false)
}

func setPause(cfg Config, paused bool) error {
	if cfg.Dir == "" {
		return errors.New("node: Config.Dir is required")
	}
	reason := strings.TrimSpace(cfg.Reason)
	switch {
	case paused && reason == "":
		return errors.New("--reason: required: say why the agent is paused, for whoever finds it so")
	case len(reason) > pause.MaxReason:
		return fmt.Errorf("--reason: %d bytes: at most %d", len(reason), pause.MaxReason)
	}
	id, err := agentlink.ReadIdentity(cfg.Dir)
	if err != nil {
		return err
	}
	s := pause.State{Paused: paused, Reason: reason, By: localUser(), Time: time.Now().UTC().Truncate(time.Second), Origin: pause.Local}
	if err := pause.Write(cfg.Dir, s); err != nil {
		return err
	}
	out := cfg.Stdout
	if out == nil {
		return nil
	}
	fmt.Fprintf(out, "agent %s: %s\n", id.Name, s.Say())
	if h, held, err := lock.HeldBy(cfg.Dir); err == nil && held && h.URL != "" {
		fmt.Fprintf(out, "agent %s: served at %s (pid %d): it takes this up within a second and tells its board\n", id.Name, h.URL, h.PID)
	}
	return nil
}

// localUser is who runs this process, for a pause decided on this
// machine: the user's login name, or their uid when it has none.
func localUser() string {
	u, err := user.Current()
	switch {
	case err != nil:
		return "unknown"
	case u.Username != "":
		return agentlink.Clip(u.Username, pause.MaxBy)
	}
	return "uid " + u.Uid
}
