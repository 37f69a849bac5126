package pt2

import (
	"fmt"
	"math"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// scaleArgs are the schema argument names that hold quantization scales.
var scaleArgs = []string{"scale", "scales"}

// checkStoredScales reports a stored parameter, buffer or constant that a
// quantize or dequantize node takes as its scale and that holds NaN, an
// infinity, zero or a negative value. The error names the stored tensor
// and the element first (the bad input), then the node that uses it:
// left alone, it would surface as a failure of some node downstream.
func (p *Program) checkStoredScales(reg *ops.Registry) error {
	byName := map[string]InputSpec{}
	for _, s := range p.Signature.Inputs {
		if s.Kind == Parameter || s.Kind == Buffer || s.Kind == TensorConstant {
			byName[s.Name] = s
		}
	}
	stored := map[*fxgraph.Node]InputSpec{}
	for _, ph := range p.Graph.Placeholders() {
		if s, ok := byName[ph.Name()]; ok {
			stored[ph] = s
		}
	}
	if len(stored) == 0 {
		return nil
	}
	for _, n := range p.Graph.Nodes() {
		o, ok := n.Target().(ops.Overload)
		if !ok || n.Op() != fxgraph.CallFunction {
			continue
		}
		schema, ok := reg.Schema(o)
		if !ok {
			continue
		}
		for _, name := range scaleArgs {
			i := schema.ArgIndex(name)
			if i < 0 {
				continue
			}
			var v ops.Value
			if i < len(n.Args()) {
				v = n.Arg(i)
			} else if kv, ok := n.Kwarg(name); ok {
				v = kv
			}
			ph, ok := v.(*fxgraph.Node)
			if !ok {
				continue
			}
			s, ok := stored[ph]
			if !ok {
				continue
			}
			attr, ok := p.Graph.Attr(s.Target)
			if !ok {
				continue
			}
			t, ok := attr.(*tensor.Tensor)
			if !ok || !t.DType().IsFloat() {
				continue
			}
			vals, err := t.Float64s()
			if err != nil {
				continue
			}
			for k, x := range vals {
				if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
					return fmt.Errorf("%s %q (placeholder %q): element %v is %v, but it is the %s of node %q (%s), which must be finite and > 0",
						s.Kind, s.Target, s.Name, tensor.Unravel(k, t.Shape()), x, name, n.Name(), o)
				}
			}
		}
	}
	return nil
}
