package typed_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
	"github.com/fxquant/fxquant/typed"
)

// loadConverted reads a converted PT2E archive, unlifts its parameters and
// buffers to get_attr nodes (as convert_pt2e's GraphModule has them) and
// types every node.
func loadConverted(t *testing.T, path string) *fxgraph.Graph {
	t.Helper()
	p, err := pt2.ReadFile(path, nil)
	require.NoError(t, err)
	var lifted []convert.LiftedInput
	for _, in := range p.Signature.Inputs {
		if in.Target != "" {
			lifted = append(lifted, convert.LiftedInput{Placeholder: in.Name, Target: in.Target})
		}
	}
	g, err := convert.Unlift(p.Graph, lifted, nil)
	require.NoError(t, err)
	require.NoError(t, typed.InferTypes(g, nil))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true, AllowOpaque: true}))
	return g
}

// countTargets counts call_function nodes per packet name.
func countTargets(g *fxgraph.Graph) map[string]int {
	m := map[string]int{}
	for _, n := range g.Nodes() {
		if n.Op() == fxgraph.CallFunction {
			if p, ok := ops.PacketOf(n.Target()); ok {
				m[p.Name]++
			}
		}
	}
	return m
}

// TestLiftLowerFixtures lifts every converted static archive of the pt2e
// fixtures: the q/dq pairs become types, the lifted graph verifies with
// the typed rules, runs to the same output, and lowering gives back the
// input up to node names.
func TestLiftLowerFixtures(t *testing.T) {
	files, err := filepath.Glob("../tests/testdata/pt2e/*.static.pt2")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			g := loadConverted(t, f)
			orig, _ := g.Clone()
			before := countTargets(g)
			res, err := typed.Lift(g, nil)
			require.NoError(t, err)
			assert.Empty(t, res.Notes, "every static q/dq pair has a type")
			after := countTargets(g)
			// Only the input's quantize and the output's dequantize stay.
			assert.Equal(t, 1, after["quantize_per_tensor"])
			assert.Equal(t, 1, after["dequantize_per_tensor"])
			assert.Zero(t, after["dequantize_per_channel"])
			assert.Equal(t, before["quantize_per_tensor"]-1, res.Stats["quantize_erased"])
			require.NoError(t, fxgraph.Verify(g, typed.VerifyOptions(nil)))
			// The plain rules reject the lifted form: the hook is what
			// accepts it.
			assert.Error(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))

			// Per-channel weights became per-axis typed constants.
			var perAxis int
			for _, n := range g.Nodes() {
				if tt, ok := n.TensorType(); ok && n.Op() == fxgraph.GetAttr {
					if _, ok := tt.Elem.(ops.UniformQuantizedPerAxis); ok {
						perAxis++
					}
				}
			}
			assert.Equal(t, before["dequantize_per_channel"], perAxis)

			in := fixtureInput(t, orig)
			want, err := interp.Run(orig, in, interp.Options{})
			require.NoError(t, err)
			got, err := runTyped(t, g, in, interp.Options{})
			require.NoError(t, err)
			requireSameTensors(t, want, got)

			_, err = typed.Lower(g, nil)
			require.NoError(t, err)
			require.NoError(t, typed.Equiv(orig, g))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{RequireTypes: true, AllowOpaque: true}))
		})
	}
}

// fixtureInput is a deterministic input for the graph's user placeholder.
func fixtureInput(t *testing.T, g *fxgraph.Graph) []*tensor.Tensor {
	t.Helper()
	var in []*tensor.Tensor
	for _, p := range g.Placeholders() {
		tt, ok := p.TensorType()
		require.True(t, ok)
		n := int(tt.Numel())
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*37)%23-11) / 7
		}
		shape := make([]int, len(tt.Shape))
		for i, d := range tt.Shape {
			shape[i] = int(d)
		}
		in = append(in, tensor.MustFromData(tensor.Float32, shape, v))
	}
	return in
}

