# The README's commands. `make run` needs nothing installed; `make test`
# starts (or installs) MariaDB and Redis itself.
.PHONY: run test generate seed migrate

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
