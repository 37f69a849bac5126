package numdebug_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/constfold"
	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	linearOp = ops.MustOverload("aten.linear.default")
	reluOp   = ops.MustOverload("aten.relu.default")
	addOp    = ops.MustOverload("aten.add.Tensor")
)

// buildMLP returns layers x (linear(width -> width) -> relu) on an input
// f32[batch, width], with seeded random weights as graph attributes.
func buildMLP(rng *rand.Rand, layers, width, batch int) *fxgraph.Graph {
	g := fxgraph.New()
	param := func(name string, shape ...int) *fxgraph.Node {
		vals := make([]float32, tensor.Numel(shape))
		for i := range vals {
			vals[i] = float32(rng.NormFloat64() / math.Sqrt(float64(width)))
		}
		g.SetAttr(name, tensor.MustFromData(tensor.Float32, shape, vals))
		return g.GetAttr(name, ops.Plain(tensor.Float32, ops.ShapeInts(shape)...))
	}
	var ws, bs []*fxgraph.Node
	for i := range layers {
		ws = append(ws, param("fc"+strconv.Itoa(i)+".weight", width, width))
		bs = append(bs, param("fc"+strconv.Itoa(i)+".bias", width))
	}
	h := g.Placeholder("x", ops.Plain(tensor.Float32, int64(batch), int64(width)))
	for i := range layers {
		h = g.Call(linearOp, h, ws[i], bs[i])
		h.SetType(ops.Plain(tensor.Float32, int64(batch), int64(width)))
		h = g.Call(reluOp, h)
		h.SetType(ops.Plain(tensor.Float32, int64(batch), int64(width)))
	}
	g.SetOutput(ops.Tuple{h})
	return g
}

// randomBatches are n batches of one f32[batch, width] input.
func randomBatches(rng *rand.Rand, n, batch, width int) [][]*tensor.Tensor {
	return randomShaped(rng, n, []int{batch, width})
}

func xnnpack() convert.Quantizer {
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	return convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))
}

// TestGenerateHandles checks torchao's numbering rules on a hand-built
// graph: placeholders, get_attr nodes and the output get none; numbers
// follow graph order from 1; a graph that already has handles continues
// after the largest one and keeps the ones it has.
func TestGenerateHandles(t *testing.T) {
	g := buildMLP(rand.New(rand.NewPCG(1, 1)), 2, 4, 1)
	assert.Equal(t, 4, numdebug.GenerateHandles(g))
	var got []string
	for n := range g.All() {
		got = append(got, n.Name()+"="+strconv.Itoa(n.Meta.NumericDebugHandle))
	}
	assert.Equal(t, []string{"fc0_weight=0", "fc0_bias=0", "fc1_weight=0", "fc1_bias=0", "x=0",
		"linear_default=1", "relu_default=2", "linear_default_1=3", "relu_default_1=4", "output=0"}, got)
	assert.Equal(t, 0, numdebug.GenerateHandles(g), "a second call finds every node numbered")

	g = buildMLP(rand.New(rand.NewPCG(1, 1)), 2, 4, 1)
	for n := range g.All() {
		if n.Name() == "relu_default" {
			n.Meta.NumericDebugHandle = 7
		}
	}
	numdebug.GenerateHandles(g)
	got = got[:0]
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction {
			got = append(got, n.Name()+"="+strconv.Itoa(n.Meta.NumericDebugHandle))
		}
	}
	assert.Equal(t, []string{"linear_default=8", "relu_default=7", "linear_default_1=9", "relu_default_1=10"}, got)
}

