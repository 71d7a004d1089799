package main

// The server under test: a real process of the service, built once and
// started per feed mode.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"feedservice/internal/serverproc"
)

// TokenSecret signs the benchmark's tokens; every mode's server shares it, so
// a token from one mode's server is valid on the next.
const TokenSecret = "feedbench-token-secret-0123456789abcdef"

type serverProc struct {
	mode    string
	prefix  string
	url     string
	p       *serverproc.Process
	logPath string
	logf    *os.File
}

// serverArgs are the flags every run of the server gets.
func serverArgs(o *options, mode, prefix, addr string, g *graph) []string {
	dsn := o.dsn + o.db
	if o.dsnParams != "" {
		dsn += "?" + o.dsnParams
	}
	return []string{
		"-addr", addr,
		"-mysql-dsn", dsn,
		"-redis-addr", o.redis,
		"-key-prefix", prefix,
		"-feed-mode", mode,
		"-celebrity-followers", strconv.Itoa(g.P.CelebrityThreshold),
		"-token-secret", TokenSecret,
		"-bcrypt-cost", "4",
		"-graphiql=false",
		"-mutation-rate", "off", // the benchmark measures throughput, not the abuse limits
		"-auth-rate", "off",
		"-complexity-rate", "off",
		// Every benchmark client connects from this one address.
		"-max-connections-per-address", "100000",
		"-max-operations-per-address", "100000",
		"-max-operations-in-flight", "100000",
		"-metrics-addr=", // not scraped; several servers may run at once
		"-data", os.TempDir() + "/feedbench-data",
	}
}

// migrate runs the server's own migrations on the benchmark database.
func migrate(o *options, g *graph) error {
	args := append([]string{"migrate"}, serverArgs(o, "hybrid", o.prefixBase+"migrate:", "127.0.0.1:0", g)...)
	cmd := exec.Command(o.serverBin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("migrate: %v\n%s", err, out)
	}
	return nil
}

func startServer(ctx context.Context, o *options, mode, prefix string, g *graph) (*serverProc, error) {
	addr, err := serverproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	s := &serverProc{mode: mode, prefix: prefix, url: "http://" + addr}
	s.logPath = fmt.Sprintf("%s/feedbench-server-%s.log", os.TempDir(), mode)
	if s.logf, err = os.Create(s.logPath); err != nil {
		return nil, err
	}
	s.p, err = serverproc.Start(ctx, serverproc.Options{
		Bin: o.serverBin, Args: append(serverArgs(o, mode, prefix, addr, g), o.serverFlags...), Addr: addr,
		Log: s.logf, Ready: 60 * time.Second, OwnGroup: true,
	})
	if err != nil {
		s.logf.Close()
		return nil, fmt.Errorf("%w\n%s", err, tail(s.logPath, 20))
	}
	return s, nil
}

// stop ends the server with SIGTERM (graceful), then SIGKILL after 25s.
func (s *serverProc) stop() {
	s.p.Stop(25 * time.Second)
	s.logf.Close()
}

// memKB reads VmRSS and VmHWM of the server from /proc.
func (s *serverProc) memKB() (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.p.Pid()))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = n
		case "VmHWM:":
			hwm = n
		}
	}
	return
}

// cpuSeconds is the server's user+system CPU time so far.
func (s *serverProc) cpuSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.p.Pid()))
	if err != nil {
		return 0
	}
	str := string(b)
	i := strings.LastIndexByte(str, ')')
	f := strings.Fields(str[i+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// logProblems counts the server's warning and error log lines, by message.
func logProblems(path string) map[string]int {
	out := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct{ Level, Msg, Err string }
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line.Level == "WARN" || line.Level == "ERROR" {
			key := line.Level + " " + line.Msg
			if line.Err != "" {
				e := line.Err
				if len(e) > 120 {
					e = e[:120]
				}
				key += ": " + e
			}
			out[key]++
		}
	}
	return out
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
