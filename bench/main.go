// Command bench is the end-to-end benchmark of the feed service: it builds a
// synthetic social graph in MariaDB, starts a real server process in each
// feed mode (pull, push, hybrid) against MariaDB and Redis, drives the
// GraphQL endpoint over HTTP and websockets, measures the floors (raw Redis,
// pipelined ZADD, the plain SQL pull query) on the same box, and prints one
// table, writes bench/results/latest.json and plots.
//
//	go run ./bench                       # default graph (50,000 users)
//	go run ./bench -quick                # a smoke run under 2 minutes; exits 1 if a check fails
//	go run ./bench -runs 5               # medians of 5 runs of the measured workloads (default 3; 1 with -quick)
//	go run ./bench -users 20000          # scale the graph
//	go run ./bench -compare old.json new.json
//
// It needs MariaDB on 127.0.0.1:3306 (root, no password) and Redis on
// 127.0.0.1:6379, as `make test` starts them. It creates and drops the
// database `feedbench`, and uses Redis keys under `feedbench:` only.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"feedservice/internal/serverproc"
)

type options struct {
	quick       bool
	users       int
	modes       []string
	dsn, db     string
	redis       string
	prefixBase  string
	out         string
	serverBin   string
	noBuild     bool
	keep        bool
	reuse       bool
	dsnParams   string
	seed        uint64
	active      float64
	dur         time.Duration
	mixedDur    time.Duration
	sockets     []int
	runs        int
	fanoutPosts int
	celebPosts  int
	redDotPosts int
	// redDotPostsFlag is -red-dot-posts: redDotPosts when set.
	redDotPostsFlag int
	probeReads      int
	meanPosts       float64
	bufferPool      string
	noPlots         bool
	compare         bool
	only            string   // "targets": only the workloads of the warm-read targets
	workloads       []string // the numbers of the workloads to run; all when empty
	serverFlags     []string // extra flags of the server under test
	goBench         string   // a `go test -bench` output with the engine and raw Redis pages
}

// targetsOnly says whether the run measures only the warm-read targets.
func (o *options) targetsOnly() bool { return o.only == "targets" }

var t0 = time.Now()

