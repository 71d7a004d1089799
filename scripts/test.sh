#!/usr/bin/env bash
# The whole test command (`make test`, and what .ci/run calls).
# Starts MariaDB and Redis when they are not running, installing them with
# apt-get when absent; then go vet, the gofmt check, the API contract check,
# every test with the race detector against those real servers and, beside
# that pass (scripts/test-side.sh), the API suite again on a six-node Redis
# Cluster, then the delivery, soak and benchmark smokes.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
say() { printf '== [%dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*"; }

bash scripts/services.sh --browser

say "go vet"
go vet ./...

say "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi

say "contract check"
schema="$PWD/schema.graphqls"
(cd ../shared/tools/contractcheck && go run . ../../contract.graphqls "$schema")

say "go test -race; beside it the Redis Cluster pass, then the smokes"
# The main pass (every package under the race detector) is the long one:
# its api package waits on servers, sockets and timers far more than it
# computes. Beside it, one after the other: the Redis Cluster pass, the
# red-dot delivery smoke, the short soak and the benchmark smoke. Their output is kept in a log and printed when the main pass ends.
side_log=$(mktemp)
side_pid=
trap '[ -z "$side_pid" ] || kill -- -"$side_pid" 2>/dev/null; rm -f "$side_log"' EXIT
cluster=$(bash scripts/redis-cluster.sh)
set -m # the side chain runs in a process group of its own, killed with it
TEST_CLUSTER=$cluster bash scripts/test-side.sh >"$side_log" 2>&1 &
side_pid=$!
set +m

# -parallel 4: the tests marked t.Parallel (server processes, the browser,
# long bursts) wait far more than they compute, so four share two cores.
main_status=0
# The two tests that stop replication need the replicated primary: they run
# in the side chain's replica pass.
go test -race -count=1 -parallel 4 -timeout 9m -skip '^(TestReplicaStoppedKeepsOwnWrites|TestReplicaLagSendsReadsToPrimary)$' ./... "$@" || main_status=$?
if [ "$main_status" -ne 0 ]; then
	say "main pass failed (exit $main_status); the side chain is stopped, its log so far:"
	cat "$side_log"
	exit "$main_status"
fi
say "main pass done; waiting for the side chain"
side_status=0
wait "$side_pid" || side_status=$?
side_pid=
cat "$side_log"
[ "$side_status" -eq 0 ] || exit "$side_status"
say "all passed"
