package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// The growth rule. A watched series (goroutines and RSS of each instance,
// Redis memory outside the fan-out stream) grows without bound when its last
// value is more than growthFactor times its value at the end of the second
// interval (the first holds the start-up) AND it rose in each of the last
// growthRises intervals. A series that levels off, or steps up once and
// stays, passes; one that keeps climbing fails. The fan-out stream is
// trimmed to the entries in flight (feed/fanout/streamtrim.go), a number that
// rises and falls with the load and sits near zero when it is light, where
// the rule's ratio means nothing; so its length (the feed_stream_length_entries
// gauge reports the same) and memory are printed on every row apart, not
// held to the rule.
const (
	growthFactor = 1.5
	growthRises  = 3
	// minIntervals is the fewest intervals the rule can judge: the baseline
	// (second) and growthRises rises after it.
	minIntervals = growthRises + 2
)

// growsUnbounded applies the growth rule to a series of interval values.
func growsUnbounded(series []float64) bool {
	n := len(series)
	if n < minIntervals {
		return false
	}
	if series[n-1] <= growthFactor*series[1] {
		return false
	}
	for i := n - growthRises; i < n; i++ {
		if series[i] <= series[i-1] {
			return false
		}
	}
	return true
}

// interval collects one interval's requests.
type interval struct {
	mu        sync.Mutex
	latencies map[string][]time.Duration
	errors    map[string]int
	samples   []string // the first errors, for the report
}

func newInterval() *interval {
	return &interval{latencies: map[string][]time.Duration{}, errors: map[string]int{}}
}

func (iv *interval) add(op string, d time.Duration, err error) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	iv.latencies[op] = append(iv.latencies[op], d)
	if err != nil {
		iv.errors[op]++
		if len(iv.samples) < 5 {
			iv.samples = append(iv.samples, op+": "+err.Error())
		}
	}
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// report is every interval's figures.
type report struct {
	requests, errors int
	errorSamples     []string
	series           map[string][]float64 // watched series by name
	rows             []row                // the printed rows, for SOAK_OUT
	subscriptionErr  error
}

// row is one interval's printed figures.
type row struct {
	Interval         int
	Elapsed          time.Duration // from the start of the workload to the end of the interval
	Requests, Errors int
	P99ms            map[string]float64 // by operation; absent when none ran in the interval
	Goroutines       map[string]float64 // by instance
	RSSMB            map[string]float64 // by instance
	RedisMB          float64            // used_memory
	StreamMB         float64            // the fan-out stream's part of it
	StreamEntries    int64
	SubMessages      int64 // received by the live subscriptions since the start
}

// run drives the workload for s.Duration and prints a row per interval.
func (w *world) run(ctx context.Context, s settings, d *deployment) (*report, error) {
	rep := &report{series: map[string][]float64{}}
	subs := make([]*subscriber, 0, s.Subscribers)
	defer func() {
		for _, sub := range subs {
			sub.close()
		}
	}()
	for i := range s.Subscribers {
		u := w.users[i%len(w.users)]
		sub, err := subscribe(ctx, d.instances[i%2].url, u.token)
		if err != nil {
			return nil, fmt.Errorf("subscribe: %w", err)
		}
		subs = append(subs, sub)
	}

	w.current = newInterval()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg     sync.WaitGroup
		ticket <-chan time.Time
	)
	if s.Rate > 0 {
		t := time.NewTicker(time.Second / time.Duration(s.Rate))
		defer t.Stop()
		ticket = t.C
	}
	for c := range s.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
			for runCtx.Err() == nil {
				if ticket != nil {
					select {
					case <-ticket:
					case <-runCtx.Done():
						return
					}
				}
				name := pickOperation(rng)
				start := time.Now()
				err := w.op(runCtx, rng, d, name)
				if runCtx.Err() != nil {
					return // cut short by the end of the run: not counted
				}
				w.mu.Lock()
				iv := w.current
				w.mu.Unlock()
				iv.add(name, time.Since(start), err)
			}
		})
	}

	printHeader(d)
	began := time.Now()
	tick := time.NewTicker(s.Interval)
	defer tick.Stop()
	finish := func() {
		stop()
		wg.Wait()
	}
	for n := 1; n <= int(s.Duration/s.Interval); n++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			finish()
			return nil, ctx.Err()
		}
		w.mu.Lock()
		iv := w.current
		w.current = newInterval()
		w.mu.Unlock()
		if err := rep.measure(ctx, n, time.Since(began), iv, d, subs); err != nil {
			finish()
			return nil, err
		}
		for _, sub := range subs {
			select {
			case err := <-sub.failed:
				rep.subscriptionErr = err
			default:
			}
		}
	}
	finish()
	return rep, nil
}

