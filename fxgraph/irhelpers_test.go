package fxgraph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Targets of the small test registry (irRegistry).
var (
	irAdd      = ops.MustOverload("aten.add.Tensor")
	irAddS     = ops.MustOverload("aten.add.Scalar")
	irRelu     = ops.MustOverload("aten.relu.default")
	irLinear   = ops.MustOverload("aten.linear.default")
	irQuant    = ops.MustOverload("quantized_decomposed.quantize_per_tensor.default")
	irCopy     = ops.MustOverload("aten.copy_.default")
	irAssert   = ops.MustOverload("aten._assert_scalar.default")
	irSum      = ops.MustOverload("aten.sum.default")
	irAddPkt   = ops.MustPacket("aten.add")
	irUnknown  = ops.MustOverload("aten.nosuch.default")
	irSetItem  = ops.Callable{Module: "operator", Name: "setitem"}
	irTensorT  = ops.ArgType{Base: "Tensor"}
	irTensorW  = ops.ArgType{Base: "Tensor", Alias: "a", Write: true}
	irTensorO  = ops.ArgType{Base: "Tensor", Optional: true}
	irScalarT  = ops.ArgType{Base: "Scalar"}
	irFloatT   = ops.ArgType{Base: "float"}
	irIntT     = ops.ArgType{Base: "int"}
	irDTypeT   = ops.ArgType{Base: "ScalarType"}
	irStrT     = ops.ArgType{Base: "str"}
	irF32      = ops.Plain(tensor.Float32, 2, 3)
	irTensorRt = []ops.Argument{{Name: "", Type: irTensorT}}
)

func irArg(name string, t ops.ArgType) ops.Argument { return ops.Argument{Name: name, Type: t} }

// irSame is a result rule: the type of the first argument, and for a
// second tensor argument, the same type (else "arg 1: want ..., got ...").
func irSame(args []ops.Value) (ops.Type, error) {
	t, ok := args[0].(ops.TensorType)
	if !ok {
		return nil, fmt.Errorf("arg 0: want a tensor type, got %v", args[0])
	}
	if len(args) > 1 {
		if u, ok := args[1].(ops.TensorType); ok && !u.Equal(t) {
			return nil, fmt.Errorf("arg 1: want %v, got %v", t, u)
		}
	}
	return t, nil
}

// irLinearRule: input [..., in] and weight [out, in] give [..., out].
func irLinearRule(args []ops.Value) (ops.Type, error) {
	x, ok1 := args[0].(ops.TensorType)
	w, ok2 := args[1].(ops.TensorType)
	if !ok1 || !ok2 || x.Rank() == 0 {
		return nil, fmt.Errorf("want tensor input and weight")
	}
	in := x.Shape[x.Rank()-1]
	if w.Rank() != 2 || w.Shape[1] != in {
		return nil, fmt.Errorf("arg 1: want %s[%d, %d], got %v", x.Elem, w.Shape[0], in, w)
	}
	shape := append(append([]int64(nil), x.Shape[:x.Rank()-1]...), w.Shape[0])
	return ops.TensorType{Shape: shape, Elem: x.Elem}, nil
}

// irQuantRule gives quantize_per_tensor's result the per-tensor quantized
// element type of its arguments (a quantized result contract).
func irQuantRule(args []ops.Value) (ops.Type, error) {
	x, ok := args[0].(ops.TensorType)
	if !ok {
		return nil, fmt.Errorf("arg 0: want a tensor type, got %v", args[0])
	}
	q, err := ops.NewUniformQuantized(args[5].(tensor.DType), args[3].(int64), args[4].(int64), x.DType(), args[1].(float64), args[2].(int64))
	if err != nil {
		return nil, err
	}
	return ops.TensorType{Shape: x.Shape, Elem: q}, nil
}

