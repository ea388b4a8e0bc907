//go:build !unix

package health

import "os/exec"

// killGroup leaves cmd as it is: where there are no process groups, its
// context kills the command alone, and its output is waited for at most
// waitDelay after.
func killGroup(*exec.Cmd) {}
