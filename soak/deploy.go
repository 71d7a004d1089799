package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"feedservice/internal/serverproc"
	"feedservice/internal/testenv/testrun"
)

// deployment is what the soak runs on: a database, a private Redis and two
// instances of the server sharing them.
type deployment struct {
	dir       string
	adminDB   *sql.DB
	database  string
	redisCmd  *exec.Cmd
	redis     *redis.Client
	instances []*instance
	cleanups  []func()
}

// instance is one server process.
type instance struct {
	name       string
	url        string
	metricsURL string // its metrics listener (METRICS_ADDR)
	p          *serverproc.Process
	logf       *os.File
}

// instanceStopWait is how long an instance may take to exit on SIGTERM:
// the server's shutdownGrace and a margin.
const instanceStopWait = 30 * time.Second

func deploy(ctx context.Context, s settings) (*deployment, error) {
	d := &deployment{}
	ok := false
	defer func() {
		if !ok {
			d.teardown()
		}
	}()
	var err error
	if d.dir, err = os.MkdirTemp("", "soak-"); err != nil {
		return nil, err
	}
	d.cleanups = append(d.cleanups, func() { os.RemoveAll(d.dir) })
	// The run's record (internal/testenv/testrun): if this process is
	// killed before its teardown, the next test run's sweep removes the
	// directory, the database and the private Redis.
	run, err := testrun.Self()
	if err != nil {
		return nil, err
	}
	run.AddServer("soak directory", 0, false, d.dir)
	bin := filepath.Join(d.dir, "feedservice")
	var out bytes.Buffer
	if err := serverproc.Build(ctx, bin, &out); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, &out)
	}

	// A fresh database on the MariaDB server.
	cfg, err := mysql.ParseDSN(s.MySQLDSN)
	if err != nil {
		return nil, fmt.Errorf("SOAK_MYSQL_DSN: %w", err)
	}
	if d.adminDB, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
		return nil, err
	}
	run.UsesMySQL(cfg.FormatDSN())
	if d.database, err = run.Name("soak_"); err != nil {
		return nil, err
	}
	if _, err := d.adminDB.ExecContext(ctx, "CREATE DATABASE "+d.database+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		return nil, fmt.Errorf("MariaDB at %s: %w", cfg.Addr, err)
	}
	d.cleanups = append(d.cleanups, func() {
		d.adminDB.Exec("DROP DATABASE " + d.database)
		d.adminDB.Close()
	})
	cfg.DBName = d.database

	// A private Redis, set up as scripts/services.sh sets up the shared one.
	redisAddr, err := serverproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	_, redisPort, _ := net.SplitHostPort(redisAddr)
	d.redisCmd = exec.Command("redis-server", "--port", redisPort, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--zset-max-listpack-entries", "1024")
	testrun.DieWithParent(d.redisCmd, false)
	if err := d.redisCmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	run.AddServer("soak redis-server", d.redisCmd.Process.Pid, false, "")
	d.cleanups = append(d.cleanups, func() { d.redisCmd.Process.Kill(); d.redisCmd.Wait() })
	d.redis = redis.NewClient(&redis.Options{Addr: redisAddr})
	d.cleanups = append(d.cleanups, func() { d.redis.Close() })
	if err := waitFor(ctx, 10*time.Second, func() error { return d.redis.Ping(ctx).Err() }); err != nil {
		return nil, fmt.Errorf("private redis-server: %w", err)
	}

	env := []string{"MYSQL_DSN=" + cfg.FormatDSN(), "REDIS_ADDR=" + redisAddr, "KEY_PREFIX=" + randomName("soak") + ":",
		"TOKEN_SECRET=" + randomName("soak-secret-") + strings.Repeat("x", 32), "BCRYPT_COST=4",
		"INBOX_CAP=" + strconv.Itoa(s.InboxCap), "POST_CACHE_TTL=" + s.PostCacheTTL.String(), "GRAPHIQL=false",
		// Every soak user signs up from this one address: the per-IP budget
		// of signUp and logIn is for the public, not for a load generator.
		// The per-viewer mutation budget stays on (the mix keeps far below it).
		"AUTH_RATE=off",
		// Its request loops, too, all speak from this one address: the
		// per-address share of the operations in flight (4 by default) is
		// for the public.
		"MAX_OPERATIONS_PER_ADDRESS=128"}
	// The second starts after the first migrated the database.
	for _, name := range []string{"A", "B"} {
		in, err := startInstance(ctx, d.dir, bin, name, env)
		if err != nil {
			return nil, err
		}
		d.instances = append(d.instances, in)
	}
	ok = true
	return d, nil
}

