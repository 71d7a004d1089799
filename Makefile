# The README's commands. `make run` needs nothing installed; `make test`
# starts (or installs) MariaDB and Redis itself.
.PHONY: run test generate seed migrate soak

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
