package tests

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
)

// x86QAT is X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=True)).
func x86QAT(t *testing.T) *convert.X86InductorQuantizer {
	t.Helper()
	c, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{QAT: true})
	require.NoError(t, err)
	q := convert.NewX86InductorQuantizer().SetGlobal(c)
	require.Empty(t, q.Warnings)
	return q
}

// x86QATRecord is one model's entry in x86_train.json (gen_x86.py).
type x86QATRecord struct {
	TorchaoLoaded  string    `json:"torchao_prepared_loaded_training"`
	FxShapesLoaded string    `json:"fxquant_torchao_shapes_loaded_training"`
	SameKeys       bool      `json:"same_state_keys"`
	InitialDiff    []string  `json:"initial_state_differing_keys"`
	ForwardEqual   bool      `json:"forward_equal_bitwise_before_training"`
	Torchao        []float64 `json:"torchao_in_memory_losses"`
	Fx             []float64 `json:"fxquant_losses"`
	LossesEqual    bool      `json:"losses_equal"`
	TrainedEqual   bool      `json:"trained_state_equal_bitwise"`
	InShape        []int     `json:"input_shape"`
	In             []float32 `json:"input"`
	OutShape       []int     `json:"torchao_output_shape"`
	Out            []float32 `json:"torchao_output"`
}

func readX86QATRecords(t *testing.T) map[string]x86QATRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(qatDir, "x86_train.json"))
	require.NoError(t, err)
	var recs map[string]x86QATRecord
	require.NoError(t, json.Unmarshal(data, &recs))
	return recs
}

// TestQATX86PrepareEqualsTorchao: fxquant's PrepareQAT with the x86
// inductor quantizer and its is_qat=True config equals torch.export of
// torchao's prepare_qat_pt2e with the same quantizer (gen_x86.py): the
// conv+BN fold simulation, the fused fake-quantize ops with their literal
// arguments (uint8 0..255 affine activations, per-channel symmetric int8
// weights), their initial state bit for bit (empty per-channel min/max
// buffers, as torchao has them) and the state names; the same holds after
// writing the program and reading it back.
func TestQATX86PrepareEqualsTorchao(t *testing.T) {
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			p, g := readProgramUnlifted(t, filepath.Join(qatDir, name+".float.pt2"))
			require.NoError(t, convert.PrepareQAT(g, x86QAT(t), convert.QATOptions{}))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			want := readUnlifted(t, filepath.Join(qatDir, name+"_x86.torchao_prepared.pt2"))
			assertSameGraph(t, g, want)
			assert.Equal(t, attrNames(want), attrNames(g), "state names (the state_dict PyTorch sees)")
			perChannel, perTensor := 0, 0
			for n := range g.All() {
				if n.Op() != fxgraph.CallFunction || n.Target() != convert.FusedFakeQuantize {
					continue
				}
				if len(n.Args()) == 13 && n.Arg(11) == true && n.Arg(12) == true {
					assert.Equal(t, []any{int64(-128), int64(127), int64(0)}, []any{n.Arg(8), n.Arg(9), n.Arg(10)}, n.Name())
					perChannel++
				} else {
					assert.Equal(t, []any{0.01, int64(0), int64(255), int64(-1)}, []any{n.Arg(7), n.Arg(8), n.Arg(9), n.Arg(10)}, n.Name())
					perTensor++
				}
			}
			assert.Equal(t, 2, perChannel, "one per weight")
			assert.Equal(t, map[string]int{"convbnrelu": 3, "mlp": 2}[name], perTensor)

			assertSameGraph(t, writtenUnlifted(t, p, g), want)
		})
	}
}

// TestQATX86TrainRecord: gen_x86.py loaded the program `fxquant
// prepare-qat --quantizer x86-inductor` wrote (presized: the per-channel
// weight fake quantizers' buffers have their channel count) in PyTorch:
// its state differs from torchao's only in those presized buffers, its
// forward equals torchao's bit for bit, and trained with the fixtures' loop
// it gives torchao's in-memory losses and trained state bit for bit.
// torchao's own prepared program, and fxquant's with --presize=false,
// cannot train once loaded (the resize of the empty buffers fails).
func TestQATX86TrainRecord(t *testing.T) {
	recs := readX86QATRecords(t)
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			r, ok := recs[name+"_x86"]
			require.True(t, ok)
			assert.Contains(t, r.TorchaoLoaded, "Trying to resize storage that is not resizable")
			assert.Contains(t, r.FxShapesLoaded, "Trying to resize storage that is not resizable")
			assert.True(t, r.SameKeys)
			// Which buffers PrepareQAT presizes, from fxquant's own program:
			// every state buffer of a per-channel fake quantizer but eps and
			// the enable flags.
			g := readUnlifted(t, filepath.Join(qatDir, name+".float.pt2"))
			require.NoError(t, convert.PrepareQAT(g, x86QAT(t), convert.QATOptions{PresizePerChannel: true}))
			var presized []string
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction && n.Target() == convert.FusedFakeQuantize && n.Arg(11) == true {
					for _, i := range []int{3, 4, 5, 6} {
						presized = append(presized, n.Arg(i).(*fxgraph.Node).TargetName())
					}
				}
			}
			assert.ElementsMatch(t, presized, r.InitialDiff, "the initial states differ exactly in the presized buffers")
			assert.True(t, r.ForwardEqual)
			assert.Len(t, r.Fx, 3)
			assert.Equal(t, r.Torchao, r.Fx)
			assert.True(t, r.LossesEqual && r.TrainedEqual, "%+v", r)
		})
	}
}

