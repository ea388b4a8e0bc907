//go:build unix

package agent

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, and makes ending its
// context kill the whole group: a shell script's children die with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killGroup kills what is left of cmd's process group once cmd has
// ended. The group is gone when nothing was left, which is no error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
