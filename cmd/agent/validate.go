package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/agents"
	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/cli"
	"github.com/symphonix/symphonix/triggers"
)

// problemJSON is a problem or finding in -o json.
type problemJSON struct {
	Code     string `json:"code"`
	Severity string `json:"severity,omitempty"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// validateJSON is agent validate's -o json.
type validateJSON struct {
	File     string        `json:"file"`
	Valid    bool          `json:"valid"`
	Error    string        `json:"error,omitempty"` // the file could not be read as a flow
	Version  string        `json:"version,omitempty"`
	Nodes    int           `json:"nodes"`
	Problems []problemJSON `json:"problems"`
	// Triggers is the trigger file governing the flow, when there is one.
	Triggers *triggersJSON `json:"triggers,omitempty"`
	// Agents is the registry of the agents the flow delegates to, when the
	// folder has one or the flow has an agent node.
	Agents *agentsJSON `json:"agents,omitempty"`
	// Provided says how each handler and router the flow names is
	// provided; one that is not is a problem too.
	Provided []provisionJSON `json:"provided"`
}

// agentsJSON is what agent validate says of the folder's agents.json: the
// registry's problems and the flow's agent nodes naming agents it does
// not register, each with its code (agents.Codes).
type agentsJSON struct {
	File     string        `json:"file"`
	Valid    bool          `json:"valid"`
	Agents   int           `json:"agents"`
	Problems []problemJSON `json:"problems"`
}

// provisionJSON is how one handler or router is provided (agent.Provision).
type provisionJSON struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	By      string `json:"by,omitempty"` // go, exec or tool; missing when not provided
	Path    string `json:"path,omitempty"`
	Timeout string `json:"timeout,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// triggersJSON is what agent validate says of the flow's trigger file.
type triggersJSON struct {
	File     string        `json:"file"`
	Valid    bool          `json:"valid"`
	Code     string        `json:"code,omitempty"`  // why the file could not be read
	Error    string        `json:"error,omitempty"` // the same, for a person
	Triggers int           `json:"triggers"`
	Problems []problemJSON `json:"problems"`
}

// newValidateCmd is `agent validate DIR`: every problem with its code and
// path on stdout, exit 1 when there is any.
func newValidateCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "validate DIR",
		Short: "Check DIR/flow.json against the flow language, and its trigger file; exits 1 on any problem",
		Args:  cli.Args("DIR"),
	}
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		path := filepath.Join(args[0], "flow.json")
		v := validateJSON{File: path, Problems: []problemJSON{}, Provided: []provisionJSON{}}
		f, err := flow.LoadFile(path)
		if err != nil {
			v.Error = err.Error()
		} else {
			v.Version, v.Nodes = f.Version, len(f.Nodes)
			for _, p := range flow.Validate(f) {
				v.Problems = append(v.Problems, problemJSON{Code: p.Code, Path: p.Path, Message: p.Message})
			}
			v.Provided, v.Problems = provisions(args[0], f, v.Problems)
			v.Valid = len(v.Problems) == 0
		}
		if v.Triggers = validateTriggers(path, f); v.Triggers != nil && !v.Triggers.Valid {
			v.Valid = false
		}
		if v.Agents = validateAgents(args[0], f); v.Agents != nil && !v.Agents.Valid {
			v.Valid = false
		}
		if out.JSON() {
			if err := cli.PrintJSON(a.stdout, v); err != nil {
				return err
			}
		} else {
			printValidate(a, path, f, err, v)
		}
		if !v.Valid {
			return cli.ErrReported
		}
		return nil
	}
	return c
}

