package typed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/typed"
)

// mutatingPattern is a broken pattern: its Match edits the graph (the
// trap of typed-rewrites.md 4.1) and then reports no match.
type mutatingPattern struct{ target string }

func (mutatingPattern) Name() string { return "mutating" }

func (p mutatingPattern) Match(root *fxgraph.Node) (typed.Plan, string) {
	if root.Name() == p.target {
		root.Graph().SetKwarg(root, "alpha", int64(1))
	}
	return nil, "never applies"
}

// TestCanonicalizeDebugCatchesMutatingMatch: in Debug mode a Match that
// changes the nodes it reads is an error naming the pattern and the
// root; without Debug the driver trusts it.
func TestCanonicalizeDebugCatchesMutatingMatch(t *testing.T) {
	c := chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5, trailing: true,
		gc: []float32{1, 2, 3, 4, 5, 6}, hc: []float32{0, 0, 0, 0, 0, 0}}
	for _, tc := range []struct {
		name   string
		debug  bool
		errMsg string
	}{
		{"debug", true, `pattern mutating: Match at "add_tensor" changed the graph`},
		{"no_debug", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, nodes := c.build(t)
			_, err := typed.Canonicalize(g, typed.CanonOptions{Debug: tc.debug,
				Patterns: []typed.Pattern{mutatingPattern{target: nodes["add"].Name()}}})
			if tc.errMsg == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.errMsg)
		})
	}
}

// TestGroupNormFoldUsesGivenRegistry: the fold normalises instance_norm's
// arguments with the registry it is given, not ops.Default(): with an
// empty registry it refuses and says so; DefaultPatterns and
// CanonOptions.Registry pass the registry through.
func TestGroupNormFoldUsesGivenRegistry(t *testing.T) {
	c := chain{x: []int64{1, 6, 2, 2}, reshaped: []int64{1, 3, 8}, eps: 1e-5}
	t.Run("pattern_field", func(t *testing.T) {
		_, nodes := c.build(t)
		plan, why := typed.GroupNormFold{Registry: ops.NewRegistry()}.Match(nodes["bottom"])
		assert.Nil(t, plan)
		assert.Contains(t, why, "not in the registry")
		plan, why = typed.GroupNormFold{Registry: ops.Default()}.Match(nodes["bottom"])
		assert.NotNil(t, plan, why)
	})
	t.Run("canon_options", func(t *testing.T) {
		g, _ := c.build(t)
		before := fxgraph.Format(g)
		res, err := typed.Canonicalize(g, typed.CanonOptions{Registry: ops.NewRegistry()})
		require.NoError(t, err)
		assert.False(t, res.Changed)
		assert.Equal(t, before, fxgraph.Format(g))
		require.NotEmpty(t, res.Notes)
		assert.Contains(t, res.Notes[0], "not in the registry")
		pats := typed.DefaultPatterns(nil)
		require.Len(t, pats, 1)
		assert.Equal(t, "groupnorm_fold", pats[0].Name())
	})
}
