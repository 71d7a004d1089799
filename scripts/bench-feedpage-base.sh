#!/usr/bin/env bash
# The engine's page (BenchmarkFeedPage, push, 200 followees) of this tree
# beside the same benchmark built from another commit (FEEDPAGE_BASE, say
# the commit before a refactoring): ROUNDS rounds of one run of each, in
# turn, so that both see the same load; then benchstat's comparison of the
# two (time and allocations per page). Used by `make bench-feedpage-base`.
set -euo pipefail
base=${FEEDPAGE_BASE:?set FEEDPAGE_BASE to the commit to compare with}
rounds=${FEEDPAGE_COUNT:-6}
bench='^BenchmarkFeedPage$/^mode=push$/^followees=200$'
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
echo "== building the benchmark at $base and at this tree"
git worktree add --quiet --detach "$work/base" "$base"
(cd "$work/base" && go test -c -o "$work/base.test" ./feed)
go test -c -o "$work/head.test" ./feed
: > /tmp/feedpage-base.txt
: > /tmp/feedpage-head.txt
for i in $(seq "$rounds"); do
	echo "== round $i of $rounds"
	for side in base head; do
		(cd feed && "$work/$side.test" -test.run '^$' -test.bench "$bench" -test.benchtime 2s -test.benchmem) > "$work/round.txt" || { cat "$work/round.txt"; exit 1; }
		# A tree with the page with blocks and mutes runs it too and
		# names the page without them .../hiding=none: that one, under the
		# name of a tree from before, so that benchstat lines the two up.
		grep '^Benchmark' "$work/round.txt" | grep -v '/hiding=mute' | sed 's#/hiding=none##' > "$work/lines.txt"
		sed "s/^/$side: /" "$work/lines.txt"
		cat "$work/lines.txt" >> "/tmp/feedpage-$side.txt"
	done
done
go run golang.org/x/perf/cmd/benchstat@latest /tmp/feedpage-base.txt /tmp/feedpage-head.txt
