package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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
	if named, err := namedSecrets(cfg); err == nil {
		cfg.named = secrets.NewSet(named)
	}
	return cfg
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
// secrets now hold are added to cfg.named (nothing is ever taken out), and
// the change is logged with how many variables the file gives, never a
// value. A file that cannot be read or is refused keeps the values last
// read well, and is logged once, naming the file and the line.
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
		} else if cfg.named != nil {
			added = cfg.named.Add(named)
		}
		log.InfoContext(ctx, "env: read again", "path", cfg.env.Path(), "variables", cfg.env.Len(), "secrets_added", added)
	}
}
