package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/symphonix/symphonix/flow"
)

// runCheck is `agent check DIR`: readiness findings and the plan. It exits
// 1 when the flow is not ready; warnings alone do not fail it.
func runCheck(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: agent check DIR")
	}
	path := filepath.Join(args[0], "flow.json")
	f, err := flow.LoadFile(path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: %v\n", path, err)
		return errReported
	}
	r := flow.CheckReadiness(f)
	for _, fd := range r.Findings {
		fmt.Fprintf(stdout, "%s: %s\n", path, fd)
	}
	p := r.Plan
	fmt.Fprintln(stdout, "Would write:")
	for _, l := range []struct {
		what  string
		names []string
	}{{"handlers", p.Handlers}, {"routers", p.Routers}, {"tools", p.Tools}, {"services", p.Services}} {
		fmt.Fprintf(stdout, "  %-9s %s\n", l.what+":", list(l.names))
	}
	fmt.Fprintf(stdout, "From the declaration: %s\n", list(p.Declared))
	if !r.Ready {
		fmt.Fprintf(stdout, "%s: not ready\n", path)
		return errReported
	}
	fmt.Fprintf(stdout, "%s: ready\n", path)
	return nil
}

func list(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}
