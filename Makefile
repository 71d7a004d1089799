# The README's commands. `make run` needs nothing installed; `make test`
# starts (or installs) MariaDB and Redis itself.
.PHONY: run test test-clean generate seed migrate soak soak-model fuzz difftest bench bench-quick bench-targets bench-go bench-feedpage bench-feedpage-base bench-jumps services web

run:
	go run .

test:
	bash scripts/test.sh

# Stop what `make test` leaves running for its next run, the Redis Cluster
# on 7000-7005 and the MariaDB servers on 3310-3312 and 3320-3324, and remove their data
# (under /tmp). Redis on 6379 and MariaDB on 3306 are left running.
test-clean:
	bash scripts/test-clean.sh

# graph/generated.go (gqlgen's) and graph/fastexec.go (the fast executor,
# internal/fastexec/plugin) from schema.graphqls and gqlgen.yml.
generate:
	go generate ./...

seed:
	go run . seed

migrate:
	go run . migrate

# The soak (soak/): a mixed workload against two server instances on
# MariaDB and a private Redis for SOAK_DURATION (10m), a report row per
# SOAK_INTERVAL (1m); fails on any request error or a series that grows
# without bound. Then the long model test.
soak: services
	SOAK_DURATION=$${SOAK_DURATION:-10m} SOAK_INTERVAL=$${SOAK_INTERVAL:-1m} go run ./soak
	$(MAKE) soak-model

# The model-based test of the feed engine, long: MODEL_STEPS (5000) random
# operations per feed mode, once for each seed of MODEL_SEEDS (by default
# the five of docs/model-runs.md; a word that is not a number, such as
# MODEL_SEEDS=random, draws a seed). The test command runs 400 steps.
MODEL_SEEDS ?= 7850602833018553172 6567934531051213137 944276734102709216 2851240920146991424 6557387434627805950
soak-model:
	set -e; for seed in $(MODEL_SEEDS); do \
		echo "== MODEL_SEED=$$seed"; \
		MODEL_SEED=$$seed MODEL_STEPS=$${MODEL_STEPS:-5000} go test -count=1 -timeout 90m \
			-run 'TestEngineMatchesModel/^(pull|push|hybrid)$$' -v ./feed; \
	done

# Every fuzz target for FUZZTIME each (the test command runs only their
# seed corpora and committed inputs, as ordinary tests).
# Go fuzzes one target per package invocation. A failing input is written
# to <package>/testdata/fuzz/<Target>/: fix the bug and commit the file,
# and it runs as a regression case in every `go test`.
FUZZTIME ?= 5m
FUZZ_TARGETS = FuzzCursor:./feed/paging FuzzPostBody:./feed FuzzNodeID:./models FuzzGraphQLRequest:./api FuzzDocumentWalkers:./api/extensions FuzzWriterString:./internal/fastexec

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== $${t%%:*} for $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$${t%%:*}\$$" -fuzztime $(FUZZTIME) -timeout 0 $${t#*:}; \
	done

# The differential test of the fast GraphQL executor against gqlgen's
# (internal/fastexec/difftest), with DIFFTEST_DOCS (20000) random documents
# where the test command runs 3,000; DIFFTEST_SEED=n draws other ones.
DIFFTEST_DOCS ?= 20000
difftest:
	DIFFTEST_DOCS=$(DIFFTEST_DOCS) go test -count=1 -timeout 60m -run '^TestFastExecutorMatchesGqlgen$$' -v ./internal/fastexec/difftest

# The end-to-end benchmark (bench/): a real server process in each feed mode
# (pull, push, hybrid) on MariaDB and Redis, a synthetic graph of 50,000
# users, every workload and the floors; prints the table and writes
# bench/results/latest.json and the plots. BENCH_ARGS passes flags, e.g.
# BENCH_ARGS='-users 20000' or BENCH_ARGS='-reuse' (keep the loaded graph).
# Compare two runs: go run ./bench -compare old.json bench/results/latest.json
# Every figure is the median of 3 runs of the workloads (BENCH_ARGS='-runs 5'
# for more); red dots are measured with 1,000 and 10,000 open websockets.
bench: services
	go run ./bench $(BENCH_ARGS)

# The same on a small graph with short runs (under 2 minutes); its
# correctness checks fail the command, its figures are not asserted.
bench-quick: services
	go run ./bench -quick $(BENCH_ARGS)

