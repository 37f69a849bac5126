package tests

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// qatDir holds the QAT fixtures (testdata/qat/README.md): float programs
// exported in train mode, torchao's prepared program (re-exported: the
// trainable form), that program trained by PyTorch, and torchao's convert
// of the trained state.
const qatDir = "testdata/qat"

var qatModels = []string{"convbnrelu", "mlp"}

// writtenUnlifted writes g as a .pt2 with p's signature, reads it back and
// returns its graph, unlifted.
func writtenUnlifted(t *testing.T, p *pt2.Program, g *fxgraph.Graph) *fxgraph.Graph {
	t.Helper()
	wp, err := p.WithGraph(g)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, wp.WriteArchive(&buf, nil))
	back, err := pt2.Read(buf.Bytes(), nil)
	require.NoError(t, err)
	bg, err := back.Unlifted()
	require.NoError(t, err)
	return bg
}

// graphMatcher compares two graphs structurally, from their outputs back:
// same ops and targets, the same literal arguments (floats bit for bit),
// get_attr tensors equal bit for bit, placeholders by name. Node names and
// program order may differ (torchao's re-export renames nodes).
type graphMatcher struct {
	a, b *fxgraph.Graph
	memo map[[2]*fxgraph.Node]bool
	// reexport compares a, a GraphModule's graph, with b, its re-export:
	// a packet target (aten.clamp, which torchao's reference rewrite
	// calls) equals its .default overload.
	reexport bool
}

// targetName is n's target, a packet spelled as its .default overload when
// re-export normalization is on.
func (m *graphMatcher) targetName(n *fxgraph.Node) string {
	s := fmt.Sprint(n.Target())
	if _, isPacket := n.Target().(ops.Packet); isPacket && m.reexport {
		s += ".default"
	}
	return s
}

func (m *graphMatcher) node(x, y *fxgraph.Node) error {
	k := [2]*fxgraph.Node{x, y}
	if m.memo[k] {
		return nil
	}
	if x.Op() != y.Op() {
		return fmt.Errorf("%s vs %s: op %s vs %s", x.Name(), y.Name(), x.Op(), y.Op())
	}
	switch x.Op() {
	case fxgraph.Placeholder:
		if x.TargetName() != y.TargetName() {
			return fmt.Errorf("placeholder %s vs %s", x.TargetName(), y.TargetName())
		}
	case fxgraph.GetAttr:
		va, _ := m.a.Attr(x.TargetName())
		vb, _ := m.b.Attr(y.TargetName())
		ta, ok1 := va.(*tensor.Tensor)
		tb, ok2 := vb.(*tensor.Tensor)
		if !ok1 || !ok2 {
			return fmt.Errorf("get_attr %s vs %s: not tensors", x.TargetName(), y.TargetName())
		}
		if err := tensor.Diff(ta.Contiguous(), tb.Contiguous()); err != nil {
			return fmt.Errorf("get_attr %s (fxquant) vs %s (torchao): %w", x.TargetName(), y.TargetName(), err)
		}
	case fxgraph.CallFunction, fxgraph.Output:
		if x.Op() == fxgraph.CallFunction && m.targetName(x) != m.targetName(y) {
			return fmt.Errorf("%s vs %s: target %v vs %v", x.Name(), y.Name(), x.Target(), y.Target())
		}
		if err := m.values(x.Args(), y.Args()); err != nil {
			return fmt.Errorf("%s (%v) vs %s: %w", x.Name(), x.Target(), y.Name(), err)
		}
		kx, ky := x.Kwargs(), y.Kwargs()
		if len(kx) != len(ky) {
			return fmt.Errorf("%s vs %s: kwargs %v vs %v", x.Name(), y.Name(), kx, ky)
		}
		for i := range kx {
			if kx[i].Name != ky[i].Name {
				return fmt.Errorf("%s vs %s: kwarg %s vs %s", x.Name(), y.Name(), kx[i].Name, ky[i].Name)
			}
			if err := m.value(kx[i].Value, ky[i].Value); err != nil {
				return fmt.Errorf("%s vs %s: kwarg %s: %w", x.Name(), y.Name(), kx[i].Name, err)
			}
		}
	default:
		return fmt.Errorf("%s: unexpected op %s", x.Name(), x.Op())
	}
	m.memo[k] = true
	return nil
}

