package typed

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// Lowered returns a lowered copy of a lifted (or partly lifted) graph, for
// running with the quantized semantics of typed-rewrites.md 2.5: in the
// copy every compute node dequantizes its typed inputs with their own
// types, computes in float32 and quantizes its result with its own type,
// through explicit q/dq nodes any interpreter runs (fxgraph/interp.Run).
// g is not modified. (typed does not import the interpreter: STYLE.md 2.1
// keeps it for convert, constfold, cmd and tests.)
func Lowered(g *fxgraph.Graph, reg *ops.Registry) (*fxgraph.Graph, error) {
	c, _ := g.Clone()
	if _, err := Lower(c, reg); err != nil {
		return nil, fmt.Errorf("typed: lowered copy: %w", err)
	}
	return c, nil
}
