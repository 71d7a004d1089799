// Command soak runs a mixed workload against two server instances for a
// while and watches them: request errors, p99 latency per operation, and
// the goroutines and RSS of each instance and Redis's memory, per interval.
// It fails (exit 1) on any request error, on a live subscription that
// breaks, or when a watched series grows without bound (see growsUnbounded).
//
//	go run ./soak                                  10 minutes, a row per minute
//	SOAK_DURATION=30s SOAK_INTERVAL=6s go run ./soak    the test command's run (with fewer users)
//	SOAK_OUT=docs/soak go run ./soak               the rows also as soak.csv and soak.png there
//
// The instances are the feedservice binary, built from this checkout, on the
// MariaDB of SOAK_MYSQL_DSN (a fresh database, dropped at the end) and a
// private redis-server on a free port (so that its memory is the service's
// alone); they share the database, the Redis and a key prefix, as two
// instances of one deployment do.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// settings are the soak's knobs, each from the environment.
type settings struct {
	Duration    time.Duration // SOAK_DURATION: how long the workload runs
	Interval    time.Duration // SOAK_INTERVAL: one report row per interval
	MySQLDSN    string        // SOAK_MYSQL_DSN: the MariaDB server, without a database
	Users       int           // SOAK_USERS: users of the synthetic graph
	Follows     int           // SOAK_FOLLOWS: followees of each user at the start
	Clients     int           // SOAK_CLIENTS: concurrent request loops
	Subscribers int           // SOAK_SUBSCRIBERS: live unreadCount subscriptions, half on each instance
	Rate        int           // SOAK_RATE: requests per second over all clients (0: as fast as they go)
	InboxCap    int           // SOAK_INBOX_CAP: the instances' INBOX_CAP, small so inboxes fill within the run
	Out         string        // SOAK_OUT: a directory for soak.csv and soak.png (none by default)
	// SOAK_POST_CACHE_TTL: the instances' POST_CACHE_TTL. Every post's Redis
	// copy lives that long, so Redis memory climbs with the posts made for
	// one TTL and then levels off; the default of a day would make it climb
	// for the whole run and fail the growth rule on a cache doing its job.
	// Two intervals (the default) level it off by the rule's baseline, the
	// end of the second interval, so that what still grows is a leak.
	PostCacheTTL time.Duration
}

func loadSettings() (settings, error) {
	s := settings{
		Duration: 10 * time.Minute, Interval: time.Minute, MySQLDSN: "root@tcp(127.0.0.1:3306)/",
		Users: 200, Follows: 15, Clients: 8, Subscribers: 20, Rate: 100, InboxCap: 100,
	}
	var errs []error
	dur := func(name string, d *time.Duration) {
		if v := os.Getenv(name); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil || p <= 0 {
				errs = append(errs, fmt.Errorf("%s=%q is not a positive duration", name, v))
			}
			*d = p
		}
	}
	num := func(name string, n *int) {
		if v := os.Getenv(name); v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 {
				errs = append(errs, fmt.Errorf("%s=%q is not a whole number", name, v))
			}
			*n = p
		}
	}
	dur("SOAK_DURATION", &s.Duration)
	dur("SOAK_INTERVAL", &s.Interval)
	if v := os.Getenv("SOAK_MYSQL_DSN"); v != "" {
		s.MySQLDSN = v
	}
	num("SOAK_USERS", &s.Users)
	num("SOAK_FOLLOWS", &s.Follows)
	num("SOAK_CLIENTS", &s.Clients)
	num("SOAK_SUBSCRIBERS", &s.Subscribers)
	num("SOAK_RATE", &s.Rate)
	num("SOAK_INBOX_CAP", &s.InboxCap)
	s.Out = os.Getenv("SOAK_OUT")
	s.PostCacheTTL = 2 * s.Interval
	dur("SOAK_POST_CACHE_TTL", &s.PostCacheTTL)
	if len(errs) > 0 {
		return s, errs[0]
	}
	if s.Users < 2 || s.Clients < 1 || s.InboxCap < 1 {
		return s, fmt.Errorf("SOAK_USERS must be at least 2, SOAK_CLIENTS and SOAK_INBOX_CAP at least 1")
	}
	if n := s.Duration / s.Interval; n < minIntervals {
		return s, fmt.Errorf("SOAK_DURATION %s is %d intervals of %s; the growth rule needs at least %d", s.Duration, n, s.Interval, minIntervals)
	}
	return s, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "soak: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("soak: PASS")
}

func run(ctx context.Context) error {
	s, err := loadSettings()
	if err != nil {
		return err
	}
	fmt.Printf("soak: %s in intervals of %s; %d users, %d clients at %d req/s, %d subscriptions, inbox cap %d, post cache TTL %s\n",
		s.Duration, s.Interval, s.Users, s.Clients, s.Rate, s.Subscribers, s.InboxCap, s.PostCacheTTL)
	d, err := deploy(ctx, s)
	if err != nil {
		return err
	}
	defer d.teardown()
	w, err := prepare(ctx, s, d)
	if err != nil {
		return fmt.Errorf("set up the graph: %w", err)
	}
	rep, err := w.run(ctx, s, d)
	if err != nil {
		return err
	}
	if s.Out != "" {
		// Written before the verdict, so that a failing run is kept too.
		title := fmt.Sprintf("soak: %s, %d users, %d clients at %d req/s, %d subscriptions", s.Duration, s.Users, s.Clients, s.Rate, s.Subscribers)
		files, err := writeRows(s.Out, title, rep.rows)
		if err != nil {
			return fmt.Errorf("SOAK_OUT: %w", err)
		}
		fmt.Println("soak: wrote", strings.Join(files, ", "))
	}
	if err := d.stopInstances(); err != nil {
		return err
	}
	return rep.verdict()
}

func randomName(prefix string) string {
	buf := make([]byte, 5)
	rand.Read(buf)
	return prefix + hex.EncodeToString(buf)
}
