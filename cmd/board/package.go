package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/packages"
)

// newPackageCmd is board package: solution packages. build, sign, verify
// and inspect are offline; publish, list, show, yank and download are a
// running board's library. Nothing here runs what a package holds.
func newPackageCmd(a *app) *cobra.Command {
	c := cli.Group("package", "Build, sign, verify and inspect solution packages offline; publish, list, show, yank and download them in a board's library")
	c.Aliases = []string{"packages"}
	c.AddCommand(newPackageBuildCmd(a), newPackageSignCmd(a), newPackageVerifyCmd(a), newPackageInspectCmd(a),
		packagePublish(a), packageList(a), packageShow(a), packageYank(a), packageDownload(a))
	return c
}

// packageJSON is a package as printed.
type packageJSON struct {
	File     string             `json:"file"`
	Digest   string             `json:"digest"`
	Bytes    int64              `json:"bytes"`
	Manifest *packages.Manifest `json:"manifest"`
}

func newPackageBuildCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "build DIR --name scope/name --version V [--out FILE]",
		Short: "Pack an agent folder or a template into a package (the same files give the same bytes)",
		Args:  cli.Args("DIR"),
	}
	fs := c.Flags()
	var out cli.Output
	out.AddFlag(fs)
	name := fs.String("name", "", "the package's name, scope/name, each a lowercase DNS label")
	version := fs.String("version", "", "the package's semantic version, such as 1.0.0")
	desc := fs.String("description", "", "what the package is (default: the flow's description)")
	file := fs.String("out", "", "the package file to write (default: NAME-VERSION.tgz, NAME the part after the slash)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := packages.CheckName(*name); err != nil {
			return cli.Usagef("--name: %w", err)
		}
		if err := packages.CheckVersion(*version); err != nil {
			return cli.Usagef("--version: %w", err)
		}
		if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
			return cli.Usagef("DIR: %s is not a folder", args[0])
		}
		target := *file
		if target == "" {
			_, short, _ := strings.Cut(*name, "/")
			target = short + "-" + *version + ".tgz"
		}
		var buf bytes.Buffer
		m, err := packages.Build(args[0], packages.Meta{Name: *name, Version: *version, Description: *desc}, &buf, packages.Limits{})
		if err != nil {
			return err
		}
		// What was built must pass the reader's limits too.
		p, err := packages.Scan(bytes.NewReader(buf.Bytes()), packages.Limits{})
		if err != nil {
			return err
		}
		if err := replaceFile(target, buf.Bytes()); err != nil {
			return err
		}
		return printPackage(a, &out, packageJSON{File: target, Digest: p.Digest, Bytes: p.ArchiveBytes, Manifest: m}, false)
	}
	return c
}

func newPackageSignCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "sign FILE --key KEYFILE [--out SIGFILE]",
		Short: "Sign a package's digest (DSSE, Ed25519); a second signer's signature is added to the same file",
		Args:  cli.Args("FILE"),
	}
	fs := c.Flags()
	key := fs.String("key", "", "the private key file (board key create); refused if others may read it")
	sigFile := fs.String("out", "", "the signature file (default FILE.sig.json); - prints the envelope instead")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *key == "" {
			return cli.Usagef("--key: required: the private key file to sign with")
		}
		priv, err := packages.ReadPrivateKey(*key)
		if err != nil {
			return err
		}
		p, err := scanFile(args[0])
		if err != nil {
			return err
		}
		pub := priv.Public().(ed25519.PublicKey)
		env, err := packages.Sign(p.Digest, priv, packages.KeyID(pub))
		if err != nil {
			return err
		}
		target := *sigFile
		if target == "" {
			target = args[0] + ".sig.json"
		}
		if target != "-" {
			// Another signer's envelope for this package: add to it.
			old, err := readEnvelope(target)
			switch {
			case errors.Is(err, os.ErrNotExist):
			case err != nil:
				return err
			case !bytes.Equal(old.Payload, env.Payload) || old.PayloadType != env.PayloadType:
				return fmt.Errorf("%s signs another package: remove it or choose --out", target)
			default:
				for _, s := range old.Signatures {
					if s.KeyID != packages.KeyID(pub) {
						env.Signatures = append(env.Signatures, s)
					}
				}
			}
		}
		data, err := json.MarshalIndent(env, "", "  ")
		if err != nil {
			return err
		}
		data = append(data, '\n')
		if target == "-" {
			_, err := a.stdout.Write(data)
			return err
		}
		if err := replaceFile(target, data); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "signed %s (%s) as %s: %s, %d signature(s)\n", args[0], p.Digest, packages.KeyID(pub), target, len(env.Signatures))
		return nil
	}
	return c
}

func newPackageVerifyCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "verify FILE [--trust PUBKEY]... [--sig SIGFILE] [--threshold N]",
		Short: "Check a package: a safe archive, every file as its manifest says; with --trust, its signatures",
		Args:  cli.Args("FILE"),
	}
	fs := c.Flags()
	var out cli.Output
	out.AddFlag(fs)
	trust := fs.StringArray("trust", nil, "a trusted public key: ed25519:BASE64, or a file holding one (board key create's FILE.pub); repeat for several")
	sigFile := fs.String("sig", "", "the signature file (default FILE.sig.json when --trust is given)")
	threshold := fs.Int("threshold", 1, "how many distinct trusted keys must have signed")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if *sigFile != "" && len(*trust) == 0 {
			return cli.Usagef("--sig: give --trust with it: a signature means nothing without the keys you trust")
		}
		if *threshold < 1 || (len(*trust) > 0 && *threshold > len(*trust)) {
			return cli.Usagef("--threshold: %d: from 1 to the number of --trust keys", *threshold)
		}
		var keys []ed25519.PublicKey
		for _, s := range *trust {
			k, err := trustedKey(s)
			if err != nil {
				return cli.Usagef("--trust: %w", err)
			}
			keys = append(keys, k)
		}
		p, err := scanFile(args[0])
		if err != nil {
			return err
		}
		signed := len(keys) > 0
		if signed {
			target := *sigFile
			if target == "" {
				target = args[0] + ".sig.json"
			}
			env, err := readEnvelope(target)
			if err != nil {
				return err
			}
			if err := packages.VerifySignature(env, p.Digest, keys, *threshold); err != nil {
				return err
			}
		}
		v := struct {
			File      string `json:"file"`
			Digest    string `json:"digest"`
			Signed    bool   `json:"signed"`
			Threshold int    `json:"threshold,omitempty"`
		}{args[0], p.Digest, signed, 0}
		state := "ok: a safe archive, every file as the manifest says; signatures not checked (no --trust)"
		if signed {
			v.Threshold = *threshold
			state = "ok: a safe archive, every file as the manifest says, signed by " + strconv.Itoa(*threshold) + " or more trusted keys"
		}
		t := cli.Table{Header: []string{"FILE", "DIGEST", "RESULT"}}
		t.Append(args[0], p.Digest, state)
		return out.Print(a.stdout, t, v)
	}
	return c
}

func newPackageInspectCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Print a package's manifest, after checking it as verify does",
		Args:  cli.Args("FILE"),
	}
	fs := c.Flags()
	var out cli.Output
	out.AddFlag(fs)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		p, err := scanFile(args[0])
		if err != nil {
			return err
		}
		return printPackage(a, &out, packageJSON{File: args[0], Digest: p.Digest, Bytes: p.ArchiveBytes, Manifest: &p.Manifest}, true)
	}
	return c
}

// printPackage prints a package: its fields, and its files when asked.
func printPackage(a *app, out *cli.Output, v packageJSON, files bool) error {
	if out.JSON() {
		return cli.PrintJSON(a.stdout, v)
	}
	m := v.Manifest
	t := cli.Table{Header: []string{"FIELD", "VALUE"}}
	t.Append("file", v.File)
	t.Append("name", m.Name)
	t.Append("version", m.Version)
	t.Append("kind", string(m.Kind))
	t.Append("digest", v.Digest)
	t.Append("bytes", strconv.FormatInt(v.Bytes, 10))
	t.Append("description", m.Description)
	t.Append("dsl_version", m.DSLVersion)
	t.Append("requires.mcp", strings.Join(m.Requires.MCP, ", "))
	t.Append("requires.inputs", strings.Join(m.Requires.Inputs, ", "))
	t.Append("requires.secrets", strings.Join(m.Requires.Secrets, ", "))
	t.Append("files", strconv.Itoa(len(m.Files)))
	if err := cli.PrintTable(a.stdout, t); err != nil {
		return err
	}
	if !files {
		return nil
	}
	ft := cli.Table{Header: []string{"PATH", "SIZE", "SHA256"}}
	for _, f := range m.Files {
		ft.Append(f.Path, strconv.FormatInt(f.Size, 10), f.SHA256)
	}
	fmt.Fprintln(a.stdout)
	return cli.PrintTable(a.stdout, ft)
}

// scanFile scans the package in the named file.
func scanFile(name string) (*packages.Package, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return packages.Scan(f, packages.Limits{})
}

// readEnvelope reads a signature file.
func readEnvelope(name string) (packages.Envelope, error) {
	f, err := os.Open(name)
	if err != nil {
		return packages.Envelope{}, err
	}
	defer f.Close()
	env, err := packages.ReadEnvelope(f)
	if err != nil {
		return env, fmt.Errorf("%s: %w", name, err)
	}
	return env, nil
}

// trustedKey reads --trust: a key's text, or a file holding it.
func trustedKey(s string) (ed25519.PublicKey, error) {
	if strings.HasPrefix(s, "ed25519:") {
		return packages.ParsePublicKey(s)
	}
	f, err := os.Open(s)
	if err != nil {
		return nil, fmt.Errorf("%q is neither ed25519:BASE64 nor a readable file", s)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, err
	}
	return packages.ParsePublicKey(string(data))
}

// replaceFile writes data to name through a temporary file beside it, so
// a reader never sees half of it.
func replaceFile(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// writeNew writes a file that must not exist.
func writeNew(name string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
