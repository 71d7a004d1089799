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

say "red-dot delivery smoke: 1,000 open websockets"
go test -run '^$' -bench RedDotDelivery -benchtime 1x -count=1 .

say "benchmark smoke: go run ./bench -quick (its checks asserted, its figures not)"
go run ./bench -quick
