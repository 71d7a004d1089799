// Command testctl is the test scripts' side of internal/testenv/testrun:
//
//	testctl sweep                 clean up after every ended test run
//	testctl scale [-min F] [-max F] D
//	                              print the duration D stretched by the time
//	                              scale, kept within [min, max] times D
//	testctl name -owner PID [-mysql DSN] [-redis ADDRS] PREFIX
//	                              print a fresh database name or key prefix
//	                              swept once process PID has ended
//	testctl dir -owner PID DIR    have DIR (under the temporary directory)
//	                              removed by the sweep once process PID ended
//	testctl lockpath NAME         print the file of the machine-wide lock NAME
//	testctl gotest [-top N] [-timings FILE]
//	                              read `go test -json` on stdin, print what a
//	                              plain run prints, then the N longest
//	                              packages and tests (also written to FILE)
//
// scripts/test.sh builds it once per run; see docs/testing.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"feedservice/internal/testenv/testjson"
	"feedservice/internal/testenv/testrun"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "sweep":
		err = sweep()
	case "scale":
		err = scale(args)
	case "name":
		err = name(args)
	case "dir":
		err = dir(args)
	case "gotest":
		err = gotest(args)
	case "lockpath":
		if len(args) != 1 {
			usage()
		}
		fmt.Println(testrun.LockPath(args[0]))
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testctl:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testctl sweep | scale [-min F] [-max F] DURATION | name -owner PID [-mysql DSN] [-redis ADDRS] PREFIX | dir -owner PID DIR | lockpath NAME | gotest [-top N] [-timings FILE]")
	os.Exit(2)
}

// sweepTimeout bounds a sweep.
const sweepTimeout = 2 * time.Minute

func sweep() error {
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	swept, err := testrun.Sweep(ctx)
	if swept.Runs > 0 {
		fmt.Printf("testctl: swept after %s\n", swept)
	}
	return err
}

func scale(args []string) error {
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	floor := fs.Float64("min", 1, "the least factor applied")
	ceil := fs.Float64("max", testrun.MaxMeasuredScale, "the greatest factor applied")
	fs.Parse(args)
	if fs.NArg() != 1 {
		usage()
	}
	d, err := time.ParseDuration(fs.Arg(0))
	if err != nil {
		return err
	}
	f, err := testrun.TimeScale()
	if err != nil {
		return err
	}
	fmt.Println(time.Duration(float64(d) * min(max(f, *floor), *ceil)).Round(time.Second))
	return nil
}

func name(args []string) error {
	fs := flag.NewFlagSet("name", flag.ExitOnError)
	owner := fs.Int("owner", 0, "the process whose end lets the sweep remove what is made under the name")
	dsn := fs.String("mysql", "", "the MySQL server (DSN without a database) where a database of this name may be")
	redis := fs.String("redis", "", "the Redis server (comma list for a cluster) where keys of this prefix may be")
	fs.Parse(args)
	if fs.NArg() != 1 || *owner <= 0 {
		usage()
	}
	run, err := testrun.Register(*owner)
	if err != nil {
		return err
	}
	if *dsn != "" {
		if err := run.UsesMySQL(*dsn); err != nil {
			return err
		}
	}
	if *redis != "" {
		if err := run.UsesRedis(*redis); err != nil {
			return err
		}
	}
	n, err := run.Name(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Println(n)
	return nil
}

func dir(args []string) error {
	fs := flag.NewFlagSet("dir", flag.ExitOnError)
	owner := fs.Int("owner", 0, "the process whose end lets the sweep remove the directory")
	fs.Parse(args)
	if fs.NArg() != 1 || *owner <= 0 {
		usage()
	}
	run, err := testrun.Register(*owner)
	if err != nil {
		return err
	}
	_, err = run.AddServer("scratch directory", 0, false, fs.Arg(0))
	return err
}

// gotest prints a `go test -json` run as a plain one, then its long poles.
// It exits non-zero only when it cannot read or write: the go command's
// own exit status says whether the tests passed.
func gotest(args []string) error {
	fs := flag.NewFlagSet("gotest", flag.ExitOnError)
	top := fs.Int("top", 10, "how many of the longest packages and tests to list")
	file := fs.String("timings", "", "a file to write every package's and test's time to, longest first")
	fs.Parse(args)
	rep, err := testjson.Convert(os.Stdin, os.Stdout)
	if err != nil {
		return err
	}
	rep.Write(os.Stdout, *top)
	if *file == "" {
		return nil
	}
	f, err := os.Create(*file)
	if err != nil {
		return err
	}
	rep.Write(f, max(len(rep.Packages), len(rep.Tests)))
	return f.Close()
}
