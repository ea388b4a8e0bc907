package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/cli"
)

// planJSON is what agent check says would be written.
type planJSON struct {
	Handlers []string `json:"handlers"`
	Routers  []string `json:"routers"`
	Tools    []string `json:"tools"`
	Services []string `json:"services"`
	Declared []string `json:"declared"`
}

// checkJSON is agent check's -o json.
type checkJSON struct {
	File     string        `json:"file"`
	Ready    bool          `json:"ready"`
	Error    string        `json:"error,omitempty"` // the file could not be read as a flow
	Findings []problemJSON `json:"findings"`
	Plan     *planJSON     `json:"plan,omitempty"`
	// Provided says how each handler and router is provided to the
	// folder as it is now (docs/handlers.md); advice, not a finding.
	Provided []provisionJSON `json:"provided,omitempty"`
}

// newCheckCmd is `agent check DIR`: readiness findings and the plan. It
// exits 1 when the flow is not ready; warnings alone do not fail it.
// `agent check FILE.af` checks an Agent Flow file instead (checkAF).
func newCheckCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "check DIR|FILE.af",
		Short: "Say whether the flow in DIR is ready to run, and what would be written for it; or what is wrong with an Agent Flow file",
		Args:  cli.Args("DIR"),
	}
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if isAF(args[0]) {
			return checkAF(a, &out, args[0])
		}
		path := filepath.Join(args[0], "flow.json")
		w := a.stdout
		f, err := flow.LoadFile(path)
		if err != nil {
			if out.JSON() {
				if err := cli.PrintJSON(w, checkJSON{File: path, Error: err.Error(), Findings: []problemJSON{}}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "%s: %v\n", path, err)
			}
			return cli.ErrReported
		}
		r := flow.CheckReadiness(f)
		p := r.Plan
		provided, problems := provisions(args[0], f, nil)
		if out.JSON() {
			v := checkJSON{File: path, Ready: r.Ready, Findings: []problemJSON{}, Provided: provided, Plan: &planJSON{
				Handlers: nonNil(p.Handlers), Routers: nonNil(p.Routers), Tools: nonNil(p.Tools), Services: nonNil(p.Services), Declared: nonNil(p.Declared),
			}}
			for _, fd := range r.Findings {
				v.Findings = append(v.Findings, problemJSON{Code: fd.Code, Severity: fd.Severity, Path: fd.Path, Message: fd.Message})
			}
			if err := cli.PrintJSON(w, v); err != nil {
				return err
			}
		} else {
			for _, fd := range r.Findings {
				fmt.Fprintf(w, "%s: %s\n", path, fd)
			}
			fmt.Fprintln(w, "Would write:")
			for _, l := range []struct {
				what  string
				names []string
			}{{"handlers", p.Handlers}, {"routers", p.Routers}, {"tools", p.Tools}, {"services", p.Services}} {
				fmt.Fprintf(w, "  %-9s %s\n", l.what+":", list(l.names))
			}
			fmt.Fprintf(w, "From the declaration: %s\n", list(p.Declared))
			if len(provided) > 0 {
				fmt.Fprintln(w, "Provided now:")
				for _, pv := range provided {
					fmt.Fprintf(w, "  %s\n", provisionOf(pv))
				}
			}
			for _, pr := range problems {
				if pr.Code == codeHandlersFile {
					fmt.Fprintf(w, "%s: %s\n", path, pr.Message)
				}
			}
			if r.Ready {
				fmt.Fprintf(w, "%s: ready\n", path)
			} else {
				fmt.Fprintf(w, "%s: not ready\n", path)
			}
		}
		if !r.Ready {
			return cli.ErrReported
		}
		return nil
	}
	return c
}

func list(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
