// Command jumps measures page jumps on followers lists (make bench-jumps):
// page 1 against page 40,000 of 25 for an account with 1,000,000
// followers, read from the list's copy in Redis (above
// JumpCacheFollowers), and the same through MySQL's offset index alone,
// for a list under the threshold and for the million. It loads its own
// database (feedbench_jumps, dropped at the end unless -keep) with
// multi-row INSERTs, uses Redis keys under feedbench_jumps: only (deleted
// at the end), prints the table and writes docs/jumps.png.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"image/color"
	"io"
	"log"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"feedservice/feed"
	"feedservice/feed/config"
	"feedservice/feed/paging"
	"feedservice/models"
	"feedservice/store"
)

// The accounts of the workload: the star's list is served from Redis, the
// small one's from MySQL; idMillion holds a second million-row list that
// only MySQL serves (its user row claims fewer followers than the
// threshold), to show the offset index at depth.
const (
	starID    = 1
	smallID   = 2
	mysqlBig  = 3
	firstFan  = 1_000
	rowsPerIn = 2_000
	rowsPerTx = 100_000
)

type options struct {
	dsn, db, redis, plot string
	million, small       int
	requests             int
	keep, mysqlMillion   bool
}

type row struct {
	name        string
	offset      int
	p50, p99    time.Duration
	perSecond   float64
	listEntries int
}

func main() {
	var o options
	flag.StringVar(&o.dsn, "mysql", "root@tcp(127.0.0.1:3306)/", "MySQL DSN without the database name")
	flag.StringVar(&o.db, "db", "feedbench_jumps", "database to create, load and drop; also the prefix of the Redis keys (<db>:)")
	flag.StringVar(&o.redis, "redis", "127.0.0.1:6379", "Redis address")
	flag.StringVar(&o.plot, "plot", "docs/jumps.png", "where to write the plot (empty: none)")
	flag.IntVar(&o.million, "followers", 1_000_000, "followers of the big account")
	flag.IntVar(&o.small, "small", 9_000, "followers of the account under the threshold")
	flag.IntVar(&o.requests, "requests", 2_000, "jumps measured per row, one at a time")
	flag.BoolVar(&o.keep, "keep", false, "keep the database and the Redis keys at the end")
	flag.BoolVar(&o.mysqlMillion, "mysql-million", false, "also load a second list of -followers rows and jump in it through MySQL's offset index alone (doubles the load)")
	flag.Parse()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	ctx := context.Background()
	admin, err := sql.Open("mysql", o.dsn)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+o.db); err != nil {
		return err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+o.db); err != nil {
		return err
	}
	if !o.keep {
		defer admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+o.db)
	}
	st, err := store.Open(ctx, store.Config{MySQLDSN: o.dsn + o.db})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	db, err := sql.Open("mysql", o.dsn+o.db)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := load(ctx, db, starID, o.million); err != nil {
		return err
	}
	if o.mysqlMillion {
		if err := load(ctx, db, mysqlBig, o.million); err != nil {
			return err
		}
	}
	if err := load(ctx, db, smallID, o.small); err != nil {
		return err
	}
	fmt.Printf("loaded the follower rows in %s\n", time.Since(start).Round(time.Second))

	rdb := redis.NewClient(&redis.Options{Addr: o.redis})
	defer rdb.Close()
	prefix := o.db + ":"
	if !o.keep {
		defer deleteKeys(context.Background(), rdb, prefix)
	}
	cfg := config.Config{KeyPrefix: prefix, TokenSecret: []byte(strings.Repeat("b", 32)), NodeID: 1, Mode: config.ModeHybrid}
	engine, err := feed.New(ctx, cfg, st, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	star := &models.User{ID: starID, FollowerCount: o.million}
	small := &models.User{ID: smallID, FollowerCount: o.small}
	// Claims a short list so that MySQL's offset index answers: the count
	// only picks the path, the index counts the rows itself.
	big := &models.User{ID: mysqlBig, FollowerCount: config.DefaultJumpCacheFollowers - 1}

	const size = 25
	deep := o.million - size    // page 40,000 of 25 for a million: the last one
	smallDeep := o.small - size // the small list's last page
	warms := []struct {
		name string
		user *models.User
	}{{"copy of the big list in Redis", star}, {"offset index of the small list", small}}
	if o.mysqlMillion {
		warms = append(warms, warms[0])
		warms[len(warms)-1].name, warms[len(warms)-1].user = "offset index of the big list", big
	}
	for _, warm := range warms {
		t := time.Now()
		if _, err := engine.FollowersAt(ctx, warm.user, paging.JumpArgs{Offset: 0, First: ptr(size)}); err != nil {
			return err
		}
		if _, err := engine.FollowersAt(ctx, warm.user, paging.JumpArgs{Offset: 5_000, First: ptr(size)}); err != nil {
			return err
		}
		fmt.Printf("built the %s in %s\n", warm.name, time.Since(t).Round(time.Millisecond))
	}
	cases := []struct {
		name   string
		user   *models.User
		offset int
	}{
		{fmt.Sprintf("%d followers, Redis copy, page 1", o.million), star, 0},
		{fmt.Sprintf("%d followers, Redis copy, page %d", o.million, o.million/size), star, deep},
		{fmt.Sprintf("%d followers, MySQL offset index, page 1", o.small), small, 0},
		{fmt.Sprintf("%d followers, MySQL offset index, page %d", o.small, o.small/size), small, smallDeep},
	}
	if o.mysqlMillion {
		cases = append(cases, cases[0], cases[1])
		cases[4].name, cases[4].user = fmt.Sprintf("%d followers, MySQL offset index, page 1", o.million), big
		cases[5].name, cases[5].user = fmt.Sprintf("%d followers, MySQL offset index, page %d", o.million, o.million/size), big
	}
	var rows []row
	for _, c := range cases {
		r, err := measure(ctx, engine, c.user, c.offset, size, o.requests)
		if err != nil {
			return err
		}
		r.name = c.name
		rows = append(rows, r)
		fmt.Printf("  %-55s p50 %8s  p99 %8s  %6.0f/s\n", r.name, r.p50, r.p99, r.perSecond)
	}
	fmt.Println()
	fmt.Println("| jump (pages of 25, one client) | p50 | p99 | jumps/s |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %.0f |\n", r.name, ms(r.p50), ms(r.p99), r.perSecond)
	}
	fmt.Println()
	for i := 0; i+1 < len(rows); i += 2 {
		ratio := float64(rows[i+1].p99) / float64(rows[i].p99)
		verdict := "met"
		if ratio > 2 {
			verdict = "missed"
		}
		fmt.Printf("%s: deep p99 / first p99 = %.2f (bound 2): %s\n", strings.TrimSuffix(rows[i].name, ", page 1"), ratio, verdict)
	}
	if o.plot != "" {
		if err := plotRows(rows, o.plot); err != nil {
			return err
		}
		fmt.Println("plot:", o.plot)
	}
	return nil
}

