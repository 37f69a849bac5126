package fxgraph

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// sweepAccepts reports whether Verify's one-sweep check accepts g on its
// own, without falling back to the separate diagnostic passes. Verify's
// answer is the same either way; the fallback only costs time, so a
// well-formed graph the sweep rejects is a bug this catches.
func sweepAccepts(g *Graph, opts VerifyOptions) bool {
	v := &verifier{g: g, opts: opts, reg: opts.Registry, max: 100}
	return v.wellFormed()
}

// TestVerifySweepAcceptsValidGraphs checks that the one-sweep check alone
// accepts the valid test graphs, also after edits that leave tombstoned
// use records and forward-declared names behind.
func TestVerifySweepAcceptsValidGraphs(t *testing.T) {
	g, nodes := irValid(t)
	opts := irOpts(t)
	require.True(t, sweepAccepts(g, opts))
	c, _ := irChain()
	require.True(t, sweepAccepts(c, opts))

	// Moving a use leaves a tombstone in the old input's use list.
	require.NoError(t, g.SetArg(nodes["q"], 0, nodes["linear"]))
	require.NotZero(t, nodes["relu"].deadUses)
	require.NoError(t, Verify(g, opts))
	require.True(t, sweepAccepts(g, opts))
}