# The warm-read targets alone (11-16 minutes on the default
# graph): the engine's page against the raw Redis page, and the page
# with blocks and mutes against the page without them (bench-feedpage),
# the warm list page's SQL statements (BenchmarkWarmListPage), then the
# bench's first pages at 8 and 32 clients, deep pages, the cache tiers'
# memory and the warm list page beside the home page in each mode,
# printed as one table "target |
# measured | bound | met/missed"; bench/results/targets/ gets latest.json
# and the plot. BENCH_ARGS as for bench (e.g. '-reuse', '-runs 1').
bench-targets: services bench-feedpage
	go test -run '^$$' -bench '^BenchmarkWarmListPage$$' -benchtime 2s -count 3 ./api | grep '^Benchmark' | tee -a /tmp/feedpage-bench.txt
	go run ./bench -only targets -gobench /tmp/feedpage-bench.txt $(BENCH_ARGS)

# Go benchmarks of the engine in each feed mode, and red-dot delivery to
# open websockets, side by side (benchstat prints the table), then the
# engine's push page against the raw Redis page.
bench-go:
	go test -run '^$$' -bench . -benchtime 2s -count 3 ./feed | tee /tmp/feed-bench.txt
	DELIVERY_SOCKETS=$${DELIVERY_SOCKETS:-10000} go test -run '^$$' -bench RedDotDelivery -benchtime 5x -timeout 30m ./api
	go run golang.org/x/perf/cmd/benchstat@latest /tmp/feed-bench.txt
	go run ./bench -only gobench -gobench /tmp/feed-bench.txt

# The engine's page (BenchmarkFeedPage, push, 200 followees) beside the raw
# one-client Redis page (BenchmarkRedisPage: ZREVRANGE of 20 and one GET
# pipeline of 20 post-sized values): FEEDPAGE_COUNT (6) rounds of one run of
# each, in turn, so that both see the same load on a shared box; benchstat's
# table, then the rate ratio and the allocations per page against issue
# 12's bounds (at least 50% of raw; at most half of 1,592 allocations).
# Each round's BenchmarkFeedPage also reads, in push and hybrid, the same
# page once the reader mutes 5% of the followees and blocks 1%
# (hiding=mute5block1 beside hiding=none): the bound is within 10%.
FEEDPAGE_COUNT ?= 6

# The engine's page of this tree beside the same page built from
# FEEDPAGE_BASE (a commit), in alternating rounds; benchstat compares the
# two (time and allocations per page); a refactoring of the engine is
# measured so.
bench-feedpage-base:
	bash scripts/bench-feedpage-base.sh

bench-feedpage:
	go test -c -o /tmp/feedpage.test ./feed
	: > /tmp/feedpage-bench.txt
	cd feed && for i in $$(seq $(FEEDPAGE_COUNT)); do \
		echo "== round $$i of $(FEEDPAGE_COUNT)"; \
		for b in '^BenchmarkFeedPage$$/^mode=(push|hybrid)$$/^followees=200$$' '^BenchmarkRedisPage$$'; do \
			/tmp/feedpage.test -test.run '^$$' -test.bench "$$b" -test.benchtime 2s > /tmp/feedpage-round.txt || { cat /tmp/feedpage-round.txt; exit 1; }; \
			grep '^Benchmark' /tmp/feedpage-round.txt | tee -a /tmp/feedpage-bench.txt; \
		done; \
	done
	go run golang.org/x/perf/cmd/benchstat@latest /tmp/feedpage-bench.txt
	go run golang.org/x/perf/cmd/benchstat@latest -filter .name:FeedPage -col /hiding /tmp/feedpage-bench.txt
	go run ./bench -only gobench -gobench /tmp/feedpage-bench.txt

# Page jumps on a followers list (bench/jumps, 3-5 minutes): page 1
# against page 40,000 of 25 for an account with 1,000,000 followers from
# its copy in Redis, and through MySQL's offset index alone for the same
# million and for a list under the threshold; loads its own database
# (feedbench_jumps), prints the table and writes docs/jumps.png.
# BENCH_ARGS passes flags, e.g. BENCH_ARGS='-requests 5000'.
bench-jumps: services
	go run ./bench/jumps $(BENCH_ARGS)

# MariaDB and Redis for the benchmark, started (or installed) as the test command does.
services:
	bash scripts/services.sh

# Rebuild the React app (web/dist) and the GraphiQL page (playground/dist)
# from the locked npm packages; the app's build first generates its GraphQL
# types (web/src/gql, graphql-codegen from schema.graphqls and the app's
# documents). The built and generated files are committed and embedded in
# the binary, so that `go run .` serves both with no Node installed.
web:
	cd web && npm ci --no-audit --no-fund && npm run build
	cd playground && npm ci --no-audit --no-fund && npm run build
