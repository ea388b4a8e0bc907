package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/symphonix/symphonix/flow"
	"github.com/symphonix/symphonix/internal/cli"
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
}

// newValidateCmd is `agent validate DIR`: every problem with its code and
// path on stdout, exit 1 when there is any.
func newValidateCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "validate DIR",
		Short: "Check DIR/flow.json against the flow language; exits 1 on any problem",
		Args:  cli.Args("DIR"),
	}
	var out cli.Output
	out.AddFlag(c.Flags())
	c.RunE = func(cmd *cobra.Command, args []string) error {
		path := filepath.Join(args[0], "flow.json")
		v := validateJSON{File: path, Problems: []problemJSON{}}
		f, err := flow.LoadFile(path)
		if err != nil {
			v.Error = err.Error()
		} else {
			v.Version, v.Nodes = f.Version, len(f.Nodes)
			for _, p := range flow.Validate(f) {
				v.Problems = append(v.Problems, problemJSON{Code: p.Code, Path: p.Path, Message: p.Message})
			}
			v.Valid = len(v.Problems) == 0
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

func printValidate(a *app, path string, f *flow.Flow, loadErr error, v validateJSON) {
	w := a.stdout
	if loadErr != nil {
		fmt.Fprintf(w, "%s: %v\n", path, loadErr)
		return
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "%s: %s\n", path, flow.Problem{Code: p.Code, Path: p.Path, Message: p.Message})
	}
	if len(v.Problems) > 0 {
		fmt.Fprintf(w, "%s: %d problem(s)\n", path, len(v.Problems))
		return
	}
	fmt.Fprintf(w, "%s: valid (version %s, %d nodes)\n", path, f.Version, len(f.Nodes))
}
