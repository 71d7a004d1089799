//go:build unix

package testrun

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock(2) on the file at path, created if
// missing, without waiting: errBusy when another open file holds it. The
// kernel drops the lock when the file is closed or its process ends, by
// whatever death.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errBusy
		}
		return nil, err
	}
	return f, nil
}
