package reftransform_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
	"github.com/fxquant/fxquant/reftransform"
)

// TestRunFailureAtEveryStep injects a failure at every step of Run on
// real programs (retargeting each q/dq node, applying each entry, calling
// each int4 metadata hook): after each failure the graph prints and
// verifies exactly as before, and a run without failure then gives what
// it gives on a freshly read program, names included.
func TestRunFailureAtEveryStep(t *testing.T) {
	verify := func(g *fxgraph.Graph) string {
		if err := fxgraph.Verify(g, fxgraph.VerifyOptions{}); err != nil {
			return err.Error()
		}
		return ""
	}
	for _, name := range []string{"cnn.static.pt2", "mlp.dynamic.pt2", "int4_linear_g16.converted.pt2"} {
		t.Run(name, func(t *testing.T) {
			read := func() *fxgraph.Graph {
				p, err := pt2.ReadFile(filepath.Join(fixtureDir, name), nil)
				require.NoError(t, err)
				return p.Graph
			}
			fresh := read()
			res, err := reftransform.Run(fresh)
			require.NoError(t, err)
			require.True(t, res.Changed)
			want := fxgraph.Format(fresh)
			for k := 1; ; k++ {
				g := read()
				before, vBefore := fxgraph.Format(g), verify(g)
				restore := reftransform.SetFailAt(k)
				_, err := reftransform.Run(g)
				restore()
				if err == nil {
					require.Equal(t, want, fxgraph.Format(g))
					t.Logf("%d steps", k-1)
					require.Greater(t, k, 12, "every entry is a step")
					break
				}
				require.ErrorIs(t, err, reftransform.ErrInjected, "step %d", k)
				require.Equal(t, before, fxgraph.Format(g), "after a failure at step %d", k)
				require.Equal(t, vBefore, verify(g), "after a failure at step %d", k)
				_, err = reftransform.Run(g)
				require.NoError(t, err)
				require.Equal(t, want, fxgraph.Format(g), "the run after a failure at step %d", k)
			}
		})
	}
}

// TestRunEntryFailureLeavesGraphUnchanged: RunEntry is all or nothing too.
func TestRunEntryFailureLeavesGraphUnchanged(t *testing.T) {
	p, err := pt2.ReadFile(filepath.Join(fixtureDir, "int4_linear_g16.converted.pt2"), nil)
	require.NoError(t, err)
	g := p.Graph
	before := fxgraph.Format(g)
	defer reftransform.SetFailAt(2)() // the first int4 metadata hook
	n, err := reftransform.RunEntry(g, "int4_dynamic_linear_2d")
	require.ErrorIs(t, err, reftransform.ErrInjected)
	require.Positive(t, n, "the entry replaced matches before the hook failed")
	require.Equal(t, before, fxgraph.Format(g))
}