// TestCompareHandCalculated compares two hand-built graphs whose values
// differ by a known amount. float: relu(x). quant: relu(x) + 0.125 with
// both nodes holding handle 1, so the add (the last holder) is compared.
// x = [1, -1, 2, 3]: f = [1, 0, 2, 3], q = [1.125, .125, 2.125, 3.125].
// Σq² = 1.265625 + .015625 + 4.515625 + 9.765625 = 15.5625,
// Σ(q-f)² = 4 × .015625 = .0625, SQNR = 10 log10(249) dB.
func TestCompareHandCalculated(t *testing.T) {
	typ := ops.Plain(tensor.Float32, 4)
	float := fxgraph.New()
	x := float.Placeholder("x", typ)
	r := float.Call(reluOp, x)
	r.SetType(typ)
	float.SetOutput(ops.Tuple{r})
	r.Meta.NumericDebugHandle = 1

	quant := fxgraph.New()
	x = quant.Placeholder("x", typ)
	r = quant.Call(reluOp, x)
	r.SetType(typ)
	quant.SetAttr("off", tensor.F32([]int{1}, 0.125))
	off := quant.GetAttr("off", ops.Plain(tensor.Float32, 1))
	a := quant.Call(addOp, r, off)
	a.SetType(typ)
	quant.SetOutput(ops.Tuple{a})
	r.Meta.NumericDebugHandle, a.Meta.NumericDebugHandle = 1, 1

	in := [][]*tensor.Tensor{{tensor.F32([]int{4}, 1, -1, 2, 3)}, {tensor.F32([]int{4}, 1, -1, 2, 3)}}
	c, err := numdebug.Compare(float, quant, in)
	require.NoError(t, err)
	require.Len(t, c.Results, 1)
	res := c.Results[0]
	assert.Equal(t, "relu_default", res.FloatNode)
	assert.Equal(t, "add_tensor", res.QuantNode)
	assert.Equal(t, "aten.relu.default", res.Target)
	assert.InDelta(t, 10*math.Log10(249), res.SQNR, 1e-9)
	assert.InDeltaSlice(t, []float64{10 * math.Log10(249), 10 * math.Log10(249)}, res.BatchSQNR, 1e-9)
	assert.Equal(t, 0.125, res.MaxAbsErr)
	assert.Equal(t, 0.0, res.Min)
	assert.Equal(t, 3.0, res.Max)
	assert.True(t, math.IsInf(res.Growth, 1), "the input x is exact")
	assert.Equal(t, 0, c.WorstGrowth)
	assert.Equal(t, 2, c.Batches)
	require.NotNil(t, c.Output, "the graphs' outputs are compared too")
	assert.InDelta(t, 10*math.Log10(249), c.Output.SQNR, 1e-9)

	// Shapes that differ are an error naming both nodes.
	quant.SetAttr("off", tensor.F32([]int{2, 1}, 0.125, 0.125))
	off.SetType(ops.Plain(tensor.Float32, 2, 1))
	a.SetType(ops.Plain(tensor.Float32, 2, 4))
	_, err = numdebug.Compare(float, quant, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `float node "relu_default" of shape [4] with quantized node "add_tensor" of shape [2 4]`)
}

// quantizeMLP runs the fxquant flow on the fixture MLP PyTorch exported,
// with handles generated first.
func readFixture(t *testing.T, name string) (*pt2.Program, *fxgraph.Graph) {
	t.Helper()
	prog, err := pt2.ReadFile("../tests/testdata/pt2e/"+name+".float.pt2", nil)
	require.NoError(t, err)
	g, err := prog.Unlifted()
	require.NoError(t, err)
	return prog, g
}

