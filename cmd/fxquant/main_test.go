package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// envChildArgs holds a child's command line, one argument a line.
const envChildArgs = "FXQUANT_TEST_CHILD_ARGS"

// childMains are the child-process entries, by name; each returns the
// exit status.
var childMains = map[string]func() int{}

// childCommand is the test binary run again as the child-process entry
// name, with the command line args (childArgs in the child).
func childCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildMain+"="+name, envChildArgs+"="+strings.Join(args, "\n"))
	return cmd
}

// childArgs is the command line childCommand gave this child.
func childArgs() []string { return strings.Split(os.Getenv(envChildArgs), "\n") }

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
