package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/symphonix/symphonix/flow"
)

// errReported is a failure already printed in full: main exits 1 and
// adds nothing.
var errReported = errors.New("reported")

// runValidate is `agent validate DIR`: every problem with its code and
// path on stdout, exit 1 when there is any.
func runValidate(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: agent validate DIR")
	}
	path := filepath.Join(args[0], "flow.json")
	f, err := flow.LoadFile(path)
	if err != nil {
		fmt.Fprintf(stdout, "%s: %v\n", path, err)
		return errReported
	}
	problems := flow.Validate(f)
	for _, p := range problems {
		fmt.Fprintf(stdout, "%s: %s\n", path, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "%s: %d problem(s)\n", path, len(problems))
		return errReported
	}
	fmt.Fprintf(stdout, "%s: valid (version %s, %d nodes)\n", path, f.Version, len(f.Nodes))
	return nil
}