func (m *graphMatcher) values(xs, ys []ops.Value) error {
	if len(xs) != len(ys) {
		return fmt.Errorf("%d args vs %d: %v vs %v", len(xs), len(ys), xs, ys)
	}
	for i := range xs {
		if err := m.value(xs[i], ys[i]); err != nil {
			return fmt.Errorf("arg %d: %w", i, err)
		}
	}
	return nil
}

func (m *graphMatcher) value(x, y ops.Value) error {
	switch xv := x.(type) {
	case *fxgraph.Node:
		yv, ok := y.(*fxgraph.Node)
		if !ok || xv == nil || yv == nil {
			if xv == nil && yv == nil {
				return nil
			}
			return fmt.Errorf("node %v vs %v", x, y)
		}
		return m.node(xv, yv)
	case ops.List:
		yv, ok := y.(ops.List)
		if !ok {
			return fmt.Errorf("list %v vs %v", x, y)
		}
		return m.values(xv, yv)
	case ops.Tuple:
		yv, ok := y.(ops.Tuple)
		if !ok {
			return fmt.Errorf("tuple %v vs %v", x, y)
		}
		return m.values(xv, yv)
	case float64:
		yv, ok := y.(float64)
		if !ok || math.Float64bits(xv) != math.Float64bits(yv) {
			return fmt.Errorf("float %v vs %v", x, y)
		}
		return nil
	}
	if !reflect.DeepEqual(x, y) {
		return fmt.Errorf("literal %v (%T) vs %v (%T)", x, x, y, y)
	}
	return nil
}

// callCounts counts the call_function nodes by target.
func callCounts(g *fxgraph.Graph) map[string]int {
	c := map[string]int{}
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction {
			c[fmt.Sprint(n.Target())]++
		}
	}
	return c
}

// assertSameGraph checks got (fxquant) against want (torchao).
func assertSameGraph(t *testing.T, got, want *fxgraph.Graph) {
	t.Helper()
	assert.Equal(t, callCounts(want), callCounts(got), "call_function nodes by target")
	og, ok1 := got.OutputNode()
	ow, ok2 := want.OutputNode()
	require.True(t, ok1 && ok2)
	m := &graphMatcher{a: got, b: want, memo: map[[2]*fxgraph.Node]bool{}}
	assert.NoError(t, m.node(og, ow))
}

// TestQATConvertEqualsTorchao: the program torchao prepared (XNNPACK,
// is_qat=True), trained in PyTorch and exported again, converted by
// fxquant (MoveToEval, ConvertQAT) equals torchao's
// move_exported_model_to_eval + convert_pt2e of the same trained state:
// q/dq placement, qparams bit for bit, conv+BN folded weights and biases and
// the int8 weights bit for bit.
func TestQATConvertEqualsTorchao(t *testing.T) {
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			g := readUnlifted(t, filepath.Join(qatDir, name+".trained.pt2"))
			convert.MoveToEval(g)
			require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{}))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			want := readUnlifted(t, filepath.Join(qatDir, name+".torchao_converted.pt2"))
			assertSameGraph(t, g, want)
			keys := []string{}
			for k := range callCounts(g) {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Logf("%s: %v", name, callCounts(g))
		})
	}
}

