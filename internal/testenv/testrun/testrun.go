// Package testrun keeps a record of what each test process makes on the
// machine (databases and Redis keys on the shared servers, private servers
// and their data), so that what a killed run left behind can be swept
// away, and never what a run still in progress uses.
//
// A run is one process: a test binary, the benchmark, or a script that
// registers itself (cmd/testctl). Its record is a file in Dir, written when
// the run makes its first name or starts its first server. The record
// names its owner by process id, process start time and boot id, so a
// reused process id is not mistaken for the owner. Sweep looks at every
// record whose owner is gone (not merely old: a run on another checkout of
// the same machine may take twenty minutes and is left alone while its
// process lives) and kills its servers, removes their data directories,
// drops its databases and deletes its keys, then the record.
//
// The package also hands out ports that no other run takes at the same
// time (ReservePort), cross-process locks (Lock), and the factor by which
// tests stretch their deadlines on a busy machine (TimeScale).
package testrun

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Dir is the directory of the run records, the port reservations and the
// locks, shared by every checkout and process on the machine, whatever
// their TMPDIR: /tmp/feedservice-test-runs (on Windows, under the
// temporary directory).
func Dir() string {
	if runtime.GOOS == "windows" {
		return filepath.Join(os.TempDir(), "feedservice-test-runs")
	}
	return "/tmp/feedservice-test-runs"
}

