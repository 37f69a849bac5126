package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// x86Dir holds torchao's X86InductorQuantizer records of the zoo models
// (testdata/x86/README.md, made by testdata/x86/gen.py).
const x86Dir = "testdata/x86"

// x86Record is one model and mode of testdata/x86/expected.json.
type x86Record struct {
	Error       string                     `json:"error"`
	Annotations map[string]json.RawMessage `json:"annotations"`
	Observers   [][]any                    `json:"observers"`
	Converted   [][]any                    `json:"converted"`
	Attrs       map[string][]any           `json:"attrs"`
	// AttrsAs names the mode whose Attrs this record shares ("static").
	AttrsAs string `json:"attrs_as"`
}

type x86Expected struct {
	Format  string                          `json:"format"`
	Targets []string                        `json:"targets"`
	Models  map[string]map[string]x86Record `json:"models"`
}

func readX86Expected(t *testing.T) *x86Expected {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(x86Dir, "expected.json"))
	require.NoError(t, err)
	var e x86Expected
	require.NoError(t, json.Unmarshal(data, &e))
	require.Equal(t, "fxquant-x86-expected/2", e.Format)
	return &e
}

// x86Quantizer is the records' quantizer: X86InductorQuantizer with
// get_default_x86_inductor_quantization_config(is_dynamic=...) as global.
func x86Quantizer(t *testing.T, mode string) *convert.X86InductorQuantizer {
	t.Helper()
	c, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{Dynamic: mode == "dynamic"})
	require.NoError(t, err)
	return convert.NewX86InductorQuantizer().SetGlobal(c)
}

// x86Spec prints a spec as gen.py does: null, "q:DTYPE[:pc][:dyn]",
// "s:A>B" or "s:A".
func x86Spec(s convert.QSpec) any {
	switch s := s.(type) {
	case nil:
		return nil
	case *convert.QuantizationSpec:
		out := "q:" + strings.TrimPrefix(s.DType.String(), "torch.")
		if s.QScheme == observers.PerChannelSymmetric || s.QScheme == observers.PerChannelAffine {
			out += ":pc"
		}
		if s.IsDynamic {
			out += ":dyn"
		}
		return out
	case *convert.SharedQuantizationSpec:
		if s.EdgeOrNode.IsEdge() {
			return "s:" + s.EdgeOrNode.Producer.Name() + ">" + s.EdgeOrNode.Consumer.Name()
		}
		return "s:" + s.EdgeOrNode.Producer.Name()
	}
	return fmt.Sprintf("<%T>", s)
}

// x86Annotations lists g's annotations as gen.py does (inputs and output
// spec; the _is_output_of_quantized_pattern flag is not compared).
func x86Annotations(g *fxgraph.Graph) map[string]any {
	out := map[string]any{}
	for n := range g.All() {
		a := convert.Annotation(n)
		if a == nil {
			continue
		}
		ins := []any{}
		for _, e := range a.InputQSpecMap {
			ins = append(ins, []any{e.Input.Name(), x86Spec(e.Spec)})
		}
		out[n.Name()] = []any{ins, x86Spec(a.OutputQSpec)}
	}
	return out
}

// x86Arg turns an argument into gen.py's JSON form (numbers as float64).
func x86Arg(v ops.Value) any {
	switch v := v.(type) {
	case nil:
		return nil
	case *fxgraph.Node:
		return "%" + v.Name()
	case bool, string, float64:
		return v
	case int64:
		return float64(v)
	case tensor.DType:
		return "torch." + strings.TrimPrefix(v.String(), "torch.")
	}
	if seq, ok := ops.Sequence(v); ok {
		out := []any{}
		for _, e := range seq {
			out = append(out, x86Arg(e))
		}
		return out
	}
	return "<other>"
}

// x86Equal compares gen.py's JSON with x86Arg's form; "<...>" strings
// (objects gen.py does not print) match anything.
func x86Equal(want, got any) bool {
	if s, ok := want.(string); ok && strings.HasPrefix(s, "<") {
		return true
	}
	wl, ok1 := want.([]any)
	gl, ok2 := got.([]any)
	if ok1 || ok2 {
		if !ok1 || !ok2 || len(wl) != len(gl) {
			return false
		}
		for i := range wl {
			if !x86Equal(wl[i], gl[i]) {
				return false
			}
		}
		return true
	}
	return want == got
}

