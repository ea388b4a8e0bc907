//go:build !unix

package agent

import "os/exec"

// ownGroup leaves cmd as it is: without process groups, ending its context
// kills the executable alone.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing without process groups.
func killGroup(*exec.Cmd) {}
