package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// dynDir holds the dynamic-shape programs PyTorch 2.14.1 exported with
// torch.export.Dim (gen.py there), with recorded inputs and outputs.
const dynDir = "testdata/dynamic"

// dynIO is a <name>.io.json file: eager PyTorch's outputs on inputs of
// several sizes within the range constraints.
type dynIO struct {
	RangeConstraints map[string][2]int64 `json:"range_constraints"`
	Cases            []struct {
		Input   pgTensor   `json:"input"`
		Outputs []pgTensor `json:"outputs"`
	} `json:"cases"`
}

// dynReadIO reads dynDir/name.io.json.
func dynReadIO(t *testing.T, name string) dynIO {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dynDir, name+".io.json"))
	require.NoError(t, err)
	var io dynIO
	require.NoError(t, json.Unmarshal(data, &io))
	return io
}

// dynSkip skips the test when err says the registry lacks an op or a
// kernel (other helpers are adding them), naming the op.
func dynSkip(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if errors.Is(err, pt2.ErrUnknownOp) || errors.Is(err, interp.ErrNoKernel) || errors.Is(err, interp.ErrUnknownTarget) {
		t.Skipf("SKIP: missing op or kernel: %s", msg)
	}
}

// dynZeros is a float32 tensor of zeros of the given shape.
func dynZeros(t *testing.T, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.FromData(tensor.Float32, shape, make([]float32, tensor.Numel(shape)))
	require.NoError(t, err)
	return x
}

// TestDynamicProgramsRun reads each dynamic program, checks that it
// verifies and that its symbols and ranges are the ones torch.export
// recorded, and runs it at every recorded input size: the outputs equal
// eager PyTorch's bit for bit (the CNN at batch > 1 within a bound, see
// below). A program whose ops the registry or the interpreter do not have
// yet is skipped, naming the op.
func TestDynamicProgramsRun(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(dynDir, "*.pt2"))
	require.NoError(t, err)
	require.Len(t, files, 5)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".pt2")
		t.Run(name, func(t *testing.T) {
			io := dynReadIO(t, name)
			p, err := pt2.ReadFile(file, nil)
			dynSkip(t, err)
			require.NoError(t, err)
			ranges := map[string][2]int64{}
			for _, s := range p.Graph.Symbols() {
				require.True(t, s.Ranged)
				ranges[s.Name] = [2]int64{*s.Min, *s.Max}
			}
			require.Equal(t, io.RangeConstraints, ranges)
			require.NoError(t, fxgraph.Verify(p.Graph, fxgraph.VerifyOptions{}))
			g, err := p.Unlifted()
			require.NoError(t, err)
			for i, c := range io.Cases {
				x := c.Input.tensor(t)
				outs, err := interp.Run(g, []*tensor.Tensor{x}, interp.Options{})
				dynSkip(t, err)
				require.NoError(t, err, "case %d (input %v)", i, c.Input.Shape)
				require.Len(t, outs, len(c.Outputs))
				for j, want := range c.Outputs {
					what := fmt.Sprintf("case %d (input %v), output %d", i, c.Input.Shape, j)
					if strings.HasPrefix(name, "encoder") {
						// Not bit-exact until the attention block's
						// kernels are (softmax, layer_norm, gelu: other
						// work in progress). Measured with a stand-in
						// unflatten kernel: at most 2.4e-7 off, in 3 to 49
						// elements per case.
						dynClose(t, outs[j], want, what, 1e-5)
						continue
					}
					if name == "cnn_dynamic_batch" && c.Input.Shape[0] > 1 {
						// PyTorch 2.14 runs these convolutions through
						// oneDNN, whose summation order at batch > 1 the
						// conv kernels do not reproduce yet: measured 14
						// of 15 elements off by up to 6 ULP at batch 3,
						// 66 of 80 by up to 384 ULP (abs 6e-8, at values
						// near 0) at batch 16. Batch 1 is exact.
						dynClose(t, outs[j], want, what, 1e-6)
						continue
					}
					dynSameBits(t, outs[j], want, what)
				}
			}
		})
	}
}

// dynFloats requires v to be a float32 tensor with want's shape and
// returns its elements and want's, both in row-major order.
func dynFloats(t *testing.T, v ops.Value, want pgTensor, what string) (got, wants []float32) {
	t.Helper()
	x, ok := v.(*tensor.Tensor)
	require.True(t, ok, "%s: got %T", what, v)
	require.Equal(t, want.Shape, x.Shape(), what)
	got, err := tensor.Data[float32](x.Contiguous())
	require.NoError(t, err)
	return got, want.float32s(t)
}

