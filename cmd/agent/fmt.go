package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/agentflow"
	"github.com/symphonix/symphonix/internal/cli"
)

// newFmtCmd is `agent fmt FILE.af...`: each file laid out canonically
// (docs/agentflow.md), on stdout, or written in place with -w, or named
// with -l when its layout differs. A file with a syntax error is left as
// it is and its errors printed; any makes the command exit 1.
func newFmtCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "fmt FILE.af...",
		Short: "Lay out Agent Flow files canonically: print them, or write them in place with -w, or list those that differ with -l",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("fmt: want FILE.af (see %s --help)", cmd.CommandPath())
			}
			return afArgs(args)
		},
	}
	fs := c.Flags()
	write := fs.BoolP("write", "w", false, "write each file's formatted form in place, when it differs; only on the command line")
	list := fs.BoolP("list", "l", false, "print the name of each file whose formatting differs, not its formatted form; only on the command line")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		// What fmt does to files is said on its command line, never by the
		// environment (SYMPHONIX_WRITE) or a config file.
		*write = *write && cmd.Flags().Changed("write")
		*list = *list && cmd.Flags().Changed("list")
		failed := false
		for _, path := range args {
			src, err := readAF(path)
			if err != nil {
				fmt.Fprintf(a.stderr, "%s: %v\n", path, err)
				failed = true
				continue
			}
			out, diags := agentflow.Format(src)
			if agentflow.HasErrors(diags) {
				printDiagnostics(a.stderr, path, diags)
				failed = true
				continue
			}
			changed := !bytes.Equal(src, out)
			if *list && changed {
				fmt.Fprintln(a.stdout, path)
			}
			if *write && changed {
				if err := writeAtomically(path, out); err != nil {
					fmt.Fprintf(a.stderr, "%s: %v\n", path, err)
					failed = true
				}
			}
			if !*list && !*write {
				if _, err := a.stdout.Write(out); err != nil {
					return err
				}
			}
		}
		if failed {
			return cli.ErrReported
		}
		return nil
	}
	return c
}

// writeAtomically replaces path with b: a temporary file beside it, with
// its mode, renamed over it, so a reader sees the old file or the new one.
func writeAtomically(path string, b []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