func printHeader(d *deployment) {
	fmt.Printf("%-4s %7s %6s  %-60s %s\n", "int", "reqs", "errors", "p99 per operation (ms)", "goroutines A/B, RSS MB A/B, Redis MB (stream MB, entries), sub msgs")
}

// measure takes the figures at the end of interval n, elapsed after the
// start, and prints its row.
func (r *report) measure(ctx context.Context, n int, elapsed time.Duration, iv *interval, d *deployment, subs []*subscriber) error {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	rw := row{Interval: n, Elapsed: elapsed, P99ms: map[string]float64{}, Goroutines: map[string]float64{}, RSSMB: map[string]float64{}}
	var lat []string
	for _, o := range operations {
		ds := iv.latencies[o.name]
		rw.Requests += len(ds)
		rw.Errors += iv.errors[o.name]
		if len(ds) > 0 {
			rw.P99ms[o.name] = float64(p99(ds).Microseconds()) / 1000
			lat = append(lat, fmt.Sprintf("%s %.0f", o.name, rw.P99ms[o.name]))
		}
	}
	r.requests += rw.Requests
	r.errors += rw.Errors
	r.errorSamples = append(r.errorSamples, iv.samples...)
	var figures []string
	for _, in := range d.instances {
		m, err := in.scrape(ctx, "go_goroutines", "process_resident_memory_bytes")
		if err != nil {
			return err
		}
		r.series["goroutines "+in.name] = append(r.series["goroutines "+in.name], m["go_goroutines"])
		r.series["RSS "+in.name] = append(r.series["RSS "+in.name], m["process_resident_memory_bytes"])
		rw.Goroutines[in.name] = m["go_goroutines"]
		rw.RSSMB[in.name] = m["process_resident_memory_bytes"] / 1e6
		figures = append(figures, fmt.Sprintf("%s: %.0f g %.1f MB", in.name, m["go_goroutines"], rw.RSSMB[in.name]))
	}
	used, stream, streamLen, err := d.redisMemory(ctx)
	if err != nil {
		return fmt.Errorf("redis memory: %w", err)
	}
	r.series["Redis memory outside the stream"] = append(r.series["Redis memory outside the stream"], float64(used-stream))
	rw.RedisMB, rw.StreamMB, rw.StreamEntries = float64(used)/1e6, float64(stream)/1e6, streamLen
	for _, s := range subs {
		rw.SubMessages += s.received.Load()
	}
	r.rows = append(r.rows, rw)
	fmt.Printf("%-4d %7d %6d  %-60s %s; Redis %.1f MB (stream %.1f MB, %d); %d\n", n, rw.Requests, rw.Errors, strings.Join(lat, " "),
		strings.Join(figures, ", "), rw.RedisMB, rw.StreamMB, rw.StreamEntries, rw.SubMessages)
	return nil
}

// verdict fails on any request error, a broken subscription, or a series
// that grows without bound.
func (r *report) verdict() error {
	var errs []error
	if r.errors > 0 {
		errs = append(errs, fmt.Errorf("%d of %d requests failed; first: %s", r.errors, r.requests, strings.Join(r.errorSamples, " | ")))
	}
	if r.requests == 0 {
		errs = append(errs, errors.New("no request completed"))
	}
	if r.subscriptionErr != nil {
		errs = append(errs, r.subscriptionErr)
	}
	names := make([]string, 0, len(r.series))
	for name := range r.series {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := r.series[name]
		if growsUnbounded(s) {
			errs = append(errs, fmt.Errorf("%s grows without bound: %v (last > %.1fx the second interval's, rising in each of the last %d)",
				name, s, growthFactor, growthRises))
		}
	}
	fmt.Printf("soak: %d requests, %d errors\n", r.requests, r.errors)
	return errors.Join(errs...)
}
