package convert

import (
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// MoveToEval is torchao's move_exported_model_to_eval on an exported graph:
// it switches the dropout and batch-norm ops to their eval form, as
// model.eval() would before export. It returns how many nodes it changed.
//
// torchao rewrites them by pattern replacement with ignore_literals=True, so
// the replacement's literals win: every aten.dropout.default and
// aten.dropout_.default node becomes (x, 0.5, False), whatever its p, and
// every aten.batch_norm.default whose weight, bias, running_mean and
// running_var are nodes becomes (x, w, b, mean, var, False, 0.1, 1e-05,
// False), whatever its momentum and eps. fxquant does the same, so that the
// graph equals torchao's bit for bit (the QAT fixtures record p=0.25
// becoming 0.5).
func MoveToEval(g *fxgraph.Graph) int { return switchMode(g, false) }

// MoveToTrain is torchao's move_exported_model_to_train: the dropout and
// batch-norm nodes MoveToEval matches become (x, 0.5, True) and
// (x, w, b, mean, var, True, 0.1, 1e-05, False).
func MoveToTrain(g *fxgraph.Graph) int { return switchMode(g, true) }

func switchMode(g *fxgraph.Graph, train bool) int {
	changed := 0
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction {
			continue
		}
		switch n.Target() {
		case dropoutOp, dropoutInpl:
			if len(n.Args()) < 1 {
				continue
			}
			if _, ok := n.Arg(0).(*fxgraph.Node); !ok {
				continue
			}
			g.SetArgs(n, n.Arg(0), 0.5, train)
			g.SetKwargs(n, nil)
			changed++
		case bnDefault:
			if len(n.Args()) < 5 {
				continue
			}
			args := make([]ops.Value, 0, 9)
			ok := true
			for i := 0; i < 5; i++ {
				a, isNode := n.Arg(i).(*fxgraph.Node)
				ok = ok && isNode && a != nil
				args = append(args, n.Arg(i))
			}
			if !ok {
				continue
			}
			g.SetArgs(n, append(args, train, 0.1, 1e-05, false)...)
			g.SetKwargs(n, nil)
			changed++
		}
	}
	return changed
}
