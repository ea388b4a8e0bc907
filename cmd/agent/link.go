package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/symphonix/symphonix/internal/cli"
)

// maxTokenFileBytes is the largest --token-file read: a token is a JWT of
// a few hundred bytes.
const maxTokenFileBytes = 64 << 10

// linkOptions are the flags that link an agent to its board.
type linkOptions struct {
	monitor   string
	token     string
	tokenFile string
}

func linkFlags(fs *pflag.FlagSet) *linkOptions {
	o := &linkOptions{}
	fs.StringVar(&o.monitor, "monitor", "", "the board's URL; several boards of one store separated by commas (the agent moves between them)")
	cli.Env(fs, "monitor", "MONITOR_URL")
	fs.StringVar(&o.token, "token", "", "an agent token for this flow's name (shows in ps: prefer --token-file)")
	cli.Env(fs, "token", "MONITOR_TOKEN")
	cli.Secret(fs, "token")
	fs.StringVar(&o.tokenFile, "token-file", "", "a file holding the agent token, readable by its owner alone (chmod 600)")
	return o
}

// sourceRank orders where a value came from, strongest first.
var sourceRank = map[string]int{cli.FromFlag: 0, cli.FromEnv: 1, cli.FromFile: 2, cli.FromDefault: 3}

// resolve is the board's URL and the agent's token. --token and
// --token-file given at the same level (both flags, both in the
// environment, both in the file) is a usage error; otherwise the
// stronger wins, as for any flag.
func (o *linkOptions) resolve(a *app) (url, token string, err error) {
	token = o.token
	if o.tokenFile != "" {
		ts, fs := a.root.Config.Source("token"), a.root.Config.Source("token-file")
		if o.token != "" && sourceRank[ts] == sourceRank[fs] {
			return "", "", cli.Usagef("--token and --token-file: give one of them, not both")
		}
		if o.token == "" || sourceRank[fs] < sourceRank[ts] {
			if token, err = readTokenFile(o.tokenFile); err != nil {
				return "", "", err
			}
		}
	}
	if o.monitor != "" && token == "" {
		return "", "", errNoToken
	}
	return o.monitor, token, nil
}

// errTokenFileOpen: a token file others may read.
var errTokenFileOpen = errors.New("can be read by other users")

// readTokenFile reads the token in path: its owner's alone (on Unix, no
// permission for group or others), at most maxTokenFileBytes, one line;
// the newline at its end and surrounding spaces are not part of it.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("--token-file: %s: %w", path, err)
	}
	defer f.Close()
	if runtime.GOOS != "windows" {
		st, err := f.Stat()
		if err != nil {
			return "", fmt.Errorf("--token-file: %s: %w", path, err)
		}
		if m := st.Mode().Perm(); m&0o077 != 0 {
			return "", fmt.Errorf("--token-file: %s %w (mode %v): run chmod 600 %s", path, errTokenFileOpen, m, path)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("--token-file: %s: %w", path, err)
	}
	if len(b) > maxTokenFileBytes {
		return "", fmt.Errorf("--token-file: %s: larger than %d bytes; it holds one token", path, maxTokenFileBytes)
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", fmt.Errorf("--token-file: %s: empty; it holds the token board token agent printed", path)
	}
	if bytes.ContainsAny([]byte(tok), "\r\n") {
		return "", fmt.Errorf("--token-file: %s: more than one line; it holds one token", path)
	}
	return tok, nil
}
