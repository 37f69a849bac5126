package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain registers the command with testscript, so that scripts run
// "exec fxquant ..." against this package's run function in a subprocess
// of the test binary.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fxquant": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs every testdata/script/*.txtar as a subtest. The scripts
// can read the pt2e fixtures through $FIXTURES (tests/testdata/pt2e).
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "tests", "testdata", "pt2e"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("FIXTURES", fixtures)
			return nil
		},
	})
}
