//go:build unix

package health

import (
	"os/exec"
	"syscall"
)

// killGroup starts cmd in a process group of its own and has its context
// kill the whole group: a shell's children too, not the shell alone.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