// irRegistry is a small registry with hand-written schemas (the same text
// as PyTorch's) and result rules written in this file.
func irRegistry(t testing.TB) *ops.Registry {
	t.Helper()
	r := ops.NewRegistry()
	defs := []*ops.OpDef{
		{Target: irAdd, Result: irSame, Schema: &ops.Schema{Name: "add", Overload: "Tensor", Returns: irTensorRt,
			Args: []ops.Argument{irArg("self", irTensorT), irArg("other", irTensorT),
				{Name: "alpha", Type: irScalarT, HasDefault: true, Default: int64(1), KwargOnly: true}}}},
		{Target: irAddS, Result: irSame, Schema: &ops.Schema{Name: "add", Overload: "Scalar", Returns: irTensorRt,
			Args: []ops.Argument{irArg("self", irTensorT), irArg("other", irScalarT),
				{Name: "alpha", Type: irScalarT, HasDefault: true, Default: int64(1)}}}},
		{Target: irRelu, Result: irSame, Schema: &ops.Schema{Name: "relu", Overload: "default", Returns: irTensorRt,
			Args: []ops.Argument{irArg("self", irTensorT)}}},
		{Target: irLinear, Result: irLinearRule, Schema: &ops.Schema{Name: "linear", Overload: "default", Returns: irTensorRt,
			Args: []ops.Argument{irArg("input", irTensorT), irArg("weight", irTensorT),
				{Name: "bias", Type: irTensorO, HasDefault: true}}}},
		{Target: irQuant, Result: irQuantRule, Schema: &ops.Schema{Name: "quantize_per_tensor", Overload: "default", Returns: irTensorRt,
			Args: []ops.Argument{irArg("input", irTensorT), irArg("scale", irFloatT), irArg("zero_point", irIntT),
				irArg("quant_min", irIntT), irArg("quant_max", irIntT), irArg("dtype", irDTypeT)}}},
		{Target: irCopy, Schema: &ops.Schema{Name: "copy_", Overload: "default", Returns: irTensorRt,
			Args: []ops.Argument{irArg("self", irTensorW), irArg("src", irTensorT)}}},
		{Target: irAssert, Impure: true, Schema: &ops.Schema{Name: "_assert_scalar", Overload: "default",
			Args: []ops.Argument{irArg("self", irScalarT), irArg("assert_msg", irStrT)}}},
		{Target: irSum, Result: irSame, Schema: &ops.Schema{Name: "sum", Overload: "default", Returns: irTensorRt,
			Args: []ops.Argument{irArg("self", irTensorT)}}},
	}
	for _, d := range defs {
		require.NoError(t, r.Register(d))
	}
	r.MarkImpureCallable(irSetItem)
	return r
}

// irOpts verifies against the test registry.
func irOpts(t testing.TB) VerifyOptions { return VerifyOptions{Registry: irRegistry(t)} }

// irChain builds x -> relu -> add(relu, relu) -> output, typed f32[2, 3].
func irChain() (*Graph, map[string]*Node) {
	g := New()
	x := g.Placeholder("x", irF32)
	r := g.Call(irRelu, x)
	r.SetType(irF32)
	a := g.Call(irAdd, r, r)
	a.SetType(irF32)
	o := g.SetOutput(ops.Tuple{a})
	return g, map[string]*Node{"x": x, "relu": r, "add": a, "output": o}
}

// irDump is a structural fingerprint of g, written for these tests (it is
// not the golden format): one line per node with name, opcode, target,
// arguments, type and user count, then the attribute names.
func irDump(g *Graph) string {
	var b strings.Builder
	for n := range g.All() {
		typ := "-"
		if n.Type() != nil {
			typ = n.Type().String()
		}
		fmt.Fprintf(&b, "%s = %s[%s](%s | %s) : %s users=%d uses=%d\n", n.Name(), n.Op(), n.TargetName(),
			irValues(n.Args()), irKwargs(n.Kwargs()), typ, n.NumUsers(), n.NumUses())
	}
	fmt.Fprintf(&b, "attrs %v\n", g.AttrNames())
	return b.String()
}

func irValues(vs []ops.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = irValue(v)
	}
	return strings.Join(parts, ", ")
}

func irKwargs(kws []Kwarg) string {
	parts := make([]string, len(kws))
	for i, kw := range kws {
		parts[i] = kw.Name + "=" + irValue(kw.Value)
	}
	return strings.Join(parts, ", ")
}

func irValue(v ops.Value) string {
	switch x := v.(type) {
	case *Node:
		return x.String()
	case ops.List:
		return "[" + irValues(x) + "]"
	case ops.Tuple:
		return "(" + irValues(x) + ")"
	case ops.Dict:
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = x.Keys[i] + ": " + irValue(x.Values[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case ops.Slice:
		return "slice(" + irValue(x.Start) + ", " + irValue(x.Stop) + ", " + irValue(x.Step) + ")"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// irNames returns the names of nodes.
func irNames(ns []*Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name()
	}
	return out
}

// irFind returns the VerifyError of class check on node name, failing the
// test when there is none.
func irFind(t *testing.T, err error, check error, node string) *VerifyError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, check)
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	for _, e := range VerifyErrors(err) {
		if e.Check == check && e.Node == node {
			return e
		}
	}
	require.Failf(t, "no such problem", "want a %v problem on node %q, got:\n%v", check, node, err)
	return nil
}
