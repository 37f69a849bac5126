package match_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
)

// Targets as symbolic_trace records them (torch functions, operator.*).
func torchFn(name string) ops.Target { return ops.Callable{Module: "torch", Name: name} }
func opFn(name string) ops.Target    { return ops.Callable{Module: "operator", Name: name} }

var (
	tNeg     = torchFn("neg")
	tAdd     = torchFn("add")
	tCat     = torchFn("cat")
	tMax     = torchFn("max")
	tSum     = torchFn("sum")
	tSigmoid = torchFn("sigmoid")
	tAddmm   = torchFn("addmm")
	tRand    = torchFn("rand")
	tLinearF = ops.Callable{Module: "torch.nn.functional", Name: "linear"}
	oAdd     = opFn("add")
	oIAdd    = opFn("iadd")
	oMul     = opFn("mul")

	// aten overloads and packets
	atenAdd     = ops.MustOverload("aten.add.Tensor")
	atenLinear  = ops.MustOverload("aten.linear.default")
	atenLinearP = ops.MustPacket("aten.linear")
	atenRelu    = ops.MustOverload("aten.relu.default")
	atenSigmoid = ops.MustOverload("aten.sigmoid.default")
	atenNeg     = ops.MustOverload("aten.neg.default")
	atenCat     = ops.MustOverload("aten.cat.default")
	atenConv    = ops.MustOverload("aten.convolution.default")
	qdq         = ops.Packet{NS: "quantized_decomposed", Name: "dequantize_per_tensor"}
	qq          = ops.Packet{NS: "quantized_decomposed", Name: "quantize_per_tensor"}
	dqDefault   = qdq.Default()
	qDefault    = qq.Default()
)

// testRegistry holds hand-written schemas (from the PyTorch native
// function declarations) for the overloads the tests normalise.
func testRegistry() *ops.Registry {
	r := ops.NewRegistry()
	tensorT := ops.ArgType{Base: "Tensor"}
	optTensor := ops.ArgType{Base: "Tensor", Optional: true}
	scalar := ops.ArgType{Base: "Scalar"}
	intT := ops.ArgType{Base: "int"}
	floatT := ops.ArgType{Base: "float"}
	dtypeT := ops.ArgType{Base: "ScalarType"}
	defs := []*ops.OpDef{
		// add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
		{Target: atenAdd, Schema: &ops.Schema{Name: "add", Overload: "Tensor", Args: []ops.Argument{
			{Name: "self", Type: tensorT}, {Name: "other", Type: tensorT},
			{Name: "alpha", Type: scalar, HasDefault: true, Default: int64(1), KwargOnly: true}}}},
		// linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
		{Target: atenLinear, Schema: &ops.Schema{Name: "linear", Overload: "default", Args: []ops.Argument{
			{Name: "input", Type: tensorT}, {Name: "weight", Type: tensorT},
			{Name: "bias", Type: optTensor, HasDefault: true, Default: nil}}}},
		{Target: atenRelu, Schema: &ops.Schema{Name: "relu", Overload: "default", Args: []ops.Argument{{Name: "self", Type: tensorT}}}},
		{Target: atenSigmoid, Schema: &ops.Schema{Name: "sigmoid", Overload: "default", Args: []ops.Argument{{Name: "self", Type: tensorT}}}},
		{Target: atenNeg, Schema: &ops.Schema{Name: "neg", Overload: "default", Args: []ops.Argument{{Name: "self", Type: tensorT}}}},
		// cat(Tensor[] tensors, int dim=0) -> Tensor
		{Target: atenCat, Schema: &ops.Schema{Name: "cat", Overload: "default", Args: []ops.Argument{
			{Name: "tensors", Type: ops.ArgType{Base: "Tensor", List: true}},
			{Name: "dim", Type: intT, HasDefault: true, Default: int64(0)}}}},
		// convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding,
		//   SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor
		{Target: atenConv, Schema: &ops.Schema{Name: "convolution", Overload: "default", Args: []ops.Argument{
			{Name: "input", Type: tensorT}, {Name: "weight", Type: tensorT}, {Name: "bias", Type: optTensor},
			{Name: "stride", Type: ops.ArgType{Base: "SymInt", List: true}},
			{Name: "padding", Type: ops.ArgType{Base: "SymInt", List: true}},
			{Name: "dilation", Type: ops.ArgType{Base: "SymInt", List: true}},
			{Name: "transposed", Type: ops.ArgType{Base: "bool"}},
			{Name: "output_padding", Type: ops.ArgType{Base: "SymInt", List: true}},
			{Name: "groups", Type: ops.ArgType{Base: "SymInt"}}}}},
		// quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor
		{Target: qDefault, Schema: &ops.Schema{Name: "quantize_per_tensor", Overload: "default", Args: []ops.Argument{
			{Name: "input", Type: tensorT}, {Name: "scale", Type: floatT}, {Name: "zero_point", Type: intT},
			{Name: "quant_min", Type: intT}, {Name: "quant_max", Type: intT}, {Name: "dtype", Type: dtypeT}}}},
		// dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max,
		//   ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor
		{Target: dqDefault, Schema: &ops.Schema{Name: "dequantize_per_tensor", Overload: "default", Args: []ops.Argument{
			{Name: "input", Type: tensorT}, {Name: "scale", Type: floatT}, {Name: "zero_point", Type: intT},
			{Name: "quant_min", Type: intT}, {Name: "quant_max", Type: intT}, {Name: "dtype", Type: dtypeT},
			{Name: "out_dtype", Type: ops.ArgType{Base: "ScalarType", Optional: true}, HasDefault: true, KwargOnly: true}}}},
	}
	for _, d := range defs {
		if err := r.Register(d); err != nil {
			panic(err)
		}
	}
	return r
}

// mustGraph builds a test graph with the pattern builder's API.
func mustGraph(fn func(b *match.Builder) ops.Value) *fxgraph.Graph {
	g, err := match.NewGraph(fn)
	if err != nil {
		panic(err)
	}
	return g
}

func mustPattern(fn func(b *match.Builder) ops.Value) *match.Pattern {
	p, err := match.NewPattern(fn)
	if err != nil {
		panic(err)
	}
	return p
}

// dump returns g in fxgraph's golden text format ([fxgraph.Format]):
// every live node with its name, type, user count, opcode, target and
// arguments. It is the byte-level witness that a graph did or did not
// change.
func dump(g *fxgraph.Graph) string { return fxgraph.Format(g) }

// parseGraph builds a test graph from fxgraph's golden text format.
func parseGraph(t testing.TB, src string) *fxgraph.Graph {
	t.Helper()
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err, "test graph:\n%s", src)
	return g
}

// names lists the graph names bound to the non-placeholder pattern nodes,
// in pattern order.
func names(m *match.Match) string {
	var parts []string
	for _, n := range m.GraphNodes() {
		parts = append(parts, n.Name())
	}
	return strings.Join(parts, " ")
}