// Server is a process a run started and must not outlive it: a private
// mariadbd or redis-server, a server binary, a browser.
type Server struct {
	What  string `json:"what"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // the process's start time (clock ticks since boot)
	// Group: the process leads a process group of its own, killed whole.
	Group bool `json:"group,omitempty"`
	// Dir holds the server's data; it goes with the server. Only a
	// directory under the temporary directory is ever removed.
	Dir string `json:"dir,omitempty"`
}

// Record is what a run file holds.
type Record struct {
	ID      string    `json:"id"`
	PID     int       `json:"pid"`
	Start   uint64    `json:"start"`
	Boot    string    `json:"boot"`
	Command string    `json:"command"`
	Created time.Time `json:"created"`
	// TempDir is the owner's temporary directory: a server's directory
	// under it (or under the sweeper's) may be removed.
	TempDir string `json:"tempDir,omitempty"`
	// Prefixes: every database and Redis key of the run starts with one
	// of these (each holds the run's id: see Run.Name).
	Prefixes []string `json:"prefixes,omitempty"`
	// MySQL: the servers (DSNs without a database) where its databases are.
	MySQL []string `json:"mysql,omitempty"`
	// Redis: the servers (a comma list for a cluster) where its keys are.
	Redis []string `json:"redis,omitempty"`
	// Servers by a key of the run's own.
	Servers map[string]Server `json:"servers,omitempty"`
}

// Run is a registered run, whose record this process keeps up to date.
type Run struct {
	mu   sync.Mutex
	rec  Record
	path string
	next int // for server keys
}

var self struct {
	once sync.Once
	run  *Run
	err  error
}

// Self is the run of this process, registered on the first call.
func Self() (*Run, error) {
	self.once.Do(func() { self.run, self.err = Register(os.Getpid()) })
	return self.run, self.err
}

// SelfID is the id of this process's run, or "" when it could not be
// registered.
func SelfID() string {
	if r, err := Self(); err == nil {
		return r.rec.ID
	}
	return ""
}

// maxCommand bounds the command line a record keeps (for people reading
// it: a test binary's -test.run list can be kilobytes long).
const maxCommand = 300

// Register writes the record of a new run owned by process pid (this
// process, or the script that asked cmd/testctl for a name).
func Register(pid int) (*Run, error) {
	if err := os.MkdirAll(Dir(), 0o755); err != nil {
		return nil, fmt.Errorf("test run registry: %w", err)
	}
	start, err := processStart(pid)
	if err != nil && !errors.Is(err, errNoProc) {
		return nil, fmt.Errorf("test run registry: process %d: %w", pid, err)
	}
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if len(cmd) == 0 && pid == os.Getpid() {
		cmd = []byte(strings.Join(os.Args, " "))
	}
	if len(cmd) > maxCommand {
		cmd = append(cmd[:maxCommand:maxCommand], "..."...)
	}
	id := make([]byte, 4)
	rand.Read(id)
	r := &Run{rec: Record{
		ID:      hex.EncodeToString(id),
		PID:     pid,
		Start:   start,
		Boot:    bootID(),
		Command: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))),
		Created: time.Now().UTC().Truncate(time.Second),
		TempDir: os.TempDir(),
	}}
	r.path = filepath.Join(Dir(), r.rec.ID+".run")
	if err := r.save(); err != nil {
		return nil, err
	}
	return r, nil
}

// ID is the run's id: eight hex digits.
func (r *Run) ID() string { return r.rec.ID }

// Name returns a fresh name for a database or a key prefix: prefix, the
// run's id, "_" and twelve random hex digits. The record learns prefix
// plus the id before the name is returned, so that whatever is made
// under the name can be swept once the run is gone.
func (r *Run) Name(prefix string) (string, error) {
	buf := make([]byte, 6)
	rand.Read(buf)
	base := prefix + r.rec.ID + "_"
	err := r.update(func(rec *Record) bool { return addOnce(&rec.Prefixes, base) })
	return base + hex.EncodeToString(buf), err
}

// UsesMySQL records that the run's databases may be on the MySQL server
// dsn (a DSN without a database).
func (r *Run) UsesMySQL(dsn string) error {
	return r.update(func(rec *Record) bool { return addOnce(&rec.MySQL, dsn) })
}

// UsesRedis records that the run's keys may be on the Redis server (or
// cluster) at addrs, a comma list.
func (r *Run) UsesRedis(addrs string) error {
	return r.update(func(rec *Record) bool { return addOnce(&rec.Redis, addrs) })
}

// addOnce adds v to list unless it is there, and says whether it added it.
func addOnce(list *[]string, v string) bool {
	if slices.Contains(*list, v) {
		return false
	}
	*list = append(*list, v)
	return true
}

// AddServer records a process the run started (pid 0: only a directory),
// and the directory of its data; forget removes it from the record once
// the process has ended (or been killed) the ordinary way.
func (r *Run) AddServer(what string, pid int, group bool, dir string) (forget func(), err error) {
	var start uint64
	if pid > 0 {
		if start, err = processStart(pid); err != nil && !errors.Is(err, errNoProc) {
			return func() {}, err
		}
	}
	var key string
	err = r.update(func(rec *Record) bool {
		r.next++
		key = what + "-" + strconv.Itoa(r.next)
		if rec.Servers == nil {
			rec.Servers = map[string]Server{}
		}
		rec.Servers[key] = Server{What: what, PID: pid, Start: start, Group: group, Dir: dir}
		return true
	})
	return func() {
		r.update(func(rec *Record) bool {
			delete(rec.Servers, key)
			return true
		})
	}, err
}

// update changes the record with change and, when it reports a change,
// writes it (a new file renamed over the old one, so that a reader sees
// one version or the other, whole).
func (r *Run) update(change func(*Record) bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !change(&r.rec) {
		return nil
	}
	return r.save()
}

func (r *Run) save() error {
	b, err := json.MarshalIndent(r.rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("test run registry: %w", err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return fmt.Errorf("test run registry: %w", err)
	}
	return nil
}

// Records reads every run record in Dir.
func Records() ([]Record, error) {
	entries, err := os.ReadDir(Dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".run") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(Dir(), e.Name()))
		if err != nil {
			continue // swept meanwhile
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil || rec.ID+".run" != e.Name() {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// Alive reports whether the run's owner is still running: the same
// process (id and start time) on the same boot, not a zombie. A record
// that cannot be judged (no /proc) counts as alive: it is never swept.
func (rec Record) Alive() bool {
	if rec.Boot == "" || rec.Start == 0 {
		return true
	}
	if rec.Boot != bootID() {
		return false
	}
	start, err := processStart(rec.PID)
	return err == nil && start == rec.Start
}
