package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/symphonix/symphonix/secrets"
)

// EnvPollInterval is how often a served agent reads its folder's .env
// again, to follow a change to it.
const EnvPollInterval = 2 * time.Second

// withEnv applies the folder's .env to cfg.Getenv (secrets.LoadEnv: the
// process's environment first, .env for what it does not set) and reads
// the agent's named secrets through it, once, into a Set that watchEnv
// grows. A .env that cannot be read gives nothing and is said on out,
// naming the file and the line, never what the line holds (on out); the journal
// and the transcript then say they are not kept, as before.
func (cfg Config) withEnv(name string, out io.Writer) Config {
	env, err := secrets.LoadEnv(cfg.Dir, cfg.Getenv)
	if err != nil {
		fmt.Fprintf(out, "agent %s: env: %v\n", name, err)
	}
	cfg.env, cfg.Getenv = env, env.Getenv
	cfg.follow = &followers{}
	if named, err := namedSecrets(cfg); err == nil {
		cfg.named = secrets.NewSet(named)
		cfg.follow.add(cfg.named)
	}
	return cfg
}

// followers are the Sets that hold the agent's named secrets, grown
// together when .env changes.
type followers struct {
	mu   sync.Mutex
	sets []*secrets.Set
}

// add makes s follow .env; on a nil followers it does nothing.
func (f *followers) add(s *secrets.Set) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets = append(f.sets, s)
}

// grow adds list to every set, and returns how many values were new to
// the first (the named secrets themselves).
func (f *followers) grow(list []string) int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	added := 0
	for i, s := range f.sets {
		if n := s.Add(list); i == 0 {
			added = n
		}
	}
	return added
}

// namedSet is the agent's named secrets as a Set: the one withEnv made,
// which follows .env while the agent is served, or, for a Config it did
// not make, one read now. It fails as namedSecrets fails.
func namedSet(cfg Config) (*secrets.Set, error) {
	named, err := namedSecrets(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.named != nil {
		return cfg.named, nil
	}
	return secrets.NewSet(named), nil
}

// watchEnv reads the folder's .env again every EnvPollInterval until ctx
// ends. When what it gives has changed, the values the agent's named
// secrets now hold are added to cfg.named and to the filters of details
// (detailFilter), and nothing is ever taken out; the change is logged with
// how many variables the file gives, never a value. A file that cannot be
// read or is refused keeps the values last read well, and is logged once,
// naming the file and the line.
func watchEnv(ctx context.Context, cfg Config, log *slog.Logger) {
	if cfg.env == nil {
		return
	}
	tick := time.NewTicker(EnvPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		changed, err := cfg.env.Reload()
		if err != nil {
			log.WarnContext(ctx, "env: not read again", "path", cfg.env.Path(), "err", err)
			continue
		}
		if !changed {
			continue
		}
		added := 0
		if named, err := namedSecrets(cfg); err != nil {
			log.WarnContext(ctx, "env: the named secrets not read again", "err", err)
		} else {
			added = cfg.follow.grow(named)
		}
		log.InfoContext(ctx, "env: read again", "path", cfg.env.Path(), "variables", cfg.env.Len(), "secrets_added", added)
	}
}
