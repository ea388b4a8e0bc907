package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/internal/cli"
)

// newConfigCmd prints the configuration board serve would run with: each
// flag, its value (secrets redacted) and where it came from.
func newConfigCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration of board serve: each key, its value and where it came from",
		Long: `Print the configuration board serve would run with, given the same flags,
environment and config file: each key (a flag's name), its value, and where
the value came from (flag, env, file or default). Secrets are redacted: a
--database URL's password prints as ***.`,
		Args:        cli.NoArgs,
		Annotations: map[string]string{cli.ConfigTable: "serve"},
	}
	serveFlags(c.Flags())
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		t := cli.Table{Header: []string{"KEY", "VALUE", "SOURCE", "ENV"}}
		var list []cli.Setting
		for _, s := range a.root.Config.Settings() {
			if s.Key == "output" {
				continue
			}
			v := fmt.Sprint(s.Value)
			if l, ok := s.Value.([]string); ok {
				v = strings.Join(l, ",")
			}
			t.Append(s.Key, v, s.Source, s.Env)
			list = append(list, s)
		}
		return out.Print(a.stdout, t, configJSON{File: a.root.Config.File(), Settings: list})
	}
	return c
}

// configJSON is board config's -o json.
type configJSON struct {
	File     string        `json:"file"`
	Settings []cli.Setting `json:"settings"`
}