func requireSameTensors(t *testing.T, want, got []ops.Value) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		wt, ok1 := want[i].(*tensor.Tensor)
		gt, ok2 := got[i].(*tensor.Tensor)
		require.True(t, ok1 && ok2)
		require.NoError(t, tensor.Diff(gt, wt))
	}
}

// TestLiftLeavesUntypeable checks that q/dq nodes with no quantized
// element type stay and are named in the notes.
func TestLiftLeavesUntypeable(t *testing.T) {
	src := `graph():
    %x : f32[4, 8] [num_users=2] = placeholder[target=x]
    %choose : (f64[1], i64[1]) [num_users=2] = call_function[target=torch.ops.quantized_decomposed.choose_qparams.tensor](args = (%x, -128, 127, 1.1920928955078125e-07, torch.int8), kwargs = {})
    %s : f64[1] [num_users=2] = call_function[target=operator.getitem](args = (%choose, 0), kwargs = {})
    %z : i64[1] [num_users=2] = call_function[target=operator.getitem](args = (%choose, 1), kwargs = {})
    %q : i8[4, 8] [num_users=1] = call_function[target=torch.ops.quantized_decomposed.quantize_per_tensor.tensor](args = (%x, %s, %z, -128, 127, torch.int8), kwargs = {})
    %dq : f32[4, 8] [num_users=1] = call_function[target=torch.ops.quantized_decomposed.dequantize_per_tensor.tensor](args = (%q, %s, %z, -128, 127, torch.int8), kwargs = {})
    %relu : f32[4, 8] [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%dq,), kwargs = {})
    return (relu,)
`
	g, err := fxgraph.ParseString(src)
	require.NoError(t, err)
	before := fxgraph.Format(g)
	res, err := typed.Lift(g, nil)
	require.NoError(t, err)
	assert.False(t, res.Changed)
	assert.Equal(t, before, fxgraph.Format(g))
	require.Len(t, res.Notes, 2, "both the quantize and the dequantize are named")
	assert.Contains(t, res.Notes[0], `left "q"`)
	assert.Contains(t, res.Notes[1], `left "dq"`)
	for _, n := range res.Notes {
		assert.Contains(t, n, "dynamic")
	}
}

// TestLiftFloatZeroPoint: a per-channel dequantize with float zero points
// has no quantized element type.
func TestLiftFloatZeroPoint(t *testing.T) {
	g := fxgraph.New()
	g.SetAttr("w", tensor.MustFromData(tensor.Int8, []int{2, 3}, []int8{1, 2, 3, 4, 5, 6}))
	g.SetAttr("s", tensor.F32([]int{2}, 0.5, 0.25))
	g.SetAttr("z", tensor.F32([]int{2}, 0.5, 1))
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4, 3))
	w := g.GetAttr("w", ops.Plain(tensor.Int8, 2, 3))
	s := g.GetAttr("s", ops.Plain(tensor.Float32, 2))
	z := g.GetAttr("z", ops.Plain(tensor.Float32, 2))
	dq := g.Call(ops.MustOverload("quantized_decomposed.dequantize_per_channel.default"), w, s, z, int64(0), int64(-128), int64(127), tensor.Int8)
	dq.SetType(ops.Plain(tensor.Float32, 2, 3))
	lin := g.Call(ops.MustOverload("aten.linear.default"), x, dq)
	lin.SetType(ops.Plain(tensor.Float32, 4, 2))
	g.SetOutput(ops.Tuple{lin})
	before := fxgraph.Format(g)
	res, err := typed.Lift(g, nil)
	require.NoError(t, err)
	assert.Equal(t, before, fxgraph.Format(g))
	require.Len(t, res.Notes, 1)
	assert.True(t, strings.Contains(res.Notes[0], "float zero points"), res.Notes[0])
}

// runTyped runs a lifted graph through the interpreter on its lowered copy.
func runTyped(t *testing.T, g *fxgraph.Graph, in []*tensor.Tensor, opts interp.Options) ([]ops.Value, error) {
	t.Helper()
	low, err := typed.Lowered(g, opts.Registry)
	if err != nil {
		return nil, err
	}
	return interp.Run(low, in, opts)
}
