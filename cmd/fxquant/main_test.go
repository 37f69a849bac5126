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
	if child := childMains[os.Getenv(envChildMain)]; child != nil {
		os.Exit(child())
	}
	testscript.Main(m, map[string]func(){
		"fxquant": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// envChildMain names a child-process entry of childMains: a test that
// needs the command in a process of its own (with a resource limit, say)
// runs the test binary again with it set.
const envChildMain = "FXQUANT_TEST_CHILD"

// childMains are the child-process entries, by name; each returns the
// exit status.
var childMains = map[string]func() int{}

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
