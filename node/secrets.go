package node

import (
	"path/filepath"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/llm"
	"github.com/symphonix/symphonix/secrets"
)

// namedSecrets is what the journal and the transcript remove from what
// they keep (package secrets, Named): the values cfg.Getenv gives the variables the agent is
// known to be given — the names in the folder's .env.example and .env,
// the flow's requires.env and the model's key and base URL — and the
// values the folder's .env itself gives. It is computed once, when the
// agent starts. It fails when an env file cannot be read or is refused
// (secrets.NamesIn); a flow that cannot be read names nothing here, and
// opening the agent says what is wrong with it.
func namedSecrets(cfg Config) ([]string, error) {
	names, err := secrets.NamesIn(cfg.Dir)
	if err != nil {
		return nil, err
	}
	values, err := secrets.ValuesIn(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if f, err := flow.LoadFile(filepath.Join(cfg.Dir, "flow.json")); err == nil && f.Requires != nil {
		names = append(names, f.Requires.Env...)
	}
	names = append(names, llm.SecretEnv()...)
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return append(secrets.Named(names, getenv), values...), nil
}