// TestQATMatcherDetectsDifferences: the comparison above fails when the
// graph is not converted the same way (no MoveToEval: dropout stays in
// train mode with p=0.25) or a folded weight differs in one bit.
func TestQATMatcherDetectsDifferences(t *testing.T) {
	want := readUnlifted(t, filepath.Join(qatDir, "mlp.torchao_converted.pt2"))
	g := readUnlifted(t, filepath.Join(qatDir, "mlp.trained.pt2"))
	require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{}))
	og, _ := g.OutputNode()
	ow, _ := want.OutputNode()
	err := (&graphMatcher{a: g, b: want, memo: map[[2]*fxgraph.Node]bool{}}).node(og, ow)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "float 0.25 vs 0.5")

	cw := readUnlifted(t, filepath.Join(qatDir, "convbnrelu.torchao_converted.pt2"))
	c := readUnlifted(t, filepath.Join(qatDir, "convbnrelu.trained.pt2"))
	convert.MoveToEval(c)
	require.NoError(t, convert.ConvertQAT(c, convert.ConvertOptions{}))
	flipped := false
	for n := range c.All() {
		if n.Op() == fxgraph.GetAttr && !flipped {
			v, _ := c.Attr(n.TargetName())
			if tt, ok := v.(*tensor.Tensor); ok && tt.DType() == tensor.Float32 {
				d, err := tensor.Data[float32](tt.Contiguous())
				require.NoError(t, err)
				d = append([]float32(nil), d...)
				d[0] = math.Nextafter32(d[0], float32(math.Inf(1)))
				nt, err := tensor.FromData(tensor.Float32, tt.Shape(), d)
				require.NoError(t, err)
				c.SetAttr(n.TargetName(), nt)
				flipped = true
			}
		}
	}
	require.True(t, flipped)
	og, _ = c.OutputNode()
	ow, _ = cw.OutputNode()
	assert.Error(t, (&graphMatcher{a: c, b: cw, memo: map[[2]*fxgraph.Node]bool{}}).node(og, ow))
}

// xnnpackQAT is XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True)).
func xnnpackQAT(t *testing.T) *convert.XNNPACKQuantizer {
	c, err := convert.SymmetricQATConfig(convert.DefaultSymmetricConfigOptions())
	require.NoError(t, err)
	return convert.NewXNNPACKQuantizer(c)
}

// TestQATPrepareEqualsTorchao: fxquant's PrepareQAT of the float program
// (exported in train mode) equals torch.export of torchao's
// prepare_qat_pt2e: the conv+BN fold simulation, the fused fake-quantize
// ops with their literal arguments, and their initial state buffers bit for
// bit.
func TestQATPrepareEqualsTorchao(t *testing.T) {
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			g := readUnlifted(t, filepath.Join(qatDir, name+".float.pt2"))
			require.NoError(t, convert.PrepareQAT(g, xnnpackQAT(t), convert.QATOptions{}))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			want := readUnlifted(t, filepath.Join(qatDir, name+".torchao_prepared.pt2"))
			assertSameGraph(t, g, want)
			assert.Equal(t, attrNames(want), attrNames(g), "state names (the state_dict PyTorch sees)")
		})
	}
}

// attrNames lists the tensor attributes a get_attr node reads, sorted.
func attrNames(g *fxgraph.Graph) []string {
	var out []string
	for n := range g.All() {
		if n.Op() == fxgraph.GetAttr {
			out = append(out, n.TargetName())
		}
	}
	sort.Strings(out)
	return out
}

// qatTrainRecord is one model's entry in fxquant_train.json, written by
// check_fx.py: fxquant's prepare-qat output loaded and trained in PyTorch
// beside torchao's prepared program.
type qatTrainRecord struct {
	Loads          bool      `json:"loads"`
	SameKeys       bool      `json:"same_state_keys_as_torchao"`
	InitialEqual   bool      `json:"initial_state_equal_bitwise"`
	ForwardEqual   bool      `json:"forward_equal_bitwise_before_training"`
	Losses         []float64 `json:"losses"`
	TorchaoLosses  []float64 `json:"torchao_losses"`
	LossesEqual    bool      `json:"losses_equal"`
	TrainedEqual   bool      `json:"trained_state_equal_bitwise"`
	TrainedMinMaxs any       `json:"trained_min_max"`
}