// dynSameBits checks that v is a float32 tensor with want's shape and bits.
func dynSameBits(t *testing.T, v ops.Value, want pgTensor, what string) {
	t.Helper()
	gv, wv := dynFloats(t, v, want, what)
	for k := range wv {
		if math.Float32bits(gv[k]) != math.Float32bits(wv[k]) {
			t.Fatalf("%s: element %d: got %v (%08x), want %v (%08x)", what, k, gv[k], math.Float32bits(gv[k]), wv[k], math.Float32bits(wv[k]))
		}
	}
}

// dynClose checks that v is a float32 tensor with want's shape whose
// elements are within tol of want's, and logs how many differ.
func dynClose(t *testing.T, v ops.Value, want pgTensor, what string, tol float64) {
	t.Helper()
	gv, wv := dynFloats(t, v, want, what)
	diff, worst := 0, 0.0
	for k := range wv {
		d := math.Abs(float64(gv[k]) - float64(wv[k]))
		if math.Float32bits(gv[k]) != math.Float32bits(wv[k]) {
			diff++
		}
		worst = math.Max(worst, d)
		require.LessOrEqual(t, d, tol, "%s: element %d: got %v, want %v", what, k, gv[k], wv[k])
	}
	t.Logf("%s: %d of %d elements not bit-exact, max abs diff %g (bound %g)", what, diff, len(wv), worst, tol)
}

// TestDynamicMLPZoo runs the zoo's mlp_dynamic_batch (x: f32[s77, 16],
// s77 in [1, 64]) as issue 13 asks: float at the calibration sizes 8, 1, 5
// and 32 and the eval sizes 3 and 17, bit for bit against PyTorch's float
// outputs; then static and dynamic XNNPACK quantization calibrated
// on the four batches of different sizes, whose converted outputs equal
// torchao's recorded ones bit for bit (the same bits PyTorch computes from
// what fxquant writes: testdata/dynamic/oracle/check_written.txt).
func TestDynamicMLPZoo(t *testing.T) {
	stem := filepath.Join(zooDir, "mlp_dynamic_batch")
	data, err := os.ReadFile(stem + ".outputs.json")
	require.NoError(t, err)
	var out pgOutputs
	require.NoError(t, json.Unmarshal(data, &out))
	p, err := pt2.ReadFile(stem+".float.pt2", nil)
	require.NoError(t, err)
	require.NoError(t, fxgraph.Verify(p.Graph, fxgraph.VerifyOptions{}))
	g, err := p.Unlifted()
	require.NoError(t, err)
	x := g.Placeholders()[0]
	require.Equal(t, "f32[s77, 16]", x.Type().String())

	// PyTorch's float outputs at the calibration sizes, which the zoo
	// records only as inputs (testdata/dynamic/oracle/mlp_float_outputs.py).
	data, err = os.ReadFile(filepath.Join(dynDir, "oracle/mlp_calibration_float.json"))
	require.NoError(t, err)
	var calibFloat struct {
		Outputs []pgTensor `json:"calibration_outputs"`
	}
	require.NoError(t, json.Unmarshal(data, &calibFloat))
	require.Len(t, calibFloat.Outputs, len(out.Inputs.Calibration))
	var batches [][]*tensor.Tensor
	var sizes []int
	for i, c := range out.Inputs.Calibration {
		b := c.tensor(t)
		batches = append(batches, []*tensor.Tensor{b})
		sizes = append(sizes, b.Shape()[0])
		outs, err := interp.Run(g, []*tensor.Tensor{b}, interp.Options{})
		require.NoError(t, err)
		dynSameBits(t, outs[0], calibFloat.Outputs[i], fmt.Sprintf("float, calibration batch %d (batch %d)", i, b.Shape()[0]))
	}
	require.Equal(t, []int{8, 1, 5, 32}, sizes)
	for i, e := range out.Inputs.Eval {
		outs, err := interp.Run(g, []*tensor.Tensor{e.tensor(t)}, interp.Options{})
		require.NoError(t, err)
		dynSameBits(t, outs[0], out.Float.Outputs[i], fmt.Sprintf("float, eval %d (batch %d)", i, e.Shape[0]))
	}

	for _, mode := range []string{"static", "dynamic"} {
		t.Run(mode, func(t *testing.T) {
			q, _ := g.Clone()
			require.NoError(t, convert.Prepare(q, zooQuantizer(mode)))
			require.NoError(t, convert.Calibrate(q, batches, nil))
			require.NoError(t, convert.Convert(q, convert.ConvertOptions{}))
			require.NoError(t, fxgraph.Verify(q, fxgraph.VerifyOptions{}))
			require.Equal(t, g.Symbols(), q.Symbols())
			want := out.Static
			if mode == "dynamic" {
				want = out.Dynamic
			}
			for i, e := range out.Inputs.Eval {
				outs, err := interp.Run(q, []*tensor.Tensor{e.tensor(t)}, interp.Options{})
				require.NoError(t, err)
				dynSameBits(t, outs[0], want.Outputs[i], fmt.Sprintf("%s, eval %d (batch %d)", mode, i, e.Shape[0]))
			}
		})
	}
}

