package home

import (
	"os"
	"testing"

	"feedservice/internal/testenv"
)

// TestMain drops the template database the tests' databases are copied
// from (depstest.New) once they have run.
func TestMain(m *testing.M) { os.Exit(testenv.DropTemplatesAfter(m).Run()) }
