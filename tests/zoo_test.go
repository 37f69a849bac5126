package tests

import (
	"bytes"
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
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// zooDir holds real torchvision, transformer and decoder programs exported
// by PyTorch 2.14 and quantized by torchao, with torchao's records
// (testdata/zoo/README.md). Every NAME.float.pt2 in it is a model.
const zooDir = "testdata/zoo"

// zooMode is one quantizer mode of a model's record in expected.json.
type zooMode struct {
	QDQCounts map[string]int `json:"qdq_counts"`
}

// zooRecord is a model's record in expected.json: its modes, each with
// torchao's q/dq counts.
type zooRecord struct {
	Modes []string                   `json:"modes"`
	Raw   map[string]json.RawMessage `json:"-"`
}

func (r *zooRecord) mode(t *testing.T, m string) zooMode {
	t.Helper()
	var zm zooMode
	require.NoError(t, json.Unmarshal(r.Raw[m], &zm), "expected.json mode %s", m)
	return zm
}

func zooRecords(t *testing.T) map[string]*zooRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(zooDir, "expected.json"))
	require.NoError(t, err)
	var e struct {
		Models map[string]json.RawMessage `json:"models"`
	}
	require.NoError(t, json.Unmarshal(data, &e))
	out := map[string]*zooRecord{}
	for stem, raw := range e.Models {
		r := &zooRecord{}
		require.NoError(t, json.Unmarshal(raw, r), stem)
		require.NoError(t, json.Unmarshal(raw, &r.Raw), stem)
		out[stem] = r
	}
	return out
}

// zooModels discovers the models: every NAME.float.pt2 of zooDir.
func zooModels(t *testing.T) []string {
	t.Helper()
	return fileStems(t, zooDir, ".float.pt2", "no models in %s", zooDir)
}

func zooOutputs(t *testing.T, stem string) *fixtureOutputs {
	t.Helper()
	return readOutputs(t, zooDir, stem)
}

// TestZooFloat reads, prints, verifies and runs every zoo model's float
// program on its recorded eval inputs and compares with PyTorch's eager
// outputs bit for bit, then writes the program, reads it back and requires
// the same bits again.
func TestZooFloat(t *testing.T) {
	for _, stem := range zooModels(t) {
		t.Run(stem, func(t *testing.T) {
			prog, err := pt2.ReadFile(filepath.Join(zooDir, stem+".float.pt2"), nil)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(prog.Graph, fxgraph.VerifyOptions{}))
			text := fxgraph.Format(prog.Graph)
			again, err := fxgraph.ParseString(text)
			require.NoError(t, err, "the printed graph parses")
			assert.Equal(t, text, fxgraph.Format(again), "print -> parse -> print is stable")

			outs := zooOutputs(t, stem)
			for i := range outs.Inputs.Eval {
				x := mustTensor(t, &outs.Inputs.Eval[i])
				got, _ := runProgram(t, prog, x)
				want := mustTensor(t, &outs.Float.Outputs[i])
				require.Len(t, got, 1)
				assert.NoError(t, tensor.Diff(got[0], want), "eval %d: float output bit for bit", i)
			}
		})
	}
}

// zooQuantizer is the records' quantizer: torchao's XNNPACKQuantizer with
// get_symmetric_quantization_config(is_per_channel=True[, is_dynamic=True]).
func zooQuantizer(mode string) convert.Quantizer {
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	o.Dynamic = mode == "dynamic"
	return convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))
}

// zooQuantize runs torchao's flow on the model with q: prepare, calibrate
// on the recorded calibration batches in order, convert with fold_quantize
// (and opts).
func zooQuantize(t *testing.T, stem string, q convert.Quantizer, opts convert.ConvertOptions, outs *fixtureOutputs) (*pt2.Program, *fxgraph.Graph) {
	t.Helper()
	prog, g := readProgramUnlifted(t, filepath.Join(zooDir, stem+".float.pt2"))
	require.NoError(t, convert.Prepare(g, q))
	require.NoError(t, convert.Calibrate(g, zooBatches(t, outs), nil))
	require.NoError(t, convert.Convert(g, opts))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	return prog, g
}

// zooBatches is the recorded calibration inputs, one batch each, in order.
func zooBatches(t *testing.T, outs *fixtureOutputs) [][]*tensor.Tensor {
	t.Helper()
	return oneEach(t, outs.Inputs.Calibration)
}

// targetCounts counts the call targets of g whose name starts with prefix
// ("quantized_decomposed." for the q/dq ops, "torchao." for torchao's).
func targetCounts(g *fxgraph.Graph, prefix string) map[string]int {
	out := map[string]int{}
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction && strings.HasPrefix(n.Target().String(), prefix) {
			out[n.Target().String()]++
		}
	}
	return out
}

// qparamPair spells a quantize_per_tensor.default call's literal
// (scale, zero point) as "scale/zero_point".
func qparamPair(s float64, z int64) string {
	return strconv.FormatFloat(s, 'g', -1, 64) + "/" + strconv.FormatInt(z, 10)
}