// TestDynamicOutOfRange: a batch outside the range constraint is refused,
// naming the placeholder, the dimension and the range, by a run and by
// calibration (which checks every batch before it runs any); so are a rank
// or static size that differ from the type. The lower bound is PyTorch's:
// enforced only above 2 (what PyTorch 2.14 accepts, checked with the
// oracle: the zoo MLP runs batch 0 and refuses 65; exprs_dynamic_batch
// refuses 2 and 33).
func TestDynamicOutOfRange(t *testing.T) {
	g := readUnlifted(t, filepath.Join(zooDir, "mlp_dynamic_batch.float.pt2"))
	for _, c := range []struct {
		x    *tensor.Tensor
		want string
	}{
		{dynZeros(t, 65, 16), `interp: node "x" (placeholder): input does not fit the symbolic shape: placeholder "x": dim 0: size 65 is outside the range [1, 64] of symbol s77`},
		{dynZeros(t, 4, 15), `placeholder "x": dim 1: size 15, want 16 (type f32[s77, 16])`},
		{dynZeros(t, 4, 16, 1), `placeholder "x": input of rank 3 (shape [4 16 1]) for type f32[s77, 16]`},
	} {
		_, err := interp.Run(g, []*tensor.Tensor{c.x}, interp.Options{})
		require.ErrorIs(t, err, interp.ErrSymbol)
		require.ErrorContains(t, err, c.want)
	}
	// PyTorch allows sizes 0 and 1 at runtime when the lower bound is at
	// most 2 (it accepts and runs batch 0 of this program); a lower bound
	// above 2 is enforced (exprs_dynamic_batch: s77 in [3, 32] refuses 2).
	for _, b := range []int{0, 1} {
		_, err := interp.CheckSymbols(g, []*tensor.Tensor{dynZeros(t, b, 16)})
		require.NoError(t, err, "batch %d", b)
	}
	ge := readUnlifted(t, filepath.Join(dynDir, "exprs_dynamic_batch.pt2"))
	_, err := interp.CheckSymbols(ge, []*tensor.Tensor{dynZeros(t, 2, 4)})
	require.ErrorContains(t, err, `placeholder "x": dim 0: size 2 is outside the range [3, 32] of symbol s77`)
	_, err = interp.CheckSymbols(ge, []*tensor.Tensor{dynZeros(t, 3, 4)})
	require.NoError(t, err)

	// Calibration checks every batch before running any.
	q, _ := g.Clone()
	require.NoError(t, convert.Prepare(q, convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))))
	err = convert.Calibrate(q, [][]*tensor.Tensor{{dynZeros(t, 8, 16)}, {dynZeros(t, 65, 16)}}, nil)
	require.ErrorIs(t, err, convert.ErrBatch)
	require.ErrorContains(t, err, `calibrate: batch 1: `)
	require.ErrorContains(t, err, `placeholder "x": dim 0: size 65 is outside the range [1, 64] of symbol s77`)
}

