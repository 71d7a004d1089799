package web

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestGeneratedTypesAreCurrent checks the app's GraphQL types, which
// graphql-codegen makes from ../schema.graphqls and the documents in
// src/graphql.ts into src/gql/ (codegen.ts; `make web` runs it):
//   - `npm run codegen:check` generates them afresh and compares: a
//     committed src/gql/ that the schema or a document has moved on from,
//     or a document that asks for something the schema does not have (a
//     renamed field), fails;
//   - `npm run typecheck` (tsc) checks the app against them: code that no
//     longer fits what a document returns fails.
//
// It needs node and npm; it installs the locked packages with `npm ci`
// when node_modules is missing.
func TestGeneratedTypesAreCurrent(t *testing.T) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is not installed (the app's generated types are checked with it): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(what string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, npm, args...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: npm %v: %v\n%s", what, args, err, out)
		}
	}
	if _, err := os.Stat("node_modules"); errors.Is(err, os.ErrNotExist) {
		run("installing the locked packages", "ci", "--no-audit", "--no-fund")
	} else if err != nil {
		t.Fatal(err)
	}
	run("src/gql/ is not what the schema and the documents make, or a document does not fit the schema (run `make web` and commit src/gql/ and dist/)",
		"run", "codegen:check")
	run("the app does not typecheck against its generated GraphQL types", "run", "typecheck")
}