func logf(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	o, f := parseFlags()
	if f.broadcasterAddr != "" {
		if err := runBroadcaster(f.broadcasterAddr, o.redis, f.broadcasterChannel); err != nil {
			fmt.Fprintln(os.Stderr, "broadcaster:", err)
			os.Exit(1)
		}
		return
	}
	if code, ran := runCommand(o, f); ran {
		if code != 0 {
			os.Exit(code)
		}
		return
	}
	if err := o.complete(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := raiseOpenFileLimit(uint64(slices.Max(o.sockets)) + 2000); err != nil {
		logf("warning: %v; the red-dot workload may run out of file descriptors", err)
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fmt.Fprintln(os.Stderr, "run from the module root (where go.mod is): go run ./bench")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, o)
	if code := finish(res, o, err); code != 0 {
		os.Exit(code)
	}
}

// cliFlags are the flags read into the options only once it is known that
// the run is a benchmark (not one of runCommand's commands), with the
// defaults that depend on -quick.
type cliFlags struct {
	modes   string
	users   int
	sockets string
	docs    string
	replot  string
	// The bare broadcaster (broadcaster.go): the benchmark starts itself
	// with these to run it.
	broadcasterAddr, broadcasterChannel string
}

// parseFlags declares every flag and parses the command line.
func parseFlags() (*options, *cliFlags) {
	o := &options{}
	f := &cliFlags{}
	flag.BoolVar(&o.quick, "quick", false, "small graph and short runs (< 2 min); exits non-zero if a correctness check fails")
	flag.IntVar(&f.users, "users", 0, "users in the graph (default 50,000; 2,000 with -quick)")
	flag.StringVar(&f.modes, "modes", "pull,push,hybrid", "feed modes to run, in order")
	flag.StringVar(&o.dsn, "mysql", "root@tcp(127.0.0.1:3306)/", "MySQL DSN without the database name")
	flag.StringVar(&o.db, "db", "feedbench", "database to create, load and drop; also the prefix of the Redis keys (<db>:)")
	flag.StringVar(&o.redis, "redis", "127.0.0.1:6379", "Redis address")
	flag.StringVar(&o.out, "out", "", "directory of latest.json and the plots (default bench/results; bench/results/quick with -quick)")
	flag.StringVar(&o.serverBin, "server-bin", "/tmp/feedbench-server", "where to build the server")
	flag.BoolVar(&o.noBuild, "no-build", false, "use -server-bin as it is")
	flag.BoolVar(&o.keep, "keep", false, "keep the database at the end")
	flag.BoolVar(&o.reuse, "reuse", false, "keep the database, and reuse it next time if it holds the same graph (skips the load)")
	flag.Uint64Var(&o.seed, "seed", 1, "graph seed")
	flag.Float64Var(&o.active, "active", 0, "share of users who are active readers, whose inboxes are warmed (default 0.1; 0.15 with -quick)")
	flag.DurationVar(&o.dur, "duration", 0, "length of each throughput run (default 10s; 1.5s with -quick)")
	flag.DurationVar(&o.mixedDur, "mixed-duration", 0, "length of the mixed workload (default 30s; 3s with -quick)")
	flag.StringVar(&f.sockets, "sockets", "", "open websockets of the red-dot workload, one run per count (default 1000,10000; 100,400 with -quick)")
	flag.IntVar(&o.runs, "runs", 0, "runs of the measured workloads per mode, reported as medians (default 3; 1 with -quick)")
	flag.Float64Var(&o.meanPosts, "posts-per-user", 20, "mean posts per user")
	flag.StringVar(&o.bufferPool, "innodb-buffer-pool", "", "if set (e.g. 2G), SET GLOBAL innodb_buffer_pool_size for the run and restore it after")
	flag.StringVar(&o.dsnParams, "server-dsn-params", "", "extra parameters of the server's MySQL DSN, e.g. interpolateParams=true")
	flag.BoolVar(&o.noPlots, "no-plots", false, "skip the plots")
	flag.BoolVar(&o.compare, "compare", false, "compare two result files: -compare old.json new.json")
	flag.StringVar(&f.docs, "docs", "", "rewrite the README's and docs/performance.md's generated tables from a result file (bench/results/latest.json) and exit")
	flag.StringVar(&f.replot, "replot", "", "redraw the plots of a result file (into its directory) and exit")
	flag.StringVar(&o.only, "only", "", "run only a part: targets (the workloads of the warm-read targets, 11-16 minutes on the default graph; results in bench/results/targets), "+
		"or gobench (print the engine page against the raw Redis page from -gobench, and exit)")
	flag.StringVar(&o.goBench, "gobench", "", "a `go test -bench` output file with BenchmarkFeedPage and BenchmarkRedisPage (make bench-feedpage writes /tmp/feedpage-bench.txt): adds the engine-page targets and the page with blocks and mutes against the page without them")
	workloads := flag.String("workloads", "", "run only these workloads, by number (e.g. 7 for the red dots; 1,4,7); the warm reads always run")
	redDotPosts := flag.Int("red-dot-posts", 0, "how many times the red-dot workload's author posts (0: 5, or 2 with -quick); more, to profile the server while it delivers")
	serverFlags := flag.String("server-flags", "", "extra flags of the server under test, space-separated (e.g. '-metrics-addr=127.0.0.1:6060 -metrics-pprof' to profile it)")
	flag.StringVar(&f.broadcasterAddr, "broadcaster-addr", "", "run only the red dot's bare broadcaster on this address (the benchmark starts itself so)")
	flag.StringVar(&f.broadcasterChannel, "broadcaster-channel", "", "the bare broadcaster's Redis channel")
	flag.Parse()
	o.workloads = strings.FieldsFunc(*workloads, func(r rune) bool { return r == ',' || r == ' ' })
	o.serverFlags = strings.Fields(*serverFlags)
	o.redDotPostsFlag = *redDotPosts
	return o, f
}

// runCommand runs the commands that work on files rather than measure
// (-only gobench, -replot, -docs, -compare), and rejects an unknown -only.
// It says whether it ran one and the exit code.
func runCommand(o *options, f *cliFlags) (code int, ran bool) {
	switch o.only {
	case "", "targets":
	case "gobench":
		if o.goBench == "" {
			fmt.Fprintln(os.Stderr, "-only gobench needs -gobench FILE")
			return 2, true
		}
		return errCode(printGoBench(o.goBench), ""), true
	default:
		fmt.Fprintf(os.Stderr, "-only: %q is not targets or gobench\n", o.only)
		return 2, true
	}
	switch {
	case f.replot != "":
		files, err := replotFile(f.replot)
		if err == nil {
			fmt.Println("wrote", strings.Join(files, ", "))
		}
		return errCode(err, ""), true
	case f.docs != "":
		files, err := writeDocs(".", f.docs)
		if err == nil {
			fmt.Printf("tables from %s: rewrote %d file(s) %s\n", f.docs, len(files), strings.Join(files, ", "))
		}
		return errCode(err, "-docs: "), true
	case o.compare:
		if flag.NArg() != 2 {
			fmt.Fprintln(os.Stderr, "usage: go run ./bench -compare old.json new.json")
			return 2, true
		}
		return errCode(compareFiles(flag.Arg(0), flag.Arg(1)), ""), true
	}
	return 0, false
}

// errCode prints err (after prefix) and says 1, or says 0 when err is nil.
func errCode(err error, prefix string) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, prefix+err.Error())
	return 1
}