// TestDynamicSymbolChecks: two inputs that give one symbol different
// values, and an expression dimension that disagrees with its size, are
// refused; the verifier reports an unknown symbol and a hint outside the
// range.
func TestDynamicSymbolChecks(t *testing.T) {
	src := `graph():
    # symbol s0: range=[2, 8], hint=4, assumptions=(positive=True, integer=True)
    %a : f32[s0, 3] [num_users=1] = placeholder[target=a]
    %b : f32[2*s0, 3] [num_users=1] = placeholder[target=b]
    %cat : f32[3*s0, 3] [num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%a, %b],), kwargs = {})
    return cat
`
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	require.Equal(t, src, fxgraph.Format(g))
	outs, err := interp.Run(g, []*tensor.Tensor{dynZeros(t, 3, 3), dynZeros(t, 6, 3)}, interp.Options{})
	require.NoError(t, err)
	require.Equal(t, []int{9, 3}, outs[0].(*tensor.Tensor).Shape())
	_, err = interp.Run(g, []*tensor.Tensor{dynZeros(t, 3, 3), dynZeros(t, 5, 3)}, interp.Options{})
	require.ErrorIs(t, err, interp.ErrSymbol)
	require.ErrorContains(t, err, `placeholder "b": dim 0: size 5, but 2*s0 = 6`)

	bad := strings.Replace(src, "hint=4", "hint=9", 1)
	bad = strings.Replace(bad, "%b : f32[2*s0, 3]", "%b : f32[2*s1, 3]", 1)
	g, err = fxgraph.ParseString(bad)
	require.NoError(t, err)
	err = fxgraph.Verify(g, fxgraph.VerifyOptions{})
	require.ErrorIs(t, err, fxgraph.ErrSymbol)
	require.ErrorContains(t, err, "symbol s0")
	require.ErrorContains(t, err, "hint 9")
	require.ErrorContains(t, err, "[2, 8]")
	require.ErrorContains(t, err, `node "b"`)
	require.ErrorContains(t, err, "unknown symbol s1")
}

// TestDynamicWrittenAgree runs programs fxquant quantized and wrote from
// the dynamic programs (`fxquant run NAME.pt2 --calibration-data` on the
// inputs of NAME.io.json, -o testdata/dynamic/oracle/written/) and
// compares them with what PyTorch 2.14.1 computes from the same files
// (oracle/check_dynamic.py, which also checks that PyTorch keeps the
// symbolic input and the range and refuses an input past it): fxquant's
// interpreter gives PyTorch's outputs at every recorded batch size, bit
// for bit (the quantized CNN too: the last-bit differences of its float
// convolutions at batch > 1, see TestDynamicProgramsRun, do not change a
// quantized value here).
func TestDynamicWrittenAgree(t *testing.T) {
	for _, name := range []string{"cnn_dynamic_batch", "exprs_dynamic_batch", "derived_dynamic_batch"} {
		t.Run(name, func(t *testing.T) {
			io := dynReadIO(t, name)
			data, err := os.ReadFile(filepath.Join(dynDir, "oracle/written", name+".static.outputs.json"))
			require.NoError(t, err)
			var torchOut struct {
				Cases []struct {
					Outputs []pgTensor `json:"outputs"`
				} `json:"cases"`
			}
			require.NoError(t, json.Unmarshal(data, &torchOut))
			require.Len(t, torchOut.Cases, len(io.Cases))
			p, err := pt2.ReadFile(filepath.Join(dynDir, "oracle/written", name+".static.pt2"), nil)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(p.Graph, fxgraph.VerifyOptions{}))
			x, ok := p.Graph.NodeByName("x")
			require.True(t, ok)
			require.NotEmpty(t, x.Type().(ops.TensorType).Syms[0])
			g, err := p.Unlifted()
			require.NoError(t, err)
			for i, c := range io.Cases {
				outs, err := interp.Run(g, []*tensor.Tensor{c.Input.tensor(t)}, interp.Options{})
				require.NoError(t, err)
				require.Len(t, outs, len(torchOut.Cases[i].Outputs))
				for j, want := range torchOut.Cases[i].Outputs {
					dynSameBits(t, outs[j], want, fmt.Sprintf("case %d (input %v), output %d", i, c.Input.Shape, j))
				}
			}
		})
	}
}

