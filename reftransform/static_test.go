package reftransform_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
	"github.com/fxquant/fxquant/reftransform"
)

// callTargets lists the call_function targets of listing rows in order.
func callTargets(rows []fxgraph.ListingRow) []string {
	var out []string
	for _, r := range rows {
		if r.Op == fxgraph.CallFunction {
			out = append(out, r.Target)
		}
	}
	return out
}

// TestStaticFixtures rewrites each re-exported XNNPACK program
// (<m>.<mode>.pt2) and checks it against torchao's reference graph
// (<m>.<mode>.refrep.graph.txt: the same ops in the same order) and its
// outputs (refrep_outputs) within the README's tolerance for quantized
// programs.
func TestStaticFixtures(t *testing.T) {
	var files []string
	for _, mode := range []string{"static", "dynamic"} {
		f, err := filepath.Glob(filepath.Join(fixtureDir, "*."+mode+".pt2"))
		require.NoError(t, err)
		files = append(files, f...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".pt2")
		stem, mode, _ := strings.Cut(base, ".")
		t.Run(base, func(t *testing.T) {
			p, err := pt2.ReadFile(f, nil)
			require.NoError(t, err)
			g := p.Graph
			maxScale := 0.0
			for _, n := range g.Nodes() {
				if n.Op() == fxgraph.CallFunction && strings.Contains(n.Target().String(), "quantize_per_tensor") && !strings.Contains(n.Target().String(), "dequantize") {
					if s, ok := n.Arg(1).(float64); ok {
						maxScale = math.Max(maxScale, s)
					}
				}
			}
			_, err = reftransform.Run(g)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))

			want, err := fxgraph.ParseListingString(listing(t, base+".refrep.graph.txt"))
			require.NoError(t, err)
			gotRows, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
			require.NoError(t, err)
			assert.Equal(t, callTargets(want), callTargets(gotRows))

			raw, err := os.ReadFile(filepath.Join(fixtureDir, stem+".outputs.json"))
			require.NoError(t, err)
			var outs map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &outs))
			var inputs struct {
				Eval []jsonTensor `json:"eval"`
			}
			require.NoError(t, json.Unmarshal(outs["inputs"], &inputs))
			var res struct {
				RefrepOutputs []jsonTensor `json:"refrep_outputs"`
			}
			require.NoError(t, json.Unmarshal(outs[mode], &res))
			for i, x := range inputs.Eval {
				got, err := interp.RunNamed(g, programInputs(t, p, x.tensor(t)), interp.Options{})
				require.NoError(t, err)
				quantTol(t, got[0].(*tensor.Tensor), res.RefrepOutputs[i].tensor(t), maxScale)
			}
		})
	}
}

// quantTol is the README's tolerance for quantized programs run by another
// implementation: at least 90% of the elements within 1e-5 + 1e-5|b|, and
// every element within 4s, s the largest quantize scale (for a dynamic
// program, whose scales are computed at run time, 4e-2).
func quantTol(t *testing.T, got, want *tensor.Tensor, s float64) {
	t.Helper()
	if s == 0 {
		s = 1e-2
	}
	require.Equal(t, want.Shape(), got.Shape())
	g, w := floats(t, got), floats(t, want)
	close := 0
	for i := range g {
		d := math.Abs(float64(g[i]) - float64(w[i]))
		if d <= 1e-5+1e-5*math.Abs(float64(w[i])) {
			close++
		}
		if d > 4*s {
			t.Errorf("element %d: got %g, want %g: off by more than 4s = %g", i, g[i], w[i], 4*s)
		}
	}
	assert.GreaterOrEqual(t, float64(close), 0.9*float64(len(g)), "elements within the float tolerance")
}
