package typed

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// VerifyOptions returns verifier options that accept both the lowered and
// the lifted form: the registry is reg (nil means ops.Default()) and
// ResultType is [ResultRule].
func VerifyOptions(reg *ops.Registry) fxgraph.VerifyOptions {
	if reg == nil {
		reg = ops.Default()
	}
	return fxgraph.VerifyOptions{Registry: reg, ResultType: ResultRule(reg)}
}

// ResultRule returns a result-type hook for fxgraph.VerifyOptions that
// checks typed quantized values as package typed defines them:
//
//   - a compute node's quantized type is its contract: the op's rule,
//     applied to its inputs with every quantized element type read as its
//     expressed float type, must give the node's shape and expressed type;
//   - a quantize node typed with a quantized result must carry exactly the
//     element type its own arguments describe (ElementOf), over the storage
//     dtype and shape its rule gives;
//   - a dequantize node reading a typed value must read exactly the
//     element type its arguments describe.
//
// Nodes without quantized types are checked by the op's own rule.
func ResultRule(reg *ops.Registry) func(n *fxgraph.Node, def *ops.OpDef, args []ops.Value) (ops.Type, error) {
	if reg == nil {
		reg = ops.Default()
	}
	return func(n *fxgraph.Node, def *ops.OpDef, args []ops.Value) (ops.Type, error) {
		if def.Result == nil {
			return nil, nil
		}
		anyQ := isQuantized(n.Type())
		for _, a := range args {
			_, _ = ops.MapValue(a, func(x ops.Value) (ops.Value, error) {
				if t, ok := x.(ops.Type); ok && isQuantized(t) {
					anyQ = true
				}
				return x, nil
			})
		}
		if !anyQ {
			return ops.ApplyRule(def.Result, args)
		}
		t := def.Target
		switch {
		case isQuantizeOp(t):
			want, err := ops.ApplyRule(def.Result, mapArgs(args, false))
			if err != nil || !isQuantized(n.Type()) {
				return want, err
			}
			nt := n.Type().(ops.TensorType)
			e, err := ElementOf(n, reg)
			if err != nil {
				return nil, fmt.Errorf("typed result %s: %w", nt, err)
			}
			if !nt.Elem.Equal(e) {
				return nil, fmt.Errorf("typed result %s does not match the node's qparams %s (%s)", nt.Elem, e,
					ops.TypeDiff(ops.TensorType{Elem: e}, ops.TensorType{Elem: nt.Elem}))
			}
			if wt, ok := want.(ops.TensorType); ok && ops.TypeAccepts(wt, ops.TensorType{Shape: nt.Shape, Syms: nt.Syms, Elem: ops.Scalar{DType: nt.DType()}}) {
				return nt, nil
			}
			return want, nil
		case isDequantizeOp(t):
			if in, ok := n.Arg(0).(*fxgraph.Node); ok && isQuantized(in.Type()) {
				e, err := ElementOf(n, reg)
				if err != nil {
					return nil, fmt.Errorf("typed input: %w", err)
				}
				it := in.Type().(ops.TensorType)
				if !it.Elem.Equal(e) {
					return nil, fmt.Errorf("arg 0 (input) has type %s, but the node's qparams describe %s (%s)", it.Elem, e,
						ops.TypeDiff(ops.TensorType{Elem: e}, ops.TensorType{Elem: it.Elem}))
				}
			}
			return ops.ApplyRule(def.Result, mapArgs(args, true))
		case isQDQ(n):
			return ops.ApplyRule(def.Result, mapArgs(args, true))
		}
		want, err := ops.ApplyRule(def.Result, mapArgs(args, false))
		if err != nil || !isQuantized(n.Type()) {
			return want, err
		}
		nt := n.Type().(ops.TensorType)
		exp, _ := expressedOf(nt.Elem)
		if wt, ok := want.(ops.TensorType); ok && ops.TypeAccepts(wt, ops.TensorType{Shape: nt.Shape, Syms: nt.Syms, Elem: ops.Scalar{DType: exp}}) {
			return nt, nil
		}
		return want, nil
	}
}

// mapArgs replaces every quantized tensor type in args by the plain type
// of its storage (storage true) or expressed dtype.
func mapArgs(args []ops.Value, storage bool) []ops.Value {
	out := make([]ops.Value, len(args))
	for i, a := range args {
		out[i], _ = ops.MapValue(a, func(x ops.Value) (ops.Value, error) {
			tt, ok := x.(ops.TensorType)
			if !ok || !tt.IsQuantized() {
				return x, nil
			}
			d := tt.DType()
			if !storage {
				d, _ = expressedOf(tt.Elem)
			}
			return ops.TensorType{Shape: tt.Shape, Syms: tt.Syms, Elem: ops.Scalar{DType: d}}, nil
		})
	}
	return out
}