// TestDynamicSymScalarNodes: sym_size and operator nodes on symbolic ints
// read from the text, verify, and run: view(x, [sym_size(x, 0) * 3]) of a
// [4, 3] input has 12 elements, and each operator computes Python's
// integer arithmetic (floordiv and mod round towards -inf). The verifier
// refuses a tensor argument of an operator node.
func TestDynamicSymScalarNodes(t *testing.T) {
	src := `graph():
    # symbol s0: range=[1, 8], hint=2
    %x : f32[s0, 3] [num_users=2] = placeholder[target=x]
    %sym_size_int : SymInt [num_users=4] = call_function[target=torch.ops.aten.sym_size.int](args = (%x, 0), kwargs = {})
    %mul : SymInt [num_users=1] = call_function[target=operator.mul](args = (%sym_size_int, 3), kwargs = {})
    %view : f32[3*s0] [num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%x, [%mul]), kwargs = {})
    %sub : SymInt [num_users=2] = call_function[target=operator.sub](args = (%sym_size_int, 7), kwargs = {})
    %floordiv : SymInt [num_users=1] = call_function[target=operator.floordiv](args = (%sub, 2), kwargs = {})
    %mod : SymInt [num_users=1] = call_function[target=operator.mod](args = (%sub, 5), kwargs = {})
    %add : SymInt [num_users=1] = call_function[target=operator.add](args = (%sym_size_int, %sym_size_int), kwargs = {})
    %neg : SymInt [num_users=1] = call_function[target=operator.neg](args = (%sym_size_int,), kwargs = {})
    return (view, floordiv, mod, add, neg)
`
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	require.Equal(t, src, fxgraph.Format(g))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	outs, err := interp.Run(g, []*tensor.Tensor{dynZeros(t, 4, 3)}, interp.Options{})
	require.NoError(t, err)
	require.Equal(t, []int{12}, outs[0].(*tensor.Tensor).Shape())
	// 4 - 7 = -3: -3 // 2 = -2 and -3 % 5 = 2 in Python.
	require.Equal(t, []ops.Value{int64(-2), int64(2), int64(8), int64(-4)}, outs[1:])

	bad := strings.Replace(src, "args = (%sym_size_int, 3)", "args = (%x, 3)", 1)
	bad = strings.Replace(bad, "%x : f32[s0, 3] [num_users=2]", "%x : f32[s0, 3] [num_users=3]", 1)
	g, err = fxgraph.ParseString(strings.Replace(bad, "[num_users=4]", "[num_users=3]", 1))
	require.NoError(t, err)
	err = fxgraph.Verify(g, fxgraph.VerifyOptions{})
	require.ErrorIs(t, err, fxgraph.ErrArgKind)
	require.ErrorContains(t, err, `node "mul"`)
}

// TestDynamicDerivedDim: an input whose size is an expression of a symbol
// that no other dimension gives (torch.export's derived Dim, batch =
// 2*_b) binds the symbol by solving the expression: [8, 3] gives s0 = 3,
// an odd size fits no s0, and the range is the one recorded for the
// expression (as PyTorch checks it), not the symbol's own.
func TestDynamicDerivedDim(t *testing.T) {
	src := `graph():
    # symbol 2*s0 + 2: range=[4, 10]
    # symbol s0: range=[1, 4], hint=2
    %x : f32[2*s0 + 2, 3] [num_users=1] = placeholder[target=x]
    %relu : f32[2*s0 + 2, 3] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x,), kwargs = {})
    return relu
`
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	require.Equal(t, src, fxgraph.Format(g))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	vals, err := interp.CheckSymbols(g, []*tensor.Tensor{dynZeros(t, 8, 3)})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"s0": 3}, vals)
	_, err = interp.CheckSymbols(g, []*tensor.Tensor{dynZeros(t, 7, 3)})
	require.ErrorContains(t, err, `placeholder "x": dim 0: size 7: no value of symbol s0 gives 2*s0 + 2 = 7`)
	_, err = interp.CheckSymbols(g, []*tensor.Tensor{dynZeros(t, 12, 3)})
	require.ErrorContains(t, err, `placeholder "x": dim 0: size 12 is outside the range [4, 10] of expression 2*s0 + 2`)
	// s0 = 4.5 is not an integer; s0 = 0 is below s0's own range, which
	// PyTorch does not check for a derived dimension.
	vals, err = interp.CheckSymbols(g, []*tensor.Tensor{dynZeros(t, 2, 3)})
	require.ErrorContains(t, err, "size 2 is outside the range [4, 10]")
	vals, err = interp.CheckSymbols(g, []*tensor.Tensor{dynZeros(t, 10, 3)})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"s0": 4}, vals)
}