// TestQATRoundTrip: fxquant's prepare-qat output, written as a .pt2,
// equals torchao's prepared program (so PyTorch trains the same thing); the
// recorded PyTorch run (check_fx.py) loaded it, trained it with the
// fixtures' loop and got torchao's losses and trained state bit for bit;
// and fxquant's convert of that trained program equals torchao's convert.
func TestQATRoundTrip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(qatDir, "fxquant_train.json"))
	require.NoError(t, err)
	var recs map[string]qatTrainRecord
	require.NoError(t, json.Unmarshal(data, &recs))
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			p, g := readProgramUnlifted(t, filepath.Join(qatDir, name+".float.pt2"))
			require.NoError(t, convert.PrepareQAT(g, xnnpackQAT(t), convert.QATOptions{}))
			bg := writtenUnlifted(t, p, g)
			want := readUnlifted(t, filepath.Join(qatDir, name+".torchao_prepared.pt2"))
			assertSameGraph(t, bg, want)
			assert.Equal(t, attrNames(want), attrNames(bg))

			r, ok := recs[name]
			require.True(t, ok)
			assert.True(t, r.Loads && r.SameKeys && r.InitialEqual && r.ForwardEqual && r.LossesEqual && r.TrainedEqual, "%+v", r)
			var ref struct {
				Losses []float64 `json:"losses"`
			}
			data, err := os.ReadFile(filepath.Join(qatDir, name+".torchao.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &ref))
			assert.Equal(t, ref.Losses, r.Losses, "gen.py's torchao training run and check_fx.py's fxquant run")

			tg := readUnlifted(t, filepath.Join(qatDir, name+".fxquant_trained.pt2"))
			convert.MoveToEval(tg)
			require.NoError(t, convert.ConvertQAT(tg, convert.ConvertOptions{}))
			assertSameGraph(t, tg, readUnlifted(t, filepath.Join(qatDir, name+".torchao_converted.pt2")))
		})
	}
}

// TestQATErrors: a prepared program that never trained (min_val +inf), a
// program without fake quantizers, and per-module configs are refused with
// errors naming the node or the reason; the graph stays as it was.
func TestQATErrors(t *testing.T) {
	g := readUnlifted(t, filepath.Join(qatDir, "mlp.torchao_prepared.pt2"))
	before := fxgraph.Format(g)
	err := convert.ConvertQAT(g, convert.ConvertOptions{})
	require.ErrorIs(t, err, convert.ErrQAT)
	assert.Contains(t, err.Error(), `fake quantize node "fused_moving_avg_obs_fake_quant"`)
	assert.Contains(t, err.Error(), "never observed data")
	assert.Equal(t, before, fxgraph.Format(g), "a failed ConvertQAT leaves the graph as it was")

	f := readUnlifted(t, filepath.Join(qatDir, "mlp.float.pt2"))
	err = convert.ConvertQAT(f, convert.ConvertOptions{})
	require.ErrorIs(t, err, convert.ErrQAT)
	assert.Contains(t, err.Error(), "not a QAT program")

	q := xnnpackQAT(t)
	q.SetModuleName("fc1", nil)
	fb := fxgraph.Format(f)
	require.ErrorIs(t, convert.PrepareQAT(f, q, convert.QATOptions{}), convert.ErrQAT)
	assert.Equal(t, fb, fxgraph.Format(f))

	_, err = convert.SymmetricQATConfig(convert.SymmetricConfigOptions{Dynamic: true, ActQMin: -128, ActQMax: 127, WeightQMin: -127, WeightQMax: 127})
	require.ErrorIs(t, err, convert.ErrQAT)
}

