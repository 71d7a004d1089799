//go:build !unix

package testrun

import "os"

// tryLock: without flock(2), a lock is an open file, exclusive to this
// process only.
func tryLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}