func startInstance(ctx context.Context, dir, bin, name string, env []string) (*instance, error) {
	logf, err := os.Create(filepath.Join(dir, "instance-"+name+".log"))
	if err != nil {
		return nil, err
	}
	metricsAddr, err := serverproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := serverproc.Start(ctx, serverproc.Options{
		Bin: bin, Env: append(env, "METRICS_ADDR="+metricsAddr), DataDir: filepath.Join(dir, "data-"+name), Log: logf, Ready: 30 * time.Second,
	})
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("instance %s: %w (log %s)", name, err, logf.Name())
	}
	return &instance{name: name, url: p.URL, metricsURL: "http://" + metricsAddr, p: p, logf: logf}, nil
}

// stopInstances sends each instance SIGTERM; each must exit 0 in time.
func (d *deployment) stopInstances() error {
	var errs []error
	for _, in := range d.instances {
		in.p.Signal(syscall.SIGTERM)
	}
	for _, in := range d.instances {
		select {
		case <-in.p.Exited():
			if err := in.p.Err(); err != nil {
				errs = append(errs, fmt.Errorf("instance %s exited with %v on SIGTERM", in.name, err))
			}
		case <-time.After(instanceStopWait):
			in.p.Kill()
			errs = append(errs, fmt.Errorf("instance %s still running %s after SIGTERM", in.name, instanceStopWait))
		}
		in.logf.Close()
	}
	d.instances = nil
	return errors.Join(errs...)
}

// teardown stops what deploy started, in reverse order; the logs of the
// instances are printed when they are kept (SOAK_KEEP_LOGS=1).
func (d *deployment) teardown() {
	for _, in := range d.instances {
		in.p.Kill()
	}
	for _, in := range d.instances {
		in.logf.Close()
	}
	if os.Getenv("SOAK_KEEP_LOGS") == "1" {
		fmt.Println("soak: instance logs kept in", d.dir)
		d.cleanups = d.cleanups[1:]
	}
	for i := len(d.cleanups) - 1; i >= 0; i-- {
		d.cleanups[i]()
	}
}

// scrape reads the gauges names from an instance's /metrics.
func (in *instance) scrape(ctx context.Context, names ...string) (map[string]float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.metricsURL+"/metrics", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(res.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, n := range names {
			if rest, ok := strings.CutPrefix(line, n+" "); ok {
				if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
					out[n] = v
				}
			}
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("/metrics of instance %s has no %s", in.name, n)
		}
	}
	return out, sc.Err()
}

// redisMemory is Redis's used_memory, and the part of it the fan-out
// stream takes and its length (trimmed to the entries in flight, so watched
// apart).
func (d *deployment) redisMemory(ctx context.Context) (used, stream, streamLen int64, err error) {
	info, err := d.redis.Info(ctx, "memory").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			used, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	iter := d.redis.ScanType(ctx, 0, "*", 1000, "stream").Iterator()
	for iter.Next(ctx) {
		n, _ := d.redis.MemoryUsage(ctx, iter.Val(), 0).Result() // 0: every entry, not a sample
		stream += n
		l, _ := d.redis.XLen(ctx, iter.Val()).Result()
		streamLen += l
	}
	if err := iter.Err(); err != nil {
		return 0, 0, 0, err
	}
	return used, stream, streamLen, nil
}

// waitFor retries f until it succeeds or within passes.
func waitFor(ctx context.Context, within time.Duration, f func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