// TestQATMoveToEvalTrain: MoveToEval gives the dropout and batch-norm
// literals torchao's move_exported_model_to_eval gives (its listing in
// NAME.torchao.json), MoveToTrain switches them back with torchao's
// replacement literals.
func TestQATMoveToEvalTrain(t *testing.T) {
	for _, tc := range []struct{ name, target, evalArgs, trainArgs string }{
		{"mlp", "aten.dropout.default", "0.5, False", "0.5, True"},
		{"convbnrelu", "aten.batch_norm.default", "False, 0.1, 1e-05, False", "True, 0.1, 1e-05, False"},
	} {
		var rec struct {
			Listing []string `json:"prepared_eval_listing"`
		}
		data, err := os.ReadFile(filepath.Join(qatDir, tc.name+".torchao.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &rec))
		found := 0
		for _, l := range rec.Listing {
			if strings.Contains(l, "| "+tc.target+" |") {
				assert.Contains(t, l, tc.evalArgs+") |", "torchao's eval-moved graph")
				found++
			}
		}
		require.Positive(t, found)
		g := readUnlifted(t, filepath.Join(qatDir, tc.name+".torchao_prepared.pt2"))
		assert.Equal(t, found, convert.MoveToEval(g))
		lits := func() []string {
			var out []string
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction && fmt.Sprint(n.Target()) == tc.target {
					var parts []string
					for _, a := range n.Args() {
						if _, isNode := a.(*fxgraph.Node); !isNode {
							parts = append(parts, pyLiteral(a))
						}
					}
					out = append(out, strings.Join(parts, ", "))
				}
			}
			return out
		}
		for _, l := range lits() {
			assert.Equal(t, tc.evalArgs, l)
		}
		assert.Equal(t, found, convert.MoveToTrain(g))
		for _, l := range lits() {
			assert.Equal(t, tc.trainArgs, l)
		}
	}
}

// pyLiteral prints a literal as Python does in the listings.
func pyLiteral(v ops.Value) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// TestQATPerChannel: per-channel weights (is_per_channel=True,
// is_qat=True). Without presizing, PrepareQAT equals torchao's prepared
// graph exactly; gen_pc.py recorded that PyTorch cannot train that form
// once loaded (nor torchao's own), that fxquant's presized program trains
// to torchao's in-memory losses and state bit for bit, and fxquant's
// convert of it equals torchao's convert.
func TestQATPerChannel(t *testing.T) {
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	cfg, err := convert.SymmetricQATConfig(o)
	require.NoError(t, err)

	g := readUnlifted(t, filepath.Join(qatDir, "convbnrelu.float.pt2"))
	require.NoError(t, convert.PrepareQAT(g, convert.NewXNNPACKQuantizer(cfg), convert.QATOptions{}))
	want := readUnlifted(t, filepath.Join(qatDir, "convbnrelu_pc.torchao_prepared.pt2"))
	assertSameGraph(t, g, want)
	assert.Equal(t, attrNames(want), attrNames(g))

	// Presized: the weight fake quantizers' buffers have the 4 channels.
	g = readUnlifted(t, filepath.Join(qatDir, "convbnrelu.float.pt2"))
	require.NoError(t, convert.PrepareQAT(g, convert.NewXNNPACKQuantizer(cfg), convert.QATOptions{PresizePerChannel: true}))
	presized := 0
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction || n.Target() != convert.FusedFakeQuantize || n.Arg(11) != true {
			continue
		}
		for i, want := range map[int]float32{3: float32(math.Inf(1)), 4: float32(math.Inf(-1)), 5: 1} {
			v, _ := g.Attr(n.Arg(i).(*fxgraph.Node).TargetName())
			d, err := tensor.Data[float32](v.(*tensor.Tensor))
			require.NoError(t, err)
			assert.Equal(t, []float32{want, want, want, want}, d, "%s arg %d", n.Name(), i)
		}
		v, _ := g.Attr(n.Arg(6).(*fxgraph.Node).TargetName())
		assert.Equal(t, []int{4}, v.(*tensor.Tensor).Shape())
		assert.Equal(t, tensor.Int32, v.(*tensor.Tensor).DType())
		presized++
	}
	assert.Equal(t, 2, presized, "one per conv weight")

	var rec struct {
		TorchaoLoaded string    `json:"torchao_prepared_loaded_training"`
		FxShapes      string    `json:"fxquant_torchao_shapes_loaded_training"`
		Torchao       []float64 `json:"torchao_in_memory_losses"`
		Fx            []float64 `json:"fxquant_presized_losses"`
		Equal         bool      `json:"trained_state_equal_bitwise"`
	}
	data, err := os.ReadFile(filepath.Join(qatDir, "convbnrelu_pc.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Contains(t, rec.TorchaoLoaded, "Trying to resize storage that is not resizable")
	assert.Contains(t, rec.FxShapes, "Trying to resize storage that is not resizable")
	assert.Equal(t, rec.Torchao, rec.Fx)
	assert.Len(t, rec.Fx, 3)
	assert.True(t, rec.Equal)

	tg := readUnlifted(t, filepath.Join(qatDir, "convbnrelu_pc.fxquant_trained.pt2"))
	convert.MoveToEval(tg)
	require.NoError(t, convert.ConvertQAT(tg, convert.ConvertOptions{}))
	assertSameGraph(t, tg, readUnlifted(t, filepath.Join(qatDir, "convbnrelu_pc.torchao_converted.pt2")))
	assert.Equal(t, 2, callCounts(tg)["quantized_decomposed.dequantize_per_channel.default"])
}

// TestQATConvertedOutputs: fxquant's converted graphs run on the example
// input compute torchao's converted output (io.py), and the programs
// convert-qat wrote computed it in PyTorch bit for bit.
func TestQATConvertedOutputs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(qatDir, "converted_io.json"))
	require.NoError(t, err)
	var recs map[string]struct {
		InShape  []int     `json:"input_shape"`
		In       []float32 `json:"input"`
		OutShape []int     `json:"torchao_output_shape"`
		Out      []float32 `json:"torchao_output"`
		Written  bool      `json:"fxquant_written_output_equal_bitwise"`
	}
	require.NoError(t, json.Unmarshal(data, &recs))
	for _, name := range []string{"convbnrelu", "mlp", "convbnrelu_pc"} {
		t.Run(name, func(t *testing.T) {
			r, ok := recs[name]
			require.True(t, ok)
			assert.True(t, r.Written, "the program convert-qat wrote computes torchao's output in PyTorch")
			g := readUnlifted(t, filepath.Join(qatDir, name+".fxquant_trained.pt2"))
			convert.MoveToEval(g)
			require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{}))
			assertConvertedOutput(t, g, r.InShape, r.In, r.OutShape, r.Out)
		})
	}
}