// x86Registry is the default operator registry with PyTorch's AVX2
// results for the two kernels whose bits depend on the CPU oneDNN runs on
// (aten.conv2d and aten.gelu; testdata/zoo/README.md, machine note):
// testdata/x86 was made on an AVX2-only machine, while fxquant's
// interpreter reproduces the AVX-512 machine that recorded the zoo. A
// HistogramObserver's scale follows every bit of what it sees, so
// calibration must run the oracle's kernels to compare scales exactly.
func x86Registry(t *testing.T) *ops.Registry {
	t.Helper()
	def := ops.Default()
	r := ops.NewRegistry()
	for _, o := range def.All() {
		d, ok := def.Op(o)
		require.True(t, ok)
		c := *d
		switch o.String() {
		case "aten.conv2d.default":
			c.Kernel = conv2dAVX2
		case "aten.gelu.default":
			c.Kernel = func(args []ops.Value) (ops.Value, error) {
				x, ok1 := args[0].(*tensor.Tensor)
				approx, ok2 := args[1].(string)
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("gelu: want (tensor, string), got (%T, %T)", args[0], args[1])
				}
				return kernels.GeluWith(x, approx, kernels.ConvISAAVX2)
			}
		}
		require.NoError(t, r.Register(&c), "%s", o)
	}
	return r
}

// conv2dAVX2 is aten.conv2d.default on oneDNN's AVX2 kernels.
func conv2dAVX2(args []ops.Value) (ops.Value, error) {
	x, ok1 := args[0].(*tensor.Tensor)
	w, ok2 := args[1].(*tensor.Tensor)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("conv2d: want tensor input and weight, got %T, %T", args[0], args[1])
	}
	b, _ := args[2].(*tensor.Tensor)
	ints := func(v ops.Value) []int {
		var out []int
		for _, e := range ops.AsSequence(v) {
			i, _ := e.(int64)
			out = append(out, int(i))
		}
		return out
	}
	groups, _ := args[6].(int64)
	p, err := kernels.NewConvParams(2, ints(args[3]), ints(args[4]), ints(args[5]), int(groups))
	if err != nil {
		return nil, err
	}
	return kernels.ConvolutionWith(x, w, b, p, kernels.ConvOptions{ISA: kernels.ConvISAAVX2})
}

// x86Target is gen.py's "OP TARGET" of a node.
func x86Target(n *fxgraph.Node) string {
	switch n.Op() {
	case fxgraph.CallFunction:
		// Python's operator functions live in module _operator.
		tg := n.Target().String()
		if strings.HasPrefix(tg, "operator.") {
			tg = "_" + tg
		}
		return "call_function " + tg
	case fxgraph.GetAttr:
		return "get_attr " + n.TargetName()
	default:
		return n.Op().String() + " " + n.TargetName()
	}
}

func x86Digest(t *testing.T, x *tensor.Tensor) []any {
	sum := sha256.Sum256(x.Bytes())
	shape := []any{}
	for _, d := range x.Shape() {
		shape = append(shape, float64(d))
	}
	return []any{strings.TrimPrefix(x.DType().String(), "torch."), shape, hex.EncodeToString(sum[:])[:16]}
}

