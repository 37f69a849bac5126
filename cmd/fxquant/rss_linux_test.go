package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fxquant/fxquant/pt2"
	"github.com/stretchr/testify/require"
)

// envRSSTest, set to 1, runs TestRunPeakRSS: it writes a program of
// about 1.1 GB to a temporary directory, takes a few GB of memory and a
// minute or more, so the normal "go test ./..." skips it.
const envRSSTest = "FXQUANT_RSS_TEST"

func init() {
	childMains["rss"] = func() int {
		code := run(childArgs(), os.Stdin, os.Stdout, os.Stderr)
		// The child reports its own peak: rusage's ru_maxrss of a child
		// also counts the parent's resident memory at fork time (Linux
		// keeps the larger across exec), and the parent has just read the
		// whole program to count its weights.
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			fmt.Fprintln(os.Stderr, "rss child:", err)
			return 1
		}
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				fmt.Println(line)
			}
		}
		return code
	}
}

// TestRunPeakRSS measures the peak resident memory of "fxquant run -o"
// in a child process on a generated MLP of 18 layers 4096 wide (about
// 1.08 GB of float32 weights; one batch's activations are a few hundred
// KB), and checks it against rssBudget times the weight bytes.
func TestRunPeakRSS(t *testing.T) {
	if testing.Short() || os.Getenv(envRSSTest) != "1" {
		t.Skip("set " + envRSSTest + "=1 to run (writes ~1.1 GB, takes a few GB of memory)")
	}
	dir := t.TempDir()
	file, err := deepMLPFile(dir, 18, 4096)
	require.NoError(t, err)
	p, err := pt2.ReadFile(file, nil)
	require.NoError(t, err)
	var weights int64
	for _, v := range p.LiftedAttrs() {
		weights += int64(len(v.Bytes()))
	}
	p = nil
	st, err := os.Stat(file)
	require.NoError(t, err)
	t.Logf("archive %d bytes, weights %d bytes", st.Size(), weights)
	require.GreaterOrEqual(t, weights, int64(1e9))

	out := filepath.Join(dir, "q.pt2")
	cmd := childCommand("rss", "run", "--no-progress", "-o", out, file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var peakKB int64
	for _, line := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peakKB, err = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err, "VmHWM line %q", line)
		}
	}
	require.Positive(t, peakKB, "the child printed no VmHWM line; stdout: %s", stdout.String())
	peak := peakKB * 1024
	ratio := float64(peak) / float64(weights)
	t.Logf("peak RSS %d bytes = %.2f x the weights (user %.1fs, sys %.1fs)", peak, ratio,
		float64(ru.Utime.Nano())/1e9, float64(ru.Stime.Nano())/1e9)
	require.LessOrEqual(t, ratio, rssBudget, "peak RSS over the budget")
}

// rssBudget is the peak resident memory TestRunPeakRSS allows, in units
// of the program's weight bytes: issue 15's goal, 1.5 plus one batch's
// activations (here under a megabyte, so 1.5). Measured: 1.46 (the mapped
// float weights, 1.0; their int8 copies, 0.25; in the per-node comparison
// one layer's dequantized weight; the runtime). It was 1.52 while the
// matrix product packed a whole 64 MiB weight at once (it now packs 1 MiB
// chunks), 1.78 before run lowered GOGC for programs with large weights
// (lowGCFor), and 7.16 before weights were mapped and shared, the writer
// streamed and constant nodes were deferred.
const rssBudget = 1.5
