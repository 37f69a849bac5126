package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The memory bound every command runs under: the address space is capped
// with "ulimit -v" (so a runaway allocation fails instead of swapping the
// machine), and the peak resident set, from the child's rusage, must stay
// under maxRSS.
const (
	ulimitKiB = 1 << 20          // 1 GiB of address space
	maxRSS    = 256 << 20        // bytes
	timeout   = 60 * time.Second // per command
)

// fxquant is the command built once by TestMain.
var fxquant string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hostile")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fxquant = filepath.Join(dir, "fxquant")
	build := exec.Command("go", "build", "-o", fxquant, "github.com/fxquant/fxquant/cmd/fxquant")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fxquant:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Case mirrors gen.go's manifest entry.
type Case struct {
	File string   `json:"file"`
	Note string   `json:"note"`
	Want string   `json:"want"`
	Fail []string `json:"fail"`
	Pass []string `json:"pass"`
}

func manifest(t *testing.T) []Case {
	b, err := os.ReadFile(filepath.Join("testdata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	// every case is active: a field the test does not know (such as an
	// old "pending" mark) is an error, not something to skip
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cs []Case
	if err := dec.Decode(&cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// The manifest and the files agree, and the corpus has the size the
// issue asks for.
func TestManifest(t *testing.T) {
	cs := manifest(t)
	if len(cs) < 60 {
		t.Errorf("%d cases, want at least 60", len(cs))
	}
	listed := map[string]bool{"manifest.json": true}
	for _, c := range cs {
		if listed[c.File] {
			t.Errorf("%s listed twice", c.File)
		}
		listed[c.File] = true
		if c.Want == "" {
			t.Errorf("%s: no expected error", c.File)
		}
		if _, err := os.Stat(filepath.Join("testdata", c.File)); err != nil {
			t.Error(err)
		}
	}
	files, _ := os.ReadDir("testdata")
	var total int64
	for _, f := range files {
		if !listed[f.Name()] {
			t.Errorf("testdata/%s is not in the manifest", f.Name())
		}
		if info, err := f.Info(); err == nil {
			total += info.Size()
		}
	}
	if total > 2<<20 {
		t.Errorf("corpus is %d bytes, want under 2 MiB", total)
	}
}

// result is one command's outcome.
type result struct {
	code   int
	out    string // stdout and stderr
	rss    int64  // peak resident set in bytes
	signal string
}

func runCmd(t *testing.T, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// exec replaces the shell, so the rusage is fxquant's
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, ulimitKiB)
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, fxquant}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all")
	err := cmd.Run()
	r := result{out: out.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal().String()
		}
	default:
		t.Fatalf("%v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%v: did not finish in %v", args, timeout)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = int64(ru.Maxrss) << 10 // KiB on Linux
	}
	return r
}

// crashMarks are what a crash, an out-of-memory death or an escaped
// panic print.
var crashMarks = []string{"panic:", "internal error", "fatal error", "goroutine ", "out of memory", "runtime error"}

// TestHostile runs print, verify and run on every corpus file: none may
// crash or exceed the memory bound, the commands the manifest lists must
// fail with its error (which names the field, node or entry at fault),
// and those it lists as passing must succeed.
func TestHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command line about 400 times")
	}
	var peak int64
	var peakAt string
	runs := 0
	for _, c := range manifest(t) {
		t.Run(c.File, func(t *testing.T) {
			file := filepath.Join("testdata", c.File)
			fail := c.Fail
			if len(fail) == 0 && len(c.Pass) == 0 {
				fail = []string{"print", "verify", "run"}
			}
			for _, sub := range []string{"print", "verify", "run"} {
				args := []string{sub, file}
				if sub == "run" {
					args = []string{"run", "--no-progress", file}
				}
				r := runCmd(t, args...)
				runs++
				if r.rss > peak {
					peak, peakAt = r.rss, sub+" "+c.File
				}
				if r.signal != "" {
					t.Errorf("%s: killed by %s\n%s", sub, r.signal, r.out)
				}
				for _, m := range crashMarks {
					if strings.Contains(r.out, m) {
						t.Errorf("%s: output contains %q:\n%s", sub, m, r.out)
						break
					}
				}
				if r.rss > maxRSS {
					t.Errorf("%s: peak RSS %d MiB, over the %d MiB bound", sub, r.rss>>20, maxRSS>>20)
				}
				switch {
				case slices.Contains(fail, sub):
					if r.code != 1 {
						t.Errorf("%s: exit %d, want 1\n%s", sub, r.code, r.out)
					}
					if !strings.Contains(r.out, c.Want) {
						t.Errorf("%s: error does not contain %q:\n%s", sub, c.Want, r.out)
					}
				case slices.Contains(c.Pass, sub):
					if r.code != 0 {
						t.Errorf("%s: exit %d, want 0\n%s", sub, r.code, r.out)
					}
				default:
					if r.code != 0 && r.code != 1 {
						t.Errorf("%s: exit %d, want 0 or 1\n%s", sub, r.code, r.out)
					}
				}
			}
		})
	}
	t.Logf("%d runs under ulimit -v %d KiB; peak RSS %.1f MiB (%s), bound %d MiB", runs, ulimitKiB, float64(peak)/(1<<20), peakAt, maxRSS>>20)
}