// TestZooX86Inductor runs torchao's X86InductorQuantizer flow (static and
// dynamic) on every zoo model and compares with torchao's records:
//   - the prepared graph's annotations (input and output specs of every
//     annotated node) and its observers (name, class, input, users, in
//     graph order);
//   - after calibration on the recorded batches and convert with
//     fold_quantize, every node of the converted graph in order (name,
//     target, arguments, so every q/dq node with its scale, zero point,
//     range and dtype), and every constant (dtype, shape, digest of its
//     bytes: folded weights, per-channel scales and zero points);
//   - the converted graph's output on the first eval input, bit for bit.
func TestZooX86Inductor(t *testing.T) {
	exp := readX86Expected(t)
	reg := x86Registry(t)
	var res x86Outputs
	data, err := os.ReadFile(filepath.Join(x86Dir, "outputs.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &res))
	require.Equal(t, "fxquant-x86-outputs/1", res.Format)
	for _, stem := range zooModels(t) {
		for _, mode := range []string{"static", "dynamic"} {
			t.Run(stem+"/"+mode, func(t *testing.T) {
				rec, ok := exp.Models[stem][mode]
				require.True(t, ok, "no x86 record for %s/%s", stem, mode)
				if rec.AttrsAs != "" {
					rec.Attrs = exp.Models[stem][rec.AttrsAs].Attrs
				}
				require.NotEmpty(t, rec.Attrs, "constants")
				outs := zooOutputs(t, stem)
				g := x86Check(t, filepath.Join(zooDir, stem+".float.pt2"), x86Quantizer(t, mode), rec, exp.Targets, zooBatches(t, outs), reg)
				want, ok := res.Models[stem][mode]
				require.True(t, ok, "no x86 output record for %s/%s", stem, mode)
				x86CheckOutput(t, g, reg, mustTensor(t, &outs.Inputs.Eval[0]), want)
			})
		}
	}
}

// x86Check runs prepare with q on the program at path and compares with
// torchao's record: the annotations and observers of the prepared graph,
// then, after calibration on batches (with reg's kernels) and convert,
// every node of the converted graph and every constant.
func x86Check(t *testing.T, path string, q convert.Quantizer, rec x86Record, targets []string, batches [][]*tensor.Tensor, reg *ops.Registry) *fxgraph.Graph {
	t.Helper()
	require.Empty(t, rec.Error, "torchao failed")
	g := readUnlifted(t, path)
	require.NoError(t, convert.Prepare(g, q))
	wantAnn := map[string]any{}
	for k, raw := range rec.Annotations {
		var v []any
		require.NoError(t, json.Unmarshal(raw, &v))
		wantAnn[k] = v[:2]
	}
	gotAnn := map[string]any{}
	require.NoError(t, remarshal(x86Annotations(g), &gotAnn))
	assert.Equal(t, wantAnn, gotAnn, "annotations")

	var gotObs [][]any
	for n := range g.All() {
		if n.Op() != fxgraph.CallModule || !strings.HasPrefix(n.TargetName(), "activation_post_process_") {
			continue
		}
		v, _ := g.Attr(n.TargetName())
		o, ok := v.(observers.Observer)
		require.True(t, ok, "%s is an observer", n.Name())
		users := []any{}
		for _, u := range n.Users() {
			users = append(users, u.Name())
		}
		in, _ := n.Arg(0).(*fxgraph.Node)
		require.NotNil(t, in)
		gotObs = append(gotObs, []any{n.Name(), o.Class(), in.Name(), users})
	}
	var gotObsJ [][]any
	require.NoError(t, remarshal(gotObs, &gotObsJ))
	assert.Equal(t, rec.Observers, gotObsJ, "observers")

	require.NoError(t, convert.CalibrateWithRegistry(g, batches, nil, reg))
	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))

	var want [][]any
	for _, row := range rec.Converted {
		if row[0] == "_guards_fn" {
			continue
		}
		want = append(want, row)
	}
	var got []*fxgraph.Node
	for n := range g.All() {
		got = append(got, n)
	}
	bad := 0
	for i := 0; i < max(len(want), len(got)) && bad < 10; i++ {
		if i >= len(want) || i >= len(got) {
			bad++
			t.Errorf("converted node %d: torchao has %d nodes, fxquant %d", i, len(want), len(got))
			break
		}
		w, n := want[i], got[i]
		var wt string
		switch v := w[1].(type) {
		case string:
			wt = v
		case float64:
			wt = targets[int(v)]
		}
		var wargs any = []any{}
		if len(w) > 2 {
			wargs = w[2]
		}
		var gargs any
		if strings.HasPrefix(wt, "call_function quantized_decomposed.") || wt == "call_function _operator.getitem" {
			gargs = x86Arg(ops.List(n.Args()))
		} else {
			refs := []any{}
			for _, in := range x86NodeRefs(n.Args()) {
				refs = append(refs, "%"+in.Name())
			}
			gargs = refs
		}
		if w[0] != n.Name() || wt != x86Target(n) || !x86Equal(wargs, gargs) {
			bad++
			t.Errorf("converted node %d:\n torchao %v %s %v\n fxquant %s %s %v", i, w[0], wt, wargs, n.Name(), x86Target(n), gargs)
		}
	}
	seen := 0
	for n := range g.All() {
		if n.Op() != fxgraph.GetAttr {
			continue
		}
		wa, ok := rec.Attrs[n.Name()]
		if !ok {
			continue
		}
		seen++
		v, _ := g.Attr(n.TargetName())
		x, ok := v.(*tensor.Tensor)
		require.True(t, ok, "%s is a tensor", n.Name())
		var ga []any
		require.NoError(t, remarshal(x86Digest(t, x), &ga))
		assert.Equal(t, wa, ga, "constant %s", n.Name())
	}
	assert.Equal(t, len(rec.Attrs), seen, "constants read by q/dq ops")
	return g
}

