//go:build unix

package testrun

import "syscall"

// kill sends SIGKILL to pid, or to its process group when group is set.
func kill(pid int, group bool) error {
	if group {
		pid = -pid
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}
