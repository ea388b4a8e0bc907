package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/library"
)

// maxCAFileBytes is the most a --ca-file may hold.
const maxCAFileBytes = 1 << 20

// libraryOptions are the flags of the commands that install from a
// board's library.
type libraryOptions struct {
	board     string
	tokenFile string
	caFile    string
	digest    string
	out       cli.Output
}

func libraryFlags(fs *pflag.FlagSet) *libraryOptions {
	o := &libraryOptions{}
	fs.StringVar(&o.board, "board", "", "the board whose library to install from: http://HOST:PORT or https://HOST (required)")
	fs.StringVar(&o.tokenFile, "token-file", "", "a file holding an operator or agent token, readable by its owner alone (chmod 600); without it, SYMPHONIX_TOKEN")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM certificates to trust for an https board, besides the system's roots")
	fs.StringVar(&o.digest, "digest", "", "install only the package with this digest (sha256:…), a yanked one too")
	o.out.AddFlag(fs)
	return o
}

// installedJSON is what install and instantiate print with -o json.
type installedJSON struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Kind    string   `json:"kind"`
	Digest  string   `json:"digest"`
	Folder  string   `json:"folder"`
	Signers []string `json:"signers"`
}

// newInstallCmd is `agent install NAME[@VERSION] DIR`.
func newInstallCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "install NAME[@VERSION] DIR",
		Short: "Install an agent package from a board's library into a new folder, after checking it; nothing is run",
		Long: "Install downloads the agent package NAME (scope/name) from the board's library — VERSION, or the newest\n" +
			"not yanked — and checks it on this machine as the board did: a safe archive, every file as its manifest\n" +
			"says, the manifest's digest the board's (and --digest's), signed by enough of its scope's trusted keys, and\n" +
			"the name and version asked for. Only then is it unpacked into DIR, which must not exist. Nothing in it is run.",
		Args: cli.Args("NAME[@VERSION]", "DIR"),
	}
	o := libraryFlags(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return a.install(cmd, o, args, nil)
	}
	return c
}

// newInstantiateCmd is `agent instantiate NAME[@VERSION] DIR --param k=v`.
func newInstantiateCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "instantiate NAME[@VERSION] DIR",
		Short: "Make a new agent folder from a template package in a board's library, after checking it; nothing is run",
		Long: "Instantiate downloads the template package NAME from the board's library and checks it as install does,\n" +
			"then writes a new agent folder DIR with the template's parameters filled from --param (each checked\n" +
			"against its type; a parameter without a default must be given) and the filled flow validated.",
		Args: cli.Args("NAME[@VERSION]", "DIR"),
	}
	params := cli.List(c.Flags(), "param", "`NAME=VALUE`: a value for the template's parameter NAME; repeatable", func(kv string) error {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		return nil
	})
	o := libraryFlags(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		values := map[string]string{}
		for _, kv := range *params {
			name, value, _ := strings.Cut(kv, "=")
			if _, twice := values[name]; twice {
				return cli.Usagef("--param: %s given twice", name)
			}
			values[name] = value
		}
		return a.install(cmd, o, args, values)
	}
	return c
}

// install is install (params nil) and instantiate.
func (a *app) install(cmd *cobra.Command, o *libraryOptions, args []string, params map[string]string) error {
	ref, err := library.ParseRef(args[0])
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if o.digest != "" && !library.IsDigest(o.digest) {
		return cli.Usagef("--digest: %q: want sha256: and 64 lowercase hex digits", o.digest)
	}
	if o.board == "" {
		return cli.Usagef("--board: required: the URL of the board whose library to install from (or SYMPHONIX_BOARD)")
	}
	token, err := a.libraryToken(o)
	if err != nil {
		return err
	}
	var tlsConfig *tls.Config
	if o.caFile != "" {
		if !strings.HasPrefix(o.board, "https://") {
			return cli.Usagef("--ca-file: only for an https board; --board is %s", o.board)
		}
		pool, err := caPool(o.caFile)
		if err != nil {
			return err
		}
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	}
	client, err := library.Dial(o.board, token, tlsConfig)
	if err != nil {
		return cli.Usagef("--board: %v", err)
	}
	dir, err := filepath.Abs(args[1])
	if err != nil {
		return err
	}
	opts := library.Options{Digest: o.digest}
	var in *library.Installed
	if params == nil {
		in, err = library.Install(cmd.Context(), client, ref, dir, opts)
	} else {
		in, err = library.Instantiate(cmd.Context(), client, ref, dir, params, opts)
	}
	if err != nil {
		return err
	}
	t := cli.Table{Header: []string{"NAME", "VERSION", "KIND", "DIGEST", "FOLDER"}}
	t.Append(in.Name, in.Version, string(in.Kind), in.Digest, in.Dir)
	signers := in.Signers
	if signers == nil {
		signers = []string{}
	}
	return o.out.Print(a.stdout, t, installedJSON{Name: in.Name, Version: in.Version, Kind: string(in.Kind), Digest: in.Digest, Folder: in.Dir, Signers: signers})
}

// libraryToken is the token for the library: from --token-file when set,
// otherwise SYMPHONIX_TOKEN. Both from the environment is a usage error;
// a config file's --token-file gives way to SYMPHONIX_TOKEN, as any
// setting from the file gives way to the environment.
func (a *app) libraryToken(o *libraryOptions) (string, error) {
	env := strings.TrimSpace(a.getenv("SYMPHONIX_TOKEN"))
	file := o.tokenFile
	if env != "" && file != "" {
		switch a.root.Config.Source("token-file") {
		case cli.FromEnv:
			return "", cli.Usagef("SYMPHONIX_TOKEN and SYMPHONIX_TOKEN_FILE: set one of them, not both")
		case cli.FromFile:
			file = ""
		}
	}
	if file != "" {
		return readTokenFile(file)
	}
	if env == "" {
		return "", cli.Usagef("no token: set SYMPHONIX_TOKEN or --token-file to an operator or agent token of the board")
	}
	return env, nil
}

// caPool is the system's roots and the PEM certificates in path.
func caPool(path string) (*x509.CertPool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCAFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %s: %w", path, err)
	}
	if len(b) > maxCAFileBytes {
		return nil, fmt.Errorf("--ca-file: %s: larger than %d bytes", path, maxCAFileBytes)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, cli.Usagef("--ca-file: %s: no PEM certificate in it", path)
	}
	return pool, nil
}
