package testrun

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// errBusy: another process (or another holder in this one) has the lock.
var errBusy = errors.New("held by another")

// ErrBusy is Lock's error when the lock stayed held for the whole wait.
var ErrBusy = errBusy

// Lock takes the machine-wide lock called name (a file in Dir()/locks,
// which scripts can take too, with flock(1)), waiting up to wait for it.
// The lock ends with unlock or with the process, however it ends.
func Lock(name string, wait time.Duration) (unlock func(), err error) {
	dir := filepath.Join(Dir(), "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name+".lock")
	deadline := time.Now().Add(wait)
	for {
		f, err := tryLock(path)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, errBusy) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("lock %s: %w", path, ErrBusy)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// LockPath is the file of the lock called name, for flock(1) in scripts.
func LockPath(name string) string { return filepath.Join(Dir(), "locks", name+".lock") }

// reservePortAttempts bounds ReservePort's tries.
const reservePortAttempts = 500

// ReservePort returns a TCP port on 127.0.0.1 that nothing listens on and
// that no other process reserved, for a private server to listen on;
// release gives it back (the end of the process does too). The port is
// taken below the kernel's range of ephemeral ports, so that a client's
// outgoing connection cannot take it between the reservation and the
// server's bind, nor while a test has its server stopped to restart it on
// the same port.
func ReservePort() (port string, release func(), err error) {
	lo, hi := reservablePorts()
	for range reservePortAttempts {
		var p int
		if lo != 0 {
			p = lo + rand.IntN(hi-lo)
		} else {
			// No range known: an ephemeral port the kernel says is free.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return "", nil, err
			}
			p = l.Addr().(*net.TCPAddr).Port
			l.Close()
		}
		unlock, err := Lock("port-"+strconv.Itoa(p), 0)
		if errors.Is(err, ErrBusy) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			unlock()
			continue // someone else listens there
		}
		l.Close()
		return strconv.Itoa(p), unlock, nil
	}
	return "", nil, fmt.Errorf("no free port found in %d tries", reservePortAttempts)
}

// reservablePorts is [lo, hi): the 10,000 ports below the kernel's
// ephemeral range (Linux: ip_local_port_range), or 0, 0 when that range is
// unknown or starts too low.
func reservablePorts() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, 0
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || first < 20000 {
		return 0, 0
	}
	return first - 10000, first
}