// complete reads the rest of the flags into o and fills in the defaults
// that -quick changes.
func (o *options) complete(f *cliFlags) error {
	o.users = f.users
	o.applyQuickDefaults()
	sockets := f.sockets
	if sockets == "" {
		sockets = "1000,10000"
		if o.quick {
			sockets = "100,400"
		}
	}
	for _, s := range strings.Split(sockets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-sockets: %q is not a list of counts like 1000,10000", sockets)
		}
		o.sockets = append(o.sockets, n)
	}
	o.modes = strings.Split(f.modes, ",")
	// The Redis keys are named after the database, so that a run with its
	// own -db (and -server-bin) does not delete another run's keys.
	o.prefixBase = o.db + ":"
	return nil
}

// applyQuickDefaults sets each option left at zero to its default, the
// smaller one with -quick.
func (o *options) applyQuickDefaults() {
	if o.out == "" {
		o.out = "bench/results"
		if o.targetsOnly() {
			o.out = "bench/results/targets"
		}
		if o.quick {
			o.out = "bench/results/quick"
		}
	}
	if o.users == 0 {
		o.users = 50000
		if o.quick {
			o.users = 2000
		}
	}
	def := func(d *time.Duration, full, quick time.Duration) {
		if *d == 0 {
			*d = full
			if o.quick {
				*d = quick
			}
		}
	}
	def(&o.dur, 10*time.Second, 1200*time.Millisecond)
	def(&o.mixedDur, 30*time.Second, 2500*time.Millisecond)
	if o.active == 0 {
		o.active = 0.1
		if o.quick {
			o.active = 0.15
		}
	}
	if o.runs == 0 {
		o.runs = 3
		if o.quick {
			o.runs = 1
		}
	}
	o.fanoutPosts, o.celebPosts, o.redDotPosts, o.probeReads = 5, 4, 5, 100
	if o.quick {
		o.fanoutPosts, o.celebPosts, o.redDotPosts, o.probeReads = 2, 1, 2, 25
	}
	if o.redDotPostsFlag > 0 {
		o.redDotPosts = o.redDotPostsFlag
	}
}

