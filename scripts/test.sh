#!/usr/bin/env bash
# The whole test command (`make test`, and what .ci/run calls).
# Starts MariaDB and Redis when they are not running, installing them with
# apt-get when absent; then go vet, the gofmt check, the API contract check,
# and every test with the race detector against those real servers.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '== %s\n' "$*"; }

bash scripts/services.sh --browser

say "go vet"
go vet ./...

say "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi

say "contract check"
schema="$PWD/schema.graphqls"
(cd ../shared/tools/contractcheck && go run . ../../contract.graphqls "$schema")

say "go test -race"
go test -race -count=1 -timeout 9m ./... "$@"

# Each fuzz target for a bounded time (`make fuzz` runs them long); their
# seed corpora and testdata/fuzz regression cases already ran above.
for target in FuzzCursor:./feed FuzzPostBody:./feed FuzzNodeID:./models FuzzGraphQLRequest:.; do
	say "fuzz ${target%%:*} for 10s"
	go test -run '^$' -fuzz "^${target%%:*}\$" -fuzztime 10s "${target#*:}"
done

say "Redis Cluster: the API suite, the reference model and the subscription tests on six nodes"
# TEST_REDIS_ADDR with several addresses gives the tests cluster clients
# (internal/testenv); the API suite's two-instance tests share the cluster.
# Without the race detector, which the main pass above ran the same code
# under: this pass is about the cluster, and it stays within its budget.
cluster=$(bash scripts/redis-cluster.sh)
api_tests=$(grep -ho '^func Test[A-Za-z0-9_]*' api_*_test.go | sed 's/^func //' | paste -sd'|')
cluster_tests="$api_tests|TestEngineMatchesModel|TestHubChannelsAreReferenceCounted|TestSlowClientBlocksNobody"
cluster_tests+="|TestSlotAgreesWithCluster|TestClusterRefusesCrossSlot|TestCheckSlotsCatchesCrossSlotCommands"
TEST_REDIS_ADDR=$cluster go test -count=1 -timeout 6m -run "^($cluster_tests)\$" . ./feed ./internal/testenv

say "red-dot delivery smoke: 1,000 open websockets"
go test -run '^$' -bench RedDotDelivery -benchtime 1x -count=1 .

say "soak, short: 50s in 10s intervals on two instances (make soak runs 10 minutes)"
SOAK_DURATION=50s SOAK_INTERVAL=10s SOAK_USERS=100 SOAK_FOLLOWS=10 go run ./soak

say "benchmark smoke: go run ./bench -quick (its checks asserted, its figures not)"
go run ./bench -quick