// load writes n followers of user (ids firstFan.., follow ids in the same
// order) and the user's row, in multi-row INSERTs, showing progress.
func load(ctx context.Context, db *sql.DB, user int64, n int) error {
	now := time.Now().UTC().Format("2006-01-02 15:04:05.000")
	if _, err := db.ExecContext(ctx, "INSERT INTO users (id, username, username_key, display_name, bio, password_hash, created_at, last_active_at, follower_count) VALUES (?, ?, ?, '', '', '', ?, ?, ?)",
		user, fmt.Sprintf("star%d", user), fmt.Sprintf("star%d", user), now, now, n); err != nil {
		return err
	}
	// One commit per rowsPerTx rows, not per statement: the log flush of
	// each commit, not the rows, bounds a load of single-statement commits.
	var b strings.Builder
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { tx.Rollback() }()
	for from := 0; from < n; from += rowsPerIn {
		b.Reset()
		b.WriteString("INSERT INTO followers (user_id, follower_id, id, created_at) VALUES ")
		for i := from; i < min(from+rowsPerIn, n); i++ {
			if i > from {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,%d,%d,'%s')", user, firstFan+i, user<<40+int64(i)+1, now)
		}
		if _, err := tx.ExecContext(ctx, b.String()); err != nil {
			return err
		}
		if done := min(from+rowsPerIn, n); done%rowsPerTx == 0 || done == n {
			if err := tx.Commit(); err != nil {
				return err
			}
			if tx, err = db.BeginTx(ctx, nil); err != nil {
				return err
			}
			fmt.Printf("  user %d: %d of %d followers loaded\n", user, done, n)
		}
	}
	return tx.Commit()
}

// measure runs requests jumps to offset one at a time and checks each
// returns a full page.
func measure(ctx context.Context, e *feed.Engine, user *models.User, offset, size, requests int) (row, error) {
	lat := make([]time.Duration, requests)
	start := time.Now()
	for i := range requests {
		t := time.Now()
		conn, err := e.FollowersAt(ctx, user, paging.JumpArgs{Offset: offset, First: &size})
		if err != nil {
			return row{}, err
		}
		lat[i] = time.Since(t)
		if len(conn.Edges) != size {
			return row{}, fmt.Errorf("user %d offset %d: %d entries, want %d", user.ID, offset, len(conn.Edges), size)
		}
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	return row{offset: offset, p50: lat[requests/2], p99: lat[int(math.Ceil(float64(requests)*0.99))-1], perSecond: float64(requests) / elapsed.Seconds()}, nil
}

// deleteKeys deletes the Redis keys under prefix.
func deleteKeys(ctx context.Context, rdb *redis.Client, prefix string) {
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rdb.Unlink(ctx, iter.Val())
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func ptr[T any](v T) *T { return &v }

// plotRows draws p50 and p99 of each row as bars, first and deep page side by side.
func plotRows(rows []row, path string) error {
	p := plot.New()
	p.Title.Text = "Page jumps: page 1 vs the last page (25 per page), one client"
	p.Y.Label.Text = "latency (ms)"
	var p50, p99 plotter.Values
	var names []string
	for _, r := range rows {
		p50 = append(p50, float64(r.p50.Microseconds())/1000)
		p99 = append(p99, float64(r.p99.Microseconds())/1000)
		name := strings.ReplaceAll(r.name, " followers, ", "\n")
		names = append(names, strings.ReplaceAll(name, ", page", "\npage"))
	}
	w := vg.Points(14)
	b50, err := plotter.NewBarChart(p50, w)
	if err != nil {
		return err
	}
	b99, err := plotter.NewBarChart(p99, w)
	if err != nil {
		return err
	}
	b50.Offset, b99.Offset = -w/2, w/2
	b50.Color = color.Gray{Y: 60}
	b99.Color = color.Gray{Y: 170}
	p.Add(b50, b99)
	p.Legend.Add("p50", b50)
	p.Legend.Add("p99", b99)
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Font.Size = vg.Points(7)
	if err := os.MkdirAll(dirOf(path), 0o755); err != nil {
		return err
	}
	return p.Save(10*vg.Inch, 4.5*vg.Inch, path)
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return "."
}