// assertConvertedOutput runs g on the recorded input and checks that it
// computes torchao's recorded output bit for bit.
func assertConvertedOutput(t *testing.T, g *fxgraph.Graph, inShape []int, in []float32, outShape []int, out []float32) {
	t.Helper()
	x, err := tensor.FromData(tensor.Float32, inShape, in)
	require.NoError(t, err)
	want, err := tensor.FromData(tensor.Float32, outShape, out)
	require.NoError(t, err)
	got, _ := runGraph(t, g, []*tensor.Tensor{x})
	assert.NoError(t, tensor.Diff(got[0], want), "fxquant's interpreter on its converted graph")
}

// TestQATPrepareZoo: on two real torchvision CNNs of the zoo, fxquant's
// prepare-qat program, written and read back, has torchao's prepared graph
// (re-exported; gen_zoo.py kept its program JSON): the same ops, literal
// arguments and lifted parameter and buffer names (num_batches_tracked
// aside), so the same state_dict; a shared observer group is one state
// called twice (mnasnet's relu -> mean).
func TestQATPrepareZoo(t *testing.T) {
	if testing.Short() {
		t.Skip("zoo models")
	}
	for _, name := range []string{"mnasnet0_5", "mobilenet_v3_large"} {
		t.Run(name, func(t *testing.T) {
			p, g := readProgramUnlifted(t, filepath.Join(zooDir, name+".float.pt2"))
			var buffers []string
			for _, s := range p.Signature.Inputs {
				if s.Kind == pt2.Buffer {
					buffers = append(buffers, s.Target)
				}
			}
			require.NoError(t, convert.PrepareQAT(g, xnnpackQAT(t), convert.QATOptions{PrepareOptions: convert.PrepareOptions{Buffers: buffers}}))
			wp, err := p.WithGraph(g)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, wp.WriteArchive(&buf, nil))
			got, err := pt2.Read(buf.Bytes(), nil)
			require.NoError(t, err)

			f, err := os.Open(filepath.Join(qatDir, name+".qat_prepared.model.json.gz"))
			require.NoError(t, err)
			defer f.Close()
			zr, err := gzip.NewReader(f)
			require.NoError(t, err)
			js, err := io.ReadAll(zr)
			require.NoError(t, err)
			want, err := pt2.ReadJSON(js, nil)
			require.NoError(t, err)

			assertSameGraph(t, got.Graph, want.Graph)
			specs := func(p *pt2.Program) []string {
				var out []string
				for _, s := range p.Signature.Inputs {
					// WithGraph keeps every buffer of a used submodule (as
					// torchao's convert does); torch.export of the prepared
					// eval-mode zoo program drops the unused num_batches_tracked.
					if !strings.HasSuffix(s.Target, ".num_batches_tracked") {
						out = append(out, fmt.Sprintf("%s %s %s", s.Kind, s.Name, s.Target))
					}
				}
				sort.Strings(out)
				return out
			}
			assert.Equal(t, specs(want), specs(got), "lifted inputs")
		})
	}
}

