package testrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

var (
	// errNoProc: this system has no /proc; liveness cannot be judged.
	errNoProc = errors.New("no /proc on this system")
	// errGone: the process has ended (or is a zombie).
	errGone = errors.New("process has ended")
)

// processStart is the start time of process pid, in clock ticks since
// boot (field 22 of /proc/<pid>/stat): with the pid, it names one process
// for the life of the machine.
func processStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, err := os.Stat("/proc/self/stat"); err != nil {
			return 0, errNoProc
		}
		return 0, errGone
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses: the fields after it start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (the state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return 0, errGone
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

var boot struct {
	once sync.Once
	id   string
}

// bootID names this boot of the machine ("" without /proc): process ids
// and start times of another boot mean nothing now.
func bootID() string {
	boot.once.Do(func() {
		b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
		boot.id = strings.TrimSpace(string(b))
	})
	return boot.id
}

// sameProcess reports whether pid is still the process that started at
// start (and not a zombie).
func sameProcess(pid int, start uint64) bool {
	got, err := processStart(pid)
	return err == nil && got == start
}
