//go:build !linux

package main

import (
	"io"
	"os"
)

// isTerminal reports whether r is a terminal: here, any character device
// (a terminal, but also /dev/null, where the question then finds no
// answer and nothing is done).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