// finish reports the run (when it got far enough to have a result) and
// says the exit code: 1 when it failed or a correctness check did.
func finish(res *Result, o *options, err error) int {
	if res != nil {
		if err != nil {
			res.Error = err.Error()
		}
		report(res, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if failed := res.failedChecks(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d correctness check(s) failed:\n", len(failed))
		for _, c := range failed {
			fmt.Fprintf(os.Stderr, "  FAIL %s (%s): %s\n", c.Name, c.Mode, c.Detail)
		}
		return 1
	}
	logf("done in %.1fs; all %d checks passed", time.Since(t0).Seconds(), len(res.Checks))
	return 0
}

// env is what the workloads share.
type env struct {
	o        *options
	g        *graph
	db       *sql.DB
	rdb      *redis.Client
	res      *Result
	tokens   map[int]string // user index -> bearer token
	active   []int          // active reader indexes
	isActive map[int]bool
	// listsMade says the active readers' lists are in MySQL (makeLists).
	listsMade bool
	mu        sync.Mutex
}

func (e *env) check(mode, name string, ok bool, detail string, args ...any) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := Check{Mode: mode, Name: name, OK: ok}
	if !ok {
		c.Detail = fmt.Sprintf(detail, args...)
		logf("  CHECK FAILED %s: %s", name, c.Detail)
	}
	e.res.Checks = append(e.res.Checks, c)
	return ok
}

// run measures: it builds the server, opens the stores, generates the graph
// and loads it (or reuses the loaded one), then measures the floors and each
// mode. The returned result holds what was measured even when err is set.
func run(ctx context.Context, o *options) (*Result, error) {
	res, err := newResult(o)
	if err != nil {
		return res, err
	}
	if err := buildServer(ctx, o); err != nil {
		return res, err
	}
	admin, err := sql.Open("mysql", o.dsn+"?multiStatements=true")
	if err != nil {
		return res, err
	}
	defer admin.Close()
	if o.bufferPool != "" {
		restore, err := setBufferPool(admin, o.bufferPool, res)
		if err != nil {
			return res, err
		}
		defer restore()
	}
	db, err := openBenchDB(o)
	if err != nil {
		return res, err
	}
	defer db.Close()
	rdb, err := openRedis(ctx, o)
	if err != nil {
		return res, err
	}
	defer rdb.Close()
	deleteKeys(ctx, rdb, o.prefixBase+"*") // leftovers of an interrupted run
	defer deleteKeys(context.WithoutCancel(ctx), rdb, o.prefixBase+"*")

	p, reused := graphToRun(ctx, o, db)
	if !o.keep && !o.reuse {
		defer admin.Exec("DROP DATABASE IF EXISTS " + o.db)
	}
	g := generate(p, logf)
	res.Graph = p
	res.GraphStats = g.stats()
	logf("graph: %v", res.GraphStats)
	e := &env{o: o, g: g, db: db, rdb: rdb, res: res, tokens: map[int]string{}, isActive: map[int]bool{}}
	if err := e.prepareDatabase(ctx, admin, reused); err != nil {
		return res, err
	}
	e.pickActive()
	return res, e.measure(ctx)
}

// newResult starts the run's result: what it runs, on which machine, and
// the Go benchmarks of -gobench.
func newResult(o *options) (*Result, error) {
	res := &Result{StartedAt: time.Now().UTC(), Commit: sourceCommit(), Quick: o.quick, Only: o.only, Runs: o.runs, Sockets: o.sockets, Modes: map[string]*ModeResult{}}
	if o.goBench != "" {
		g, err := readGoBench(o.goBench)
		if err != nil {
			return res, fmt.Errorf("-gobench: %w", err)
		}
		res.GoBench = g
	}
	res.Machine = describeMachine(o)
	logf("bench: %d users, modes %s, machine: %d cores, %.1f GiB, MariaDB %s, Redis %s, load average %s", o.users, strings.Join(o.modes, ","),
		res.Machine.NProc, res.Machine.MemGiB, res.Machine.MariaDB, res.Machine.Redis, res.Machine.LoadAvgAtStart)
	return res, nil
}

// buildServer builds the server under test to -server-bin, unless
// -no-build.
func buildServer(ctx context.Context, o *options) error {
	if o.noBuild {
		return nil
	}
	logf("building the server: go build -o %s %s", o.serverBin, serverproc.Package)
	return serverproc.Build(ctx, o.serverBin, os.Stdout)
}

// setBufferPool sets InnoDB's buffer pool to size for the run (-innodb-buffer-pool)
// and returns how to restore it.
func setBufferPool(admin *sql.DB, size string, res *Result) (restore func(), err error) {
	var old string
	admin.QueryRow("SELECT @@innodb_buffer_pool_size").Scan(&old)
	n, err := parseSize(size)
	if err != nil {
		return nil, err
	}
	if _, err := admin.Exec(fmt.Sprintf("SET GLOBAL innodb_buffer_pool_size = %d", n)); err != nil {
		return nil, fmt.Errorf("set buffer pool: %w", err)
	}
	logf("innodb_buffer_pool_size set to %s (was %s bytes); restored at the end", size, old)
	res.Machine.InnoDBBufferPoolMiB = n >> 20
	return func() { admin.Exec("SET GLOBAL innodb_buffer_pool_size = " + old) }, nil
}

// openBenchDB opens the benchmark's database (-db), with room for the
// workloads' clients.
func openBenchDB(o *options) (*sql.DB, error) {
	db, err := sql.Open("mysql", o.dsn+o.db+"?parseTime=true&loc=UTC&charset=utf8mb4&maxAllowedPacket=0")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	return db, nil
}

// openRedis opens Redis, with room for the workloads' clients, and checks
// that it answers.
func openRedis(ctx context.Context, o *options) (*redis.Client, error) {
	rdb := redis.NewClient(&redis.Options{Addr: o.redis, PoolSize: 64})
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return rdb, nil
}

// graphToRun says which graph the run measures: the one of the options, or
// with -reuse the loaded one when it is the same graph (its params, with
// its own "now", are kept in the database).
func graphToRun(ctx context.Context, o *options, db *sql.DB) (p graphParams, reused bool) {
	p = defaultGraphParams(o.users, o.quick, o.seed)
	p.MeanPosts = o.meanPosts
	if o.reuse {
		if old, ok := loadedParams(ctx, db); ok && sameGraph(old, p) {
			return old, true
		}
	}
	return p, false
}

// prepareDatabase makes the database hold the graph: a reused one is reset
// to it (and loaded again if it does not match); otherwise the database is
// created, migrated by the server and loaded.
func (e *env) prepareDatabase(ctx context.Context, admin *sql.DB, reused bool) error {
	if reused {
		logf("reusing the loaded database %s (-reuse): resetting what a previous run left", e.o.db)
		if err := e.resetSQL(ctx, "reuse"); err != nil {
			return err
		}
		if e.res.failedChecks() == nil {
			return nil
		}
		logf("the database does not match the graph: loading it again")
		e.res.Checks = nil
	}
	return e.loadDatabase(ctx, admin)
}

// loadDatabase creates the database afresh, has the server migrate it,
// loads the graph, and keeps the graph's params for a later -reuse.
func (e *env) loadDatabase(ctx context.Context, admin *sql.DB) error {
	o, db := e.o, e.db
	if _, err := admin.Exec("DROP DATABASE IF EXISTS " + o.db + "; CREATE DATABASE " + o.db + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	db.SetMaxIdleConns(0) // forget connections to the dropped database
	db.SetMaxIdleConns(16)
	if err := migrate(o, e.g); err != nil {
		return err
	}
	loadStart := time.Now()
	if err := e.g.load(ctx, db, logf); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	e.res.LoadSeconds = time.Since(loadStart).Seconds()
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE users, followings, followers, posts"); err != nil {
		logf("analyze: %v", err)
	}
	return saveParams(ctx, db, e.g.P)
}

// measure measures the floors, each mode in turn, and the floors again:
// the box is shared, so the ratios use the mean of both.
func (e *env) measure(ctx context.Context) error {
	if e.o.targetsOnly() {
		logf("floor: raw Redis page read (-only targets: the other floors are not measured)")
	} else {
		logf("floors: raw Redis page read, pipelined ZADD, plain SQL pull query")
	}
	e.res.Floors = e.floors(ctx)
	for _, mode := range e.o.modes {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		mr, err := e.runMode(ctx, mode)
		if mr != nil {
			e.res.Modes[mode] = mr
		}
		if err != nil {
			return fmt.Errorf("mode %s: %w", mode, err)
		}
	}
	if len(e.o.workloads) == 0 || e.o.targetsOnly() {
		logf("[peer] the peer-shaped workload")
		peer, err := e.runPeer(ctx)
		e.res.Peer = peer
		if err != nil {
			return fmt.Errorf("peer-shaped workload: %w", err)
		}
	}
	logf("floors again, after the modes")
	end := e.floors(ctx)
	e.res.FloorsEnd = &end
	e.res.Seconds = time.Since(t0).Seconds()
	return nil
}

// raiseOpenFileLimit raises this process's soft limit of open files to its
// hard limit. Set explicitly (not only by the Go runtime, which undoes its
// own raise for children), the limit is inherited by the server process, so
// both ends of 10,000 websockets fit.
func raiseOpenFileLimit(need uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("setrlimit: %w", err)
	}
	if l.Cur < need {
		return fmt.Errorf("open-file limit is %d, under %d", l.Cur, need)
	}
	return nil
}

func parseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	shift := 0
	switch {
	case strings.HasSuffix(u, "G"):
		shift, u = 30, strings.TrimSuffix(u, "G")
	case strings.HasSuffix(u, "M"):
		shift, u = 20, strings.TrimSuffix(u, "M")
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q (like 2G or 512M)", s)
	}
	return n << shift, nil
}

// deleteKeys removes every key matching pattern.
func deleteKeys(ctx context.Context, rdb *redis.Client, pattern string) int {
	n := 0
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			rdb.Unlink(ctx, batch...)
			n += len(batch)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		rdb.Unlink(ctx, batch...)
		n += len(batch)
	}
	return n
}

func outPath(o *options, name string) string { return filepath.Join(o.out, name) }

// The graph's params are kept in the database, so that -reuse can tell
// whether it holds the graph a run asks for.
func saveParams(ctx context.Context, db *sql.DB, p graphParams) error {
	b, _ := json.Marshal(p)
	_, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS feedbench_meta (params TEXT NOT NULL)")
	if err == nil {
		_, err = db.ExecContext(ctx, "DELETE FROM feedbench_meta")
	}
	if err == nil {
		_, err = db.ExecContext(ctx, "INSERT INTO feedbench_meta (params) VALUES (?)", string(b))
	}
	return err
}

func loadedParams(ctx context.Context, db *sql.DB) (graphParams, bool) {
	var raw string
	var p graphParams
	if err := db.QueryRowContext(ctx, "SELECT params FROM feedbench_meta").Scan(&raw); err != nil {
		return p, false
	}
	return p, json.Unmarshal([]byte(raw), &p) == nil
}

func sameGraph(a, b graphParams) bool {
	a.BaseUnixMs, b.BaseUnixMs = 0, 0
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