// TestHandlesSurviveEveryPass follows the handles of the fixture MLP and
// CNN through prepare (each output observer takes its node's handle),
// convert (the quantize and dequantize that replace an observer take its
// handle), the reference rewrites, constant folding and a .pt2 write and
// read, which keeps them in node.meta["custom"] as torchao does.
func TestHandlesSurviveEveryPass(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		for _, ref := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "/reference"}[ref], func(t *testing.T) {
				prog, g := readFixture(t, name)
				numdebug.GenerateHandles(g)
				float, _ := g.Clone()
				handled := map[string]int{}
				for n := range float.All() {
					if h := n.Meta.NumericDebugHandle; h != 0 {
						handled[n.Name()] = h
					}
				}
				require.NotEmpty(t, handled)
				require.NoError(t, convert.Prepare(g, xnnpack()))
				// Every observer of a handled node's output has its handle.
				observed := map[int]string{} // handle -> float node
				for n := range g.All() {
					if n.Op() != fxgraph.CallModule {
						continue
					}
					src := n.InputNodes()[0]
					if h := handled[src.Name()]; h != 0 && len(src.Users()) == 1 {
						assert.Equal(t, h, n.Meta.NumericDebugHandle, "observer %s of %s", n.Name(), src.Name())
						observed[h] = src.Name()
					}
				}
				require.NotEmpty(t, observed)
				shape := []int{4, 32}
				if name == "cnn" {
					shape = []int{1, 3, 16, 16}
				}
				batches := randomShaped(rand.New(rand.NewPCG(3, 4)), 2, shape)
				require.NoError(t, convert.Calibrate(g, batches, nil))
				require.NoError(t, convert.Convert(g, convert.ConvertOptions{ReferenceRepresentation: ref}))
				check := func(g *fxgraph.Graph, where string) {
					// Every handled float call that was quantized ends in a
					// dequantize with its handle; every node with a handle
					// has one of the float graph's.
					valid := map[int]bool{}
					for _, h := range handled {
						valid[h] = true
					}
					dqs := 0
					for n := range g.All() {
						h := n.Meta.NumericDebugHandle
						if h == 0 {
							continue
						}
						assert.True(t, valid[h], "%s: node %s has handle %d, which no float node has", where, n.Name(), h)
						if n.Op() == fxgraph.CallFunction && strings.HasPrefix(n.Target().String(), "quantized_decomposed.dequantize") {
							dqs++
						}
					}
					if !ref {
						assert.NotZero(t, dqs, "%s: no dequantize holds a handle", where)
					}
					// The handle of each observed node ends after it: at the
					// dequantize that replaced its observer, or (reference
					// representation) at the node that returns the rewritten
					// dequantize's value.
					last := numdebug.Handles(g)
					for h, fname := range observed {
						nodes := last[h]
						require.NotEmpty(t, nodes, "%s: handle %d of %s is lost", where, h, fname)
						lastNode := nodes[len(nodes)-1]
						assert.NotEqual(t, fname, lastNode.Name(), "%s: handle %d ends at its float node", where, h)
						if !ref {
							assert.True(t, strings.HasPrefix(lastNode.Target().String(), "quantized_decomposed.dequantize"),
								"%s: handle %d of %s ends at %s, want a dequantize", where, h, fname, lastNode.Name())
						}
					}
				}
				check(g, "converted")

				// Written to a .pt2 and read back: the same handles, stored
				// as torchao stores them.
				fxgraph.InferMissingTypes(g, nil)
				out, err := prog.WithGraph(g)
				require.NoError(t, err)
				var buf bytes.Buffer
				require.NoError(t, out.WriteArchive(&buf, nil))
				assert.Contains(t, buf.String(), `{\"numeric_debug_handle\": `)
				back, err := pt2.Read(buf.Bytes(), nil)
				require.NoError(t, err)
				bg, err := back.Unlifted()
				require.NoError(t, err)
				want := map[string]int{}
				for n := range g.All() {
					if n.Op() == fxgraph.CallFunction {
						want[n.Name()] = n.Meta.NumericDebugHandle
					}
				}
				gotH := map[string]int{}
				for n := range bg.All() {
					if n.Op() == fxgraph.CallFunction {
						gotH[n.Name()] = n.Meta.NumericDebugHandle
					}
				}
				assert.Equal(t, want, gotH)
				check(bg, "read back")
			})
		}
	}
}

func randomShaped(rng *rand.Rand, n int, shape []int) [][]*tensor.Tensor {
	var out [][]*tensor.Tensor
	for range n {
		v := make([]float32, tensor.Numel(shape))
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		out = append(out, []*tensor.Tensor{tensor.MustFromData(tensor.Float32, shape, v)})
	}
	return out
}

