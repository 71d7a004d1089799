#!/usr/bin/env bash
# The whole test command (`make test`, and what .ci/run calls).
# Starts MariaDB and Redis when they are not running, installing them with
# apt-get when absent; then go vet, the gofmt check, the API contract check
# (when ../shared is next to the checkout), every test with the race
# detector against those real servers and, beside that pass
# (scripts/test-side.sh), the API suite again on a six-node Redis Cluster,
# then the delivery, soak and benchmark smokes. Ends with the list of the
# tests that failed. Interrupted or not, it leaves no server, database or
# Redis key of its own behind (docs/testing.md, "What a run leaves").
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
say() { printf '== [%dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

# This run's scratch directory: testctl, the logs of both passes.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/feedservice-test.XXXXXX")
main_pid= side_pid=

# stop_passes ends both passes if they still run: SIGTERM to their process
# groups (the soak and the benchmark then tear down what they started),
# then SIGKILL to what is left after stop_wait seconds.
stop_wait=30
stop_passes() {
	local pids=() p
	for p in $main_pid $side_pid; do kill -0 -- -"$p" 2>/dev/null && pids+=("$p"); done
	[ ${#pids[@]} -gt 0 ] || return 0
	say "stopping what still runs (process groups ${pids[*]})"
	for p in "${pids[@]}"; do kill -TERM -- -"$p" 2>/dev/null || true; done
	for _ in $(seq 1 $((stop_wait * 5))); do
		local alive=
		for p in "${pids[@]}"; do kill -0 -- -"$p" 2>/dev/null && alive=1; done
		[ -n "$alive" ] || return 0
		sleep 0.2
	done
	for p in "${pids[@]}"; do kill -KILL -- -"$p" 2>/dev/null || true; done
}

# summary prints the failures found in the logs: every "--- FAIL" line (a
# test and its subtests), the packages that failed, panics and timeouts.
summary() {
	local logs=() f
	for f in "$tmp/main.log" "$tmp/side.log"; do [ -s "$f" ] && logs+=("$f"); done
	[ ${#logs[@]} -gt 0 ] || return 0
	local fails
	fails=$(grep -hE -e '^[[:space:]]*--- FAIL' -e '^FAIL[[:space:]]' -e '^panic: ' "${logs[@]}" | awk '!seen[$0]++' || true)
	[ -n "$fails" ] || return 0
	echo
	say "what failed (from the logs above):"
	printf '%s\n' "$fails" | sed 's/^/  /'
}

on_exit() {
	local status=$?
	trap - EXIT INT TERM
	stop_passes
	[ "$status" -eq 0 ] || summary
	# The test processes of this run have ended: the sweep removes what any
	# of them left (one killed by a signal or by its timeout runs no
	# cleanup), and what other ended runs left; live runs are not touched.
	[ ! -x "$tmp/testctl" ] || "$tmp/testctl" sweep || true
	rm -rf "$tmp"
	exit "$status"
}
trap on_exit EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

bash scripts/services.sh --browser

# Go's build and module caches, outside the checkout and kept between runs
# (Go's own defaults, under $HOME/.cache and $HOME/go): a clone of a commit
# already built compiles only what changed. Where the environment gives Go
# no home for them, they go to /var/tmp, which also outlives the run.
[ -n "$(go env GOCACHE)" ] && [ "$(go env GOCACHE)" != off ] || export GOCACHE=/var/tmp/feedservice-go/build
[ -n "$(go env GOMODCACHE)" ] || export GOMODCACHE=/var/tmp/feedservice-go/mod
say "Go build cache $(go env GOCACHE), module cache $(go env GOMODCACHE)"

# The client tests' locked npm packages (a fresh clone has none), installed
# before the tests start rather than inside their time limits.
for dir in clients/node-test clients/browser-test; do
	if [ ! -d "$dir/node_modules" ]; then
		say "npm ci in $dir"
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	fi
done

# testctl (internal/testenv/cmd/testctl): the sweep of ended runs and the
# time scale, for this script and scripts/test-side.sh.
go build -o "$tmp/testctl" ./internal/testenv/cmd/testctl
export TESTCTL="$tmp/testctl"
"$TESTCTL" sweep || true
# If this script is killed outright (no trap runs), a later sweep removes
# its scratch directory.
"$TESTCTL" dir -owner $$ "$tmp"

say "go vet"
go vet ./...

say "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi

if [ -d ../shared/tools/contractcheck ]; then
	say "contract check"
	schema="$PWD/schema.graphqls"
	(cd ../shared/tools/contractcheck && go run . ../../contract.graphqls "$schema")
else
	say "contract check skipped: ../shared/tools/contractcheck is not next to this checkout (the public contract lives there; a plain clone has no copy to check schema.graphqls against)"
fi

# The main pass's timeout is a bound for a hung test, not for a slow one:
# 9 minutes times the time scale measured now, at least twice that (another
# run on the machine may start after this one measured a quiet box) and at
# most four times (a hung test is found within 36 minutes).
main_timeout=$("$TESTCTL" scale -min 2 -max 4 9m)
say "go test -race (timeout $main_timeout); beside it the Redis Cluster pass, then the smokes"
# The main pass (every package under the race detector) is the long one:
# its api package waits on servers, sockets and timers far more than it
# computes. Beside it, one after the other: the Redis Cluster pass, the
# red-dot delivery smoke, the short soak and the benchmark smoke. Their
# output is kept in a log and printed when the main pass ends. Each pass
# runs in a process group of its own, which on_exit ends if it still runs.
cluster=$(bash scripts/redis-cluster.sh)
set -m
TEST_CLUSTER=$cluster bash scripts/test-side.sh >"$tmp/side.log" 2>&1 &
side_pid=$!
# -parallel 4: the tests marked t.Parallel (server processes, the browser,
# long bursts) wait far more than they compute, so four share two cores.
# Packages run two at a time (Go's default here, GOMAXPROCS). With the side
# chain beside it the command keeps both cores busy (docs/testing.md, "Where
# the time goes": 4% idle on 2 Dec 2026), so more packages at a time (-p 4)
# would share the same CPU more ways; what shortens it is less CPU.
# The three tests that stop replication need the replicated primary: they run
# in the side chain's replica pass; the sharded MySQL tests run in its
# sharded pass.
# The pure-Go SQLite under the embedded backend (modernc.org, C translated
# to Go) is compiled without the race detector's instrumentation: it is
# not our code, it shares no Go memory with it, and instrumented it spent
# about a third of the embedded API tests' time (TestFeedUnreadCountCapped's
# embedded half: 24.5 s instrumented, 14.9 s not). Everything else stays
# instrumented.
# -json: testctl prints the events as a plain run would, and then the
# run's longest packages and tests, the test command's long poles
# (docs/testing.md).
(
	set -o pipefail
	go test -json -race -gcflags='modernc.org/...=-race=false' -count=1 -parallel 4 -timeout "$main_timeout" \
		-skip '^(TestReplicaStoppedKeepsOwnWrites|TestReplicaLagSendsReadsToPrimary|TestReplicaRebuildFindsWhatTheFanoutMissed|TestShardedMySQL.*)$' ./... "$@" 2>&1 |
		"$TESTCTL" gotest -top 12 | tee "$tmp/main.log"
) &
main_pid=$!
set +m

# A line a minute while the main pass runs: its longest package (api)
# prints nothing until it ends, minutes later.
(
	while sleep 60; do
		kill -0 "$main_pid" 2>/dev/null || exit 0
		done_pkgs=$(grep -cE '^(ok|FAIL|\?)[[:space:]]' "$tmp/main.log" 2>/dev/null || true)
		say "main pass still running: ${done_pkgs:-0} packages finished; the side chain's log is printed at the end"
	done
) &
progress_pid=$!

main_status=0
wait "$main_pid" || main_status=$?
main_pid=
kill "$progress_pid" 2>/dev/null || true
if [ "$main_status" -ne 0 ]; then
	say "main pass failed (exit $main_status); the side chain is stopped, its log so far:"
	stop_passes
	cat "$tmp/side.log"
	exit "$main_status"
fi
say "main pass done; waiting for the side chain"
side_status=0
wait "$side_pid" || side_status=$?
side_pid=
cat "$tmp/side.log"
[ "$side_status" -eq 0 ] || exit "$side_status"
say "all passed"