// TestQATZooTrainRecord: zoo_train.py's record of fxquant's prepare-qat
// programs of two zoo CNNs trained in PyTorch beside torchao's (both saved
// and loaded): the same forward and losses bit for bit; the same trained
// state on mobilenet_v3_large, and on mnasnet0_5 as many differing
// parameters as two runs of torchao's own program differ by (PyTorch's
// variation); fxquant's programs have the float program's
// num_batches_tracked buffers besides.
func TestQATZooTrainRecord(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(qatDir, "zoo_train.json"))
	require.NoError(t, err)
	var recs map[string]struct {
		OnlyFx       []string  `json:"only_fxquant_keys"`
		OnlyTorchao  []string  `json:"only_torchao_keys"`
		Forward      bool      `json:"forward_equal_bitwise"`
		Fx           []float64 `json:"fxquant_losses"`
		Torchao      []float64 `json:"torchao_losses"`
		Equal        bool      `json:"trained_state_equal_bitwise_on_common_keys"`
		DiffFx       int       `json:"keys_differing_fxquant_vs_torchao"`
		DiffControl  int       `json:"keys_differing_torchao_vs_torchao_control"`
		CommonKeys   int       `json:"common_keys"`
		ControlLoss  []float64 `json:"control_losses"`
		SameStateKey bool      `json:"same_state_keys"`
	}
	require.NoError(t, json.Unmarshal(data, &recs))
	require.Len(t, recs, 2)
	for name, r := range recs {
		assert.True(t, r.Forward, name)
		assert.Len(t, r.Fx, 2, name)
		assert.Equal(t, r.Torchao, r.Fx, name)
		assert.Empty(t, r.OnlyTorchao, name)
		for _, k := range r.OnlyFx {
			assert.True(t, strings.HasSuffix(k, ".num_batches_tracked"), "%s: %s", name, k)
		}
		assert.Equal(t, r.DiffControl, r.DiffFx, name)
		assert.Greater(t, r.CommonKeys, 1000, name)
	}
	assert.True(t, recs["mobilenet_v3_large"].Equal)
	assert.Zero(t, recs["mobilenet_v3_large"].DiffFx)
}

// TestQATConvertReference: convert-qat --reference (ConvertQAT with
// ReferenceRepresentation) equals torchao's
// convert_pt2e(use_reference_representation=True) of the same trained
// state (gen_ref.py).
func TestQATConvertReference(t *testing.T) {
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			g := readUnlifted(t, filepath.Join(qatDir, name+".trained.pt2"))
			convert.MoveToEval(g)
			require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{ReferenceRepresentation: true}))
			want := readUnlifted(t, filepath.Join(qatDir, name+".torchao_converted_ref.pt2"))
			// The re-export adds an aten._assert_tensor_metadata (no users)
			// per .to(dtype) and spells the aten.clamp packet as .default.
			m := &graphMatcher{a: g, b: want, memo: map[[2]*fxgraph.Node]bool{}, reexport: true}
			gotCounts, wantCounts := map[string]int{}, map[string]int{}
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction {
					gotCounts[m.targetName(n)]++
				}
			}
			asserts := 0
			for n := range want.All() {
				if n.Op() == fxgraph.CallFunction {
					if fmt.Sprint(n.Target()) == "aten._assert_tensor_metadata.default" {
						asserts++
						continue
					}
					wantCounts[m.targetName(n)]++
				}
			}
			assert.Equal(t, wantCounts, gotCounts)
			assert.Equal(t, gotCounts["aten.to.dtype"], asserts, "one assert per .to(dtype)")
			og, _ := g.OutputNode()
			ow, _ := want.OutputNode()
			assert.NoError(t, m.node(og, ow))
		})
	}
}
