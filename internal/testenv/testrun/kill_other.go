//go:build !unix

package testrun

import "os"

// kill ends pid (a group is not known here: the process alone).
func kill(pid int, group bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
