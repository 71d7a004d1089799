//go:build !unix

package testrun

import "os/exec"

// DieWithParent: only Linux ties a child's life to its parent's; here cmd
// is left as it is, and Sweep is what ends a killed run's servers.
func DieWithParent(cmd *exec.Cmd, group bool) {}