// validateTriggers checks the trigger file governing the flow at path
// against it (fl nil: a flow that could not be read, so the file's own
// rules only); nil when there is no trigger file.
func validateTriggers(path string, fl *flow.Flow) *triggersJSON {
	file := triggers.FileFor(path)
	if file == "" {
		return nil
	}
	t := &triggersJSON{File: file, Problems: []problemJSON{}}
	l, err := triggers.For(path)
	if err != nil {
		var te *triggers.Error
		if errors.As(err, &te) {
			t.Code = te.Code
		}
		t.Error = err.Error()
		return t
	}
	t.Triggers = len(l.File.Triggers)
	for _, p := range triggers.Problems(l.File, fl) {
		t.Problems = append(t.Problems, problemJSON{Code: p.Code, Path: p.Path, Message: p.Message})
	}
	t.Valid = len(t.Problems) == 0
	return t
}

// validateAgents checks dir's registry, and fl's agent nodes against it
// (fl nil: the registry alone); nil when the folder has no registry and
// the flow delegates to nothing.
func validateAgents(dir string, fl *flow.Flow) *agentsJSON {
	file := filepath.Join(dir, agents.FileName)
	t := &agentsJSON{File: file, Problems: []problemJSON{}}
	var (
		reg  *agents.Registry
		errs []*agents.Error
	)
	if _, err := os.Stat(file); err == nil {
		var lerr error
		reg, lerr = agents.Load(file)
		errs = agents.ProblemsOf(lerr)
		if lerr != nil && errs == nil {
			errs = []*agents.Error{{Code: agents.CodeInvalidRegistry, Message: lerr.Error()}}
		}
		if reg != nil {
			t.Agents = len(reg.Names())
		}
	}
	if fl != nil && (reg != nil || len(errs) == 0) {
		errs = append(errs, agents.CheckFlow(reg, fl)...)
	}
	if reg == nil && len(errs) == 0 {
		return nil
	}
	for _, e := range errs {
		path := ""
		if e.Agent != "" {
			path = "agents." + e.Agent
		}
		t.Problems = append(t.Problems, problemJSON{Code: e.Code, Path: path, Message: e.Message})
	}
	t.Valid = len(t.Problems) == 0
	return t
}

func printValidate(a *app, path string, f *flow.Flow, loadErr error, v validateJSON) {
	w := a.stdout
	switch {
	case loadErr != nil:
		fmt.Fprintf(w, "%s: %v\n", path, loadErr)
	case len(v.Problems) > 0:
		for _, p := range v.Problems {
			fmt.Fprintf(w, "%s: %s\n", path, flow.Problem{Code: p.Code, Path: p.Path, Message: p.Message})
		}
		fmt.Fprintf(w, "%s: %d problem(s)\n", path, len(v.Problems))
	default:
		fmt.Fprintf(w, "%s: valid (version %s, %d nodes)\n", path, f.Version, len(f.Nodes))
	}
	for _, p := range v.Provided {
		if p.By != "missing" { // a missing one is among the problems
			fmt.Fprintf(w, "  %s\n", provisionOf(p))
		}
	}
	t := v.Triggers
	switch {
	case t == nil:
	case t.Error != "":
		fmt.Fprintln(w, t.Error)
	case len(t.Problems) > 0:
		for _, p := range t.Problems {
			fmt.Fprintf(w, "%s: %s\n", t.File, flow.Problem{Code: p.Code, Path: p.Path, Message: p.Message})
		}
		fmt.Fprintf(w, "%s: %d problem(s)\n", t.File, len(t.Problems))
	default:
		fmt.Fprintf(w, "%s: valid (%d trigger(s))\n", t.File, t.Triggers)
	}
	if g := v.Agents; g != nil {
		for _, p := range g.Problems {
			fmt.Fprintf(w, "%s: %s\n", g.File, flow.Problem{Code: p.Code, Path: p.Path, Message: p.Message})
		}
		if len(g.Problems) > 0 {
			fmt.Fprintf(w, "%s: %d problem(s)\n", g.File, len(g.Problems))
		} else {
			fmt.Fprintf(w, "%s: valid (%d agent(s))\n", g.File, g.Agents)
		}
	}
}
