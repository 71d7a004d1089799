package testrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// Swept is what Sweep removed.
type Swept struct {
	Runs      int // records of ended runs, cleaned and removed
	Servers   int // processes killed
	Dirs      int // data directories removed
	Databases int
	Keys      int
}

func (s Swept) String() string {
	return fmt.Sprintf("%d ended test runs: %d servers killed; %d data directories, %d databases and %d Redis keys removed",
		s.Runs, s.Servers, s.Dirs, s.Databases, s.Keys)
}

// sweepServerTimeout bounds the work on each server contacted by Sweep,
// sweepDialTimeout the connection to it: a server that does not answer
// (the replicas' primary before the side chain started it) costs a sweep
// that much once, and the records naming it wait for a later sweep.
const (
	sweepServerTimeout = 30 * time.Second
	sweepDialTimeout   = 2 * time.Second
)

// Sweep cleans up after every run whose owner has ended (Record.Alive) and
// removes its record. The records of live runs, this process's own
// included, are not touched, however old. What cannot be cleaned now (a
// server that does not answer) keeps its record for the next sweep; the
// errors are returned joined, after everything else was done.
func Sweep(ctx context.Context) (Swept, error) {
	var total Swept
	recs, err := Records()
	if err != nil {
		return total, err
	}
	var errs []error
	down := map[string]error{} // servers that did not answer in this sweep
	for _, rec := range recs {
		if rec.Alive() {
			continue
		}
		// One sweeper per record at a time; another one skips it.
		unlock, err := Lock("sweep-"+rec.ID, 0)
		if err != nil {
			continue
		}
		s, err := sweepRun(ctx, rec, down)
		if err == nil {
			err = os.Remove(filepath.Join(Dir(), rec.ID+".run"))
			if errors.Is(err, os.ErrNotExist) {
				err = nil
			}
			s.Runs++
		}
		unlock()
		total.Runs += s.Runs
		total.Servers += s.Servers
		total.Dirs += s.Dirs
		total.Databases += s.Databases
		total.Keys += s.Keys
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s (pid %d, %s): %w", rec.ID, rec.PID, rec.Command, err))
		}
	}
	removeStaleTemp()
	return total, errors.Join(errs...)
}

// sweepRun cleans up after the ended run rec.
func sweepRun(ctx context.Context, rec Record, down map[string]error) (Swept, error) {
	var s Swept
	var errs []error
	for _, srv := range rec.Servers {
		// A process of another boot is long gone; one whose start time
		// differs is another process that got the same id.
		if rec.Boot == bootID() && sameProcess(srv.PID, srv.Start) {
			if err := kill(srv.PID, srv.Group); err == nil {
				s.Servers++
				waitGone(srv.PID, srv.Start, 5*time.Second)
			}
		}
		if removable(srv.Dir, rec.TempDir) {
			if _, err := os.Stat(srv.Dir); err == nil {
				if err := os.RemoveAll(srv.Dir); err != nil {
					errs = append(errs, err)
				} else {
					s.Dirs++
					// A test's temporary directory holds little else: gone
					// too when empty (Remove refuses one that is not).
					if parent := filepath.Dir(srv.Dir); removable(parent, rec.TempDir) {
						os.Remove(parent)
					}
				}
			}
		}
	}
	prefixes := ownPrefixes(rec)
	if len(prefixes) == 0 {
		return s, errors.Join(errs...)
	}
	// clean runs remove on one server, unless the server did not answer
	// earlier in this sweep; one that does not answer now is noted.
	clean := func(server string, remove func() (int, error)) int {
		if err := down[server]; err != nil {
			errs = append(errs, err)
			return 0
		}
		n, err := remove()
		if err != nil {
			errs = append(errs, err)
			var unreachable *unreachableError
			if errors.As(err, &unreachable) {
				down[server] = err
			}
		}
		return n
	}
	for _, dsn := range rec.MySQL {
		s.Databases += clean("mysql "+dsn, func() (int, error) { return dropDatabases(ctx, dsn, prefixes) })
	}
	for _, addrs := range rec.Redis {
		s.Keys += clean("redis "+addrs, func() (int, error) { return deleteKeys(ctx, addrs, prefixes) })
	}
	return s, errors.Join(errs...)
}

