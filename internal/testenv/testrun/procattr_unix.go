//go:build unix && !linux

package testrun

import (
	"os/exec"
	"syscall"
)

// DieWithParent: only Linux ties a child's life to its parent's; here cmd
// only gets its own process group when group is set, and Sweep is what
// ends a killed run's servers.
func DieWithParent(cmd *exec.Cmd, group bool) {
	if group {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setpgid = true
	}
}
