package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuickstartRuns runs the example end to end: it must finish without
// error, print a graph in the golden format, and report the SQNR line.
func TestQuickstartRuns(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	runErr := run()
	os.Stdout = stdout
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, runErr)
	text := string(out)
	require.True(t, strings.HasPrefix(text, "graph():\n"), "prints the golden format first:\n%s", text)
	require.Contains(t, text, "torch.ops.higher_order.out_dtype", "the reference representation replaced the second linear")
	require.Contains(t, text, "float vs quantized output SQNR:")
}