// TestConstantFoldKeepsHandle: the get_attr that replaces a folded node
// takes its metadata, handle included (torchao's constant_fold does
// new_input_node.meta.update(node.meta)).
func TestConstantFoldKeepsHandle(t *testing.T) {
	typ := ops.Plain(tensor.Float32, 2)
	g := fxgraph.New()
	g.SetAttr("c", tensor.F32([]int{2}, -1, 2))
	x := g.Placeholder("x", typ)
	c := g.GetAttr("c", typ)
	r := g.Call(reluOp, c)
	r.SetType(typ)
	a := g.Call(addOp, x, r)
	a.SetType(typ)
	g.SetOutput(ops.Tuple{a})
	numdebug.GenerateHandles(g)
	require.Equal(t, 1, r.Meta.NumericDebugHandle)
	_, err := constfold.Run(g)
	require.NoError(t, err)
	var folded *fxgraph.Node
	for n := range g.All() {
		if n.Op() == fxgraph.GetAttr && n.Name() == "relu_default" {
			folded = n
		}
	}
	require.NotNil(t, folded, "relu folded into a get_attr named after it:\n%s", fxgraph.FormatListing(g))
	assert.Equal(t, 1, folded.Meta.NumericDebugHandle)
	assert.Equal(t, 2, a.Meta.NumericDebugHandle)
}

// TestWorst orders by SQNR, NaN first, +Inf last, graph order among
// equals, and stops at k.
func TestWorst(t *testing.T) {
	c := &numdebug.Comparison{Results: []numdebug.Result{
		{SQNR: 30}, {SQNR: math.NaN()}, {SQNR: 10}, {SQNR: math.Inf(1)}, {SQNR: 10},
	}}
	assert.Equal(t, []int{1, 2, 4}, c.Worst(3))
	assert.Equal(t, []int{1, 2, 4, 0, 3}, c.Worst(9))
	assert.Empty(t, (&numdebug.Comparison{}).Worst(5))
}

// TestGrowth follows the error along a chain built by hand: float
// x -> relu -> neg; quant adds 0.125 after relu (both hold relu's handle)
// and computes neg of that. relu is the first to lose precision (+Inf
// growth), neg adds none (growth 0 within rounding): WorstGrowth is relu.
func TestGrowth(t *testing.T) {
	negOp := ops.MustOverload("aten.neg.default")
	typ := ops.Plain(tensor.Float32, 4)
	float := fxgraph.New()
	x := float.Placeholder("x", typ)
	r := float.Call(reluOp, x)
	r.SetType(typ)
	n := float.Call(negOp, r)
	n.SetType(typ)
	float.SetOutput(ops.Tuple{n})
	numdebug.GenerateHandles(float)

	quant := fxgraph.New()
	x = quant.Placeholder("x", typ)
	qr := quant.Call(reluOp, x)
	qr.SetType(typ)
	quant.SetAttr("off", tensor.F32([]int{1}, 0.125))
	a := quant.Call(addOp, qr, quant.GetAttr("off", ops.Plain(tensor.Float32, 1)))
	a.SetType(typ)
	qn := quant.Call(negOp, a)
	qn.SetType(typ)
	quant.SetOutput(ops.Tuple{qn})
	qr.Meta.NumericDebugHandle, a.Meta.NumericDebugHandle, qn.Meta.NumericDebugHandle = 1, 1, 2

	c, err := numdebug.Compare(float, quant, [][]*tensor.Tensor{{tensor.F32([]int{4}, 1, -1, 2, 3)}})
	require.NoError(t, err)
	require.Len(t, c.Results, 2)
	assert.True(t, math.IsInf(c.Results[0].Growth, 1))
	assert.InDelta(t, 0, c.Results[1].Growth, 1e-9)
	assert.InDelta(t, c.Results[0].SQNR, c.Results[1].SQNR, 1e-9, "neg keeps the error")
	assert.Equal(t, 0, c.WorstGrowth)
}