// ownPrefixes are the record's prefixes that hold its id: a damaged or
// hand-written record never sweeps another run's names (or everything).
func ownPrefixes(rec Record) []string {
	var out []string
	for _, p := range rec.Prefixes {
		if len(rec.ID) == 8 && strings.HasSuffix(p, rec.ID+"_") {
			out = append(out, p)
		}
	}
	return out
}

// removable: a directory strictly under this process's temporary
// directory or under the run's (recorded when it registered).
func removable(dir, runTemp string) bool {
	if dir == "" || !filepath.IsAbs(dir) {
		return false
	}
	for _, tmp := range []string{os.TempDir(), runTemp} {
		if tmp == "" || !filepath.IsAbs(tmp) {
			continue
		}
		rel, err := filepath.Rel(tmp, filepath.Clean(dir))
		if err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// waitGone waits up to within for the process to end (a killed process
// that is not our child is reaped by init, or by its parent).
func waitGone(pid int, start uint64, within time.Duration) {
	deadline := time.Now().Add(within)
	for sameProcess(pid, start) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// dropDatabases drops the databases on the MySQL server dsn whose names
// start with one of prefixes.
func dropDatabases(ctx context.Context, dsn string, prefixes []string) (int, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return 0, err
	}
	cfg.DBName = ""
	cfg.Timeout = sweepDialTimeout
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, sweepServerTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
	if err != nil {
		return 0, &unreachableError{fmt.Errorf("MySQL at %s: %w", cfg.Addr, err)}
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return 0, err
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				names = append(names, name)
				break
			}
		}
	}
	rows.Close()
	dropped := 0
	for _, name := range names {
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			return dropped, fmt.Errorf("MySQL at %s: drop %s: %w", cfg.Addr, name, err)
		}
		dropped++
	}
	return dropped, nil
}

// RateKeyPrefix is what the rate limiter's library (redis_rate) writes
// before every key it keeps, a run's key prefix included: a run's keys
// also start with it followed by the run's prefix.
const RateKeyPrefix = "rate:"

// deleteKeys deletes the keys that start with one of prefixes, or with
// RateKeyPrefix and one of them, on the Redis server or cluster at addrs
// (a comma list), on every master.
func deleteKeys(ctx context.Context, addrs string, prefixes []string) (int, error) {
	for _, p := range prefixes {
		prefixes = append(prefixes, RateKeyPrefix+p)
	}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs: strings.Split(addrs, ","), DialTimeout: sweepDialTimeout, MaxRetries: 1,
	})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, sweepServerTimeout)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return 0, &unreachableError{fmt.Errorf("Redis at %s: %w", addrs, err)}
	}
	deleted := 0
	scan := func(ctx context.Context, c *redis.Client) error {
		for _, p := range prefixes {
			iter := c.Scan(ctx, 0, p+"*", 1000).Iterator()
			for iter.Next(ctx) {
				// One key at a time: the keys of a prefix may be in many
				// hash slots, and c is one node.
				n, err := c.Del(ctx, iter.Val()).Result()
				if err != nil {
					return err
				}
				deleted += int(n)
			}
			if err := iter.Err(); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		// One master at a time: deleted is not shared between goroutines.
		var mu sync.Mutex
		var masters []*redis.Client
		err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			masters = append(masters, m)
			return nil
		})
		for _, m := range masters {
			if err != nil {
				break
			}
			err = scan(ctx, m)
		}
	case *redis.Client:
		err = scan(ctx, c)
	}
	if err != nil {
		return deleted, fmt.Errorf("Redis at %s: %w", addrs, err)
	}
	return deleted, nil
}

// removeStaleTemp removes record files half-written by a process that
// died while writing (older than an hour: a write takes a moment).
func removeStaleTemp() {
	entries, _ := os.ReadDir(Dir())
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.Remove(filepath.Join(Dir(), e.Name()))
		}
	}
}

// unreachableError: the server did not answer at all.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string {
	return e.err.Error() + " (not answering: tried again at the next sweep)"
}
func (e *unreachableError) Unwrap() error { return e.err }