// graphQParams lists the (scale, zero point) pairs of g's
// quantize_per_tensor.default calls, sorted: torchao's activation qparams.
func graphQParams(t *testing.T, g *fxgraph.Graph) []string {
	t.Helper()
	var out []string
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction || n.Target().String() != "quantized_decomposed.quantize_per_tensor.default" {
			continue
		}
		s, ok1 := n.Arg(1).(float64)
		z, ok2 := n.Arg(2).(int64)
		require.True(t, ok1 && ok2, "%s: literal scale and zero point", n.Name())
		out = append(out, qparamPair(s, z))
	}
	slices.Sort(out)
	return out
}

// listingQParams reads the same pairs from torchao's re-exported listing.
func listingQParams(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, r := range pgListing(t, path) {
		if r.Target != "quantized_decomposed.quantize_per_tensor.default" {
			continue
		}
		require.GreaterOrEqual(t, len(r.Args), 3, "%s: %v", r.Name, r.Args)
		s, ok1 := r.Args[1].(float64)
		z, ok2 := r.Args[2].(int64)
		require.True(t, ok1 && ok2, "%s: literal scale and zero point, got %v", r.Name, r.Args)
		out = append(out, qparamPair(s, z))
	}
	slices.Sort(out)
	return out
}

// TestZooQuantized quantizes every zoo model as torchao's records did and
// compares with torchao: the same q/dq nodes, the same activation qparams
// (static), and the converted outputs on the eval inputs under the
// fixtures' rule for quantized programs.
func TestZooQuantized(t *testing.T) {
	recs := zooRecords(t)
	for _, stem := range zooModels(t) {
		rec, ok := recs[stem]
		require.True(t, ok, "%s has no record in expected.json", stem)
		for _, mode := range rec.Modes {
			if mode != "static" && mode != "dynamic" {
				continue
			}
			t.Run(stem+"/"+mode, func(t *testing.T) {
				outs := zooOutputs(t, stem)
				prog, g := zooQuantize(t, stem, zooQuantizer(mode), convert.ConvertOptions{}, outs)
				zm := rec.mode(t, mode)
				assert.Equal(t, zm.QDQCounts, targetCounts(g, "quantized_decomposed."), "q/dq nodes by target")
				if mode == "static" {
					want := listingQParams(t, filepath.Join(zooDir, stem+".static.export.graph.txt"))
					assert.Equal(t, want, graphQParams(t, g), "activation scales and zero points")
				}
				want := outs.modeTensors(t, mode, "outputs")
				var got []*tensor.Tensor
				var scales []float64
				for i := range outs.Inputs.Eval {
					res, qs := runGraph(t, g, []*tensor.Tensor{mustTensor(t, &outs.Inputs.Eval[i])})
					got = append(got, res[0])
					scales = append(scales, slices.Max(append(qs, math.SmallestNonzeroFloat64)))
				}
				zooWriteBack(t, prog, g, stem+"."+mode, outs, got)
				for i := range got {
					checkQuantizedOutput(t, stem+"/"+mode, mustTensor(t, &want[i]), got[i], scales[i])
				}
			})
		}
	}
}

// zooWriteBack writes the quantized graph as a program with the float
// program's signature, reads it back and requires the same outputs bit for
// bit. With FXQUANT_ZOO_WRITE=DIR it also keeps the program as
// DIR/NAME.MODE.fxquant.pt2, and fxquant's outputs on the eval inputs as
// NAME.MODE.fxquant.json, for testdata/zoo/oracle/check_written.py to run
// the program in PyTorch and compare.
func zooWriteBack(t *testing.T, prog *pt2.Program, g *fxgraph.Graph, name string, outs *fixtureOutputs, want []*tensor.Tensor) {
	t.Helper()
	wp, err := prog.WithGraph(g)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, wp.WriteArchive(&buf, nil))
	back, err := pt2.Read(buf.Bytes(), nil)
	require.NoError(t, err, "the written program reads back")
	require.NoError(t, fxgraph.Verify(back.Graph, fxgraph.VerifyOptions{}))
	for i := range outs.Inputs.Eval {
		got, _ := runProgram(t, back, mustTensor(t, &outs.Inputs.Eval[i]))
		assert.NoError(t, tensor.Diff(got[0], want[i]), "eval %d: the written program computes what the graph computed", i)
	}
	if dir := os.Getenv("FXQUANT_ZOO_WRITE"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".fxquant.pt2"), buf.Bytes(), 0o644))
		var hex [][]string
		for _, w := range want {
			fs, err := tensor.Data[float32](w)
			require.NoError(t, err)
			var h []string
			for _, f := range fs {
				h = append(h, fmt.Sprintf("%08x", math.Float32bits(f)))
			}
			hex = append(hex, h)
		}
		js, err := json.Marshal(map[string]any{"outputs_hex": hex})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".fxquant.json"), js, 0o644))
	}
}
