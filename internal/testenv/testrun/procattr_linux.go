package testrun

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes cmd (not yet started) end with SIGKILL when the
// process that starts it ends, however it ends: a test binary killed by a
// signal or by go test's timeout runs no cleanup, and its private servers
// would otherwise outlive it. group also puts cmd in a process group of
// its own (its children are then killed with it by Sweep).
//
// Linux delivers the signal when the thread that forked the child ends;
// the Go runtime ends a thread only when a goroutine locked to it returns,
// which the callers here do not do. Sweep covers what this misses.
func DieWithParent(cmd *exec.Cmd, group bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if group {
		cmd.SysProcAttr.Setpgid = true
	}
}
