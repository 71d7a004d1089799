# The README's commands. `make run` needs nothing installed; `make test`
# starts (or installs) MariaDB and Redis itself.
.PHONY: run test generate seed migrate soak bench web

run:
	go run .

test:
	bash scripts/test.sh

generate:
	go generate ./...

seed:
	go run . seed

migrate:
	go run . migrate

# The model-based test of the feed engine, long: MODEL_STEPS random
# operations per feed mode (the test command runs 250).
soak:
	MODEL_STEPS=$${MODEL_STEPS:-5000} go test -count=1 -timeout 60m -run TestEngineMatchesModel -v ./feed

# Go benchmarks of the engine in each feed mode, and red-dot delivery to
# open websockets, side by side (benchstat prints the table).
bench:
	go test -run '^$$' -bench . -benchtime 2s -count 3 ./feed | tee /tmp/feed-bench.txt
	DELIVERY_SOCKETS=$${DELIVERY_SOCKETS:-10000} go test -run '^$$' -bench RedDotDelivery -benchtime 5x -timeout 30m .
	go run golang.org/x/perf/cmd/benchstat@latest /tmp/feed-bench.txt

# Rebuild the React app (web/dist) and the GraphiQL page (playground/dist)
# from the locked npm packages. The built files are committed and embedded
# in the binary, so that `go run .` serves both with no Node installed.
web:
	cd web && npm ci --no-audit --no-fund && npm run build
	cd playground && npm ci --no-audit --no-fund && npm run build