// x86NodeRefs lists the nodes among args, depth first, as gen.py's
// node_refs (repeats kept).
func x86NodeRefs(args []ops.Value) []*fxgraph.Node {
	var out []*fxgraph.Node
	for _, a := range args {
		if n, ok := a.(*fxgraph.Node); ok {
			out = append(out, n)
		} else if seq, ok := ops.Sequence(a); ok {
			out = append(out, x86NodeRefs(seq)...)
		}
	}
	return out
}

// x86Outputs is testdata/x86/outputs.json (gen_outputs.py): torchao's
// converted programs' outputs on each model's first eval input, as float32
// bit patterns (llama_tiny: its first 256 values).
type x86Outputs struct {
	Format string `json:"format"`
	Models map[string]map[string]struct {
		Shape []int    `json:"shape"`
		Hex   []string `json:"hex"`
	} `json:"models"`
}

// x86CheckOutput runs the converted graph on x with reg's kernels and
// compares its output with torchao's: under the fixtures' rule for
// quantized programs (testdata/zoo/README.md), and bit for bit.
func x86CheckOutput(t *testing.T, g *fxgraph.Graph, reg *ops.Registry, x *tensor.Tensor, want struct {
	Shape []int    `json:"shape"`
	Hex   []string `json:"hex"`
}) {
	t.Helper()
	values := map[*fxgraph.Node]ops.Value{}
	outs, err := interp.Run(g, []*tensor.Tensor{x}, interp.Options{
		Registry: reg,
		Hook:     func(n *fxgraph.Node, v ops.Value) error { values[n] = v; return nil },
	})
	require.NoError(t, err)
	require.Len(t, outs, 1)
	y, ok := outs[0].(*tensor.Tensor)
	require.True(t, ok)
	require.Equal(t, want.Shape, y.Shape())
	got, err := tensor.Data[float32](y)
	require.NoError(t, err)
	got = got[:len(want.Hex)]
	w := make([]float32, len(want.Hex))
	same := 0
	for i, h := range want.Hex {
		b, err := strconv.ParseUint(h, 16, 32)
		require.NoError(t, err)
		w[i] = math.Float32frombits(uint32(b))
		if math.Float32bits(got[i]) == uint32(b) {
			same++
		}
	}
	scale := slices.Max(append(quantizeScales(t, g, values), math.SmallestNonzeroFloat64))
	checkQuantizedOutput(t, "x86 output", tensor.MustFromData(tensor.Float32, []int{len(w)}, w),
		tensor.MustFromData(tensor.Float32, []int{len(got)}, got), scale)
	// On the oracle's kernels fxquant computes torchao's program bit for bit.
	assert.Equal(t, len(w), same, "output elements bit-equal to torchao's")
}

// remarshal round-trips v through JSON into out, so Go values compare
// with decoded JSON.
func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