// TestQATX86ConvertEqualsTorchao: fxquant's ConvertQAT (after MoveToEval)
// of its x86 prepared program as PyTorch trained it (gen_x86.py) equals
// torchao's move_exported_model_to_eval + convert_pt2e of its in-memory
// trained model: q/dq placement, uint8 activation and per-channel int8
// weight qparams, the conv+BN folded weights and biases and the int8
// weights bit for bit; and fxquant's interpreter on its converted graph
// computes torchao's converted output on the example input bit for bit.
func TestQATX86ConvertEqualsTorchao(t *testing.T) {
	recs := readX86QATRecords(t)
	for _, name := range qatModels {
		t.Run(name, func(t *testing.T) {
			g := readUnlifted(t, filepath.Join(qatDir, name+"_x86.fxquant_trained.pt2"))
			assert.Positive(t, convert.MoveToEval(g))
			require.NoError(t, convert.ConvertQAT(g, convert.ConvertOptions{}))
			require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
			want := readUnlifted(t, filepath.Join(qatDir, name+"_x86.torchao_converted.pt2"))
			assertSameGraph(t, g, want)
			counts := callCounts(g)
			assert.Equal(t, 2, counts["quantized_decomposed.dequantize_per_channel.default"])
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction && fmt.Sprint(n.Target()) == "quantized_decomposed.quantize_per_tensor.default" {
					assert.Equal(t, tensor.UInt8, n.Arg(5), n.Name())
				}
			}

			r, ok := recs[name+"_x86"]
			require.True(t, ok)
			assertConvertedOutput(t, g, r.InShape, r.In, r.OutShape, r.Out)
		})
	}
}

// TestQATX86DetectsDifferences: the x86 comparison fails for the XNNPACK
// QAT prepare (int8 activations) and for a converted per-channel weight
// scale one ulp off.
func TestQATX86DetectsDifferences(t *testing.T) {
	g := readUnlifted(t, filepath.Join(qatDir, "mlp.float.pt2"))
	require.NoError(t, convert.PrepareQAT(g, xnnpackQAT(t), convert.QATOptions{}))
	want := readUnlifted(t, filepath.Join(qatDir, "mlp_x86.torchao_prepared.pt2"))
	og, _ := g.OutputNode()
	ow, _ := want.OutputNode()
	assert.Error(t, (&graphMatcher{a: g, b: want, memo: map[[2]*fxgraph.Node]bool{}}).node(og, ow))

	c := readUnlifted(t, filepath.Join(qatDir, "mlp_x86.fxquant_trained.pt2"))
	convert.MoveToEval(c)
	require.NoError(t, convert.ConvertQAT(c, convert.ConvertOptions{}))
	changed := false
	for n := range c.All() {
		if changed || n.Op() != fxgraph.CallFunction || fmt.Sprint(n.Target()) != "quantized_decomposed.dequantize_per_channel.default" {
			continue
		}
		s := n.Arg(1).(*fxgraph.Node)
		v, _ := c.Attr(s.TargetName())
		d, err := tensor.Data[float32](v.(*tensor.Tensor).Contiguous())
		require.NoError(t, err)
		d = append([]float32(nil), d...)
		d[0] = math.Nextafter32(d[0], 0)
		nt, err := tensor.FromData(tensor.Float32, v.(*tensor.Tensor).Shape(), d)
		require.NoError(t, err)
		c.SetAttr(s.TargetName(), nt)
		changed = true
	}
	require.True(t, changed)
	cw := readUnlifted(t, filepath.Join(qatDir, "mlp_x86.torchao_converted.pt2"))
	og, _ = c.OutputNode()
	ow, _ = cw.OutputNode()
	assert.Error(t, (&graphMatcher{a: c, b: cw, memo: map[[2]*fxgraph.Node]bool{}}).node(og, ow))
}

// TestQATX86Errors: PrepareQAT refuses an x86 quantizer whose config is not
// a QAT config (no fake quantizer is inserted), a nil quantizer and other
// quantizer types, leaving the graph as it was.
func TestQATX86Errors(t *testing.T) {
	g := readUnlifted(t, filepath.Join(qatDir, "mlp.float.pt2"))
	before := fxgraph.Format(g)
	ptq, err := convert.X86InductorQuantizationConfig(convert.X86InductorConfigOptions{})
	require.NoError(t, err)
	err = convert.PrepareQAT(g, convert.NewX86InductorQuantizer().SetGlobal(ptq), convert.QATOptions{})
	require.ErrorIs(t, err, convert.ErrQAT)
	assert.Contains(t, err.Error(), "no fake quantizer")
	var nilX86 *convert.X86InductorQuantizer
	assert.ErrorContains(t, convert.PrepareQAT(g, nilX86, convert.QATOptions{}), "nil quantizer")
	assert.ErrorContains(t, convert.PrepareQAT(g, nil, convert.QATOptions{}), "nil quantizer")
	err = convert.PrepareQAT(g, convert.ComposableQuantizer{x86QAT(t)}, convert.QATOptions{})
	require.ErrorIs(t, err, convert.ErrQAT)
	assert.Contains(t, err.Error(), "ComposableQuantizer")
	assert.Equal(t, before, fxgraph.Format(g))
}
