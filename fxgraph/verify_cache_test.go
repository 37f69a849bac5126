package fxgraph

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// TestVerifyResultCacheStillChecksEveryNode: Verify reuses an op's last
// result-rule answer for identical typed arguments; a node whose own type
// disagrees with that answer must still be reported, wherever it sits
// among identical calls.
func TestVerifyResultCacheStillChecksEveryNode(t *testing.T) {
	relu := ops.MustOverload("aten.relu.default")
	f := ops.Plain(tensor.Float32, 2, 3)
	for bad := 0; bad < 4; bad++ {
		g := New()
		x := g.Placeholder("x", f)
		var outs ops.Tuple
		for i := 0; i < 4; i++ {
			r := g.Call(relu, x)
			if i == bad {
				r.SetType(ops.Plain(tensor.Float64, 2, 3))
			} else {
				r.SetType(f)
			}
			outs = append(outs, r)
		}
		g.SetOutput(outs)
		err := Verify(g, VerifyOptions{})
		require.Error(t, err, "wrong type on relu #%d", bad)
		require.True(t, errors.Is(err, ErrTypeMismatch))
		problems := VerifyErrors(err)
		require.Len(t, problems, 1, "only the mistyped node: %v", err)
		require.Equal(t, outs[bad].(*Node).Name(), problems[0].Node)
	}
}
