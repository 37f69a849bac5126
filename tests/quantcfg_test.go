package tests

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

// qcDir holds torchao's records for quantizer config files, the embedding
// and composed quantizers and the GRU annotator (testdata/quantcfg/README.md,
// made by gen.py there from the same config files fxquant reads).
const qcDir = "testdata/quantcfg"

// qcModelDir is where each case's float program and inputs live.
var qcModelDir = map[string]string{"bert_encoder": zooDir, "cnn": pgDir, "mlp": pgDir, "gru": qcDir, "emb_mlp": qcDir}

// qcPreparedOnly lists the cases whose calibration fxquant cannot
// reproduce bit for bit, with the reason: their annotations and prepared
// graphs are still compared with torchao's. emb_mlp runs the same
// quantizers as the bert_encoder cases through calibration and convert.
var qcPreparedOnly = map[string]string{
	// The oracle machine has no AVX-512: PyTorch's gelu goes to oneDNN's
	// AVX2 gelu_erf, whose last bits differ from the avx512_core kernel
	// fxquant reproduces (the zoo's machine), so activations after a gelu
	// differ by an ULP here and there. The cases without a static observer
	// after a gelu (embedding, dynamic_head) are compared in full.
	"bert_encoder.embedding_static":         "gelu ISA (see above)",
	"bert_encoder.embedding_dynamic_static": "gelu ISA (see above)",
	"bert_encoder.mixed":                    "gelu ISA (see above)",
}

type qcObserver struct {
	Class     string         `json:"class"`
	MinVal    *fixtureTensor `json:"min_val"`
	MaxVal    *fixtureTensor `json:"max_val"`
	Scale     *fixtureTensor `json:"scale"`
	ZeroPoint *fixtureTensor `json:"zero_point"`
	HistSHA   string         `json:"histogram_sha256"`
	Bins      int            `json:"bins"`
	QPErr     string         `json:"calculate_qparams_error"`
}

type qcGetAttr struct {
	fixtureTensor
	Target string `json:"target"`
}

type qcAnnotation struct {
	Node      string       `json:"node"`
	Inputs    [][2]*string `json:"inputs"`
	Output    *string      `json:"output"`
	Annotated bool         `json:"annotated"`
}

type qcExpected struct {
	Error       string                `json:"error"`
	Annotations []qcAnnotation        `json:"annotations"`
	Observers   map[string]qcObserver `json:"observers"`
	GetAttrs    map[string]qcGetAttr  `json:"get_attrs"`
	Outputs     [][]fixtureTensor     `json:"outputs"`
}

// TestQuantizerConfigsMatchTorchao runs every NAME.CASE.config.json of
// qcDir through fxquant (ParseQuantizerConfig, Prepare, Calibrate on the
// recorded batches, Convert) and compares each stage with what torchao did
// with the same config: the annotations after annotate, the prepared
// listing, every observer's state and qparams, the converted listing,
// convert's tensors bit for bit, and the outputs on the eval inputs. A
// config torchao refused must be refused by fxquant with the same
// quantizer and node named, leaving the graph as it was.
func TestQuantizerConfigsMatchTorchao(t *testing.T) {
	cases := fileStems(t, qcDir, ".config.json")
	require.GreaterOrEqual(t, len(cases), 12)
	for _, c := range cases {
		t.Run(c, func(t *testing.T) { runQuantCfgCase(t, c) })
	}
}

func runQuantCfgCase(t *testing.T, c string) {
	stem, _, _ := strings.Cut(c, ".")
	var want qcExpected
	data, err := os.ReadFile(filepath.Join(qcDir, c+".expected.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &want))
	q, err := convert.ReadQuantizerConfigFile(filepath.Join(qcDir, c+".config.json"))
	require.NoError(t, err)

	g := readUnlifted(t, filepath.Join(qcModelDir[stem], stem+".float.pt2"))

	if want.Error != "" {
		// torchao: "RuntimeError: Quantizer EmbeddingQuantizer has changed annotations on node embedding".
		m := regexp.MustCompile(`Quantizer (\w+) has (changed|removed) annotations on node (\w+)`).FindStringSubmatch(want.Error)
		require.NotNil(t, m, "recorded error %q", want.Error)
		before := fxgraph.Format(g)
		err := convert.Prepare(g, q)
		require.Error(t, err, "torchao refused this config: %s", want.Error)
		assert.Contains(t, err.Error(), fmt.Sprintf("(%s) has %s annotations on node %q", m[1], m[2], m[3]))
		assert.Equal(t, before, fxgraph.Format(g), "a refused Prepare leaves the graph as it was")
		return
	}

	// Annotations, on a copy, as torchao's transform_for_annotation + annotate.
	ag, _ := g.Clone()
	require.NoError(t, q.TransformForAnnotation(ag))
	require.NoError(t, q.Annotate(ag))
	assert.Equal(t, qcAnnotationsText(want.Annotations), qcAnnotationsText(qcGraphAnnotations(t, ag)), "annotations")

	// The prepared graph: observers on the same edges.
	require.NoError(t, convert.Prepare(g, q))
	wantRows := pgListing(t, filepath.Join(qcDir, c+".prepared.graph.txt"))
	gotRows, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
	require.NoError(t, err)
	require.Equal(t, pgRowsText(wantRows), pgRowsText(gotRows), "prepared listing")

	if why, ok := qcPreparedOnly[c]; ok {
		t.Logf("%s: calibration, convert and outputs not compared: %s", c, why)
		return
	}
	calib, evals := qcInputs(t, qcModelDir[stem], stem)
	require.NoError(t, convert.Calibrate(g, calib, nil))
	qcCheckObservers(t, g, want.Observers)

	require.NoError(t, convert.Convert(g, convert.ConvertOptions{}))
	require.NoError(t, fxgraph.Verify(g, fxgraph.VerifyOptions{}))
	pgCompareConverted(t, g, pgListing(t, filepath.Join(qcDir, c+".converted.graph.txt")))
	qcCheckGetAttrs(t, g, want.GetAttrs)

	s := pgMaxScale(t, g)
	require.Len(t, want.Outputs, len(evals))
	for i := range evals {
		res, _ := runGraph(t, g, evals[i])
		require.Len(t, res, len(want.Outputs[i]))
		for j := range res {
			checkQuantizedOutput(t, fmt.Sprintf("%s eval %d output %d", c, i, j), mustTensor(t, &want.Outputs[i][j]), res[j], s)
		}
	}
}

// qcSpecText prints a spec as gen.py's spec_text does.
func qcSpecText(t *testing.T, s convert.QSpec) *string {
	var out string
	switch s := s.(type) {
	case nil:
		return nil
	case *convert.QuantizationSpec:
		opt := func(p *int64) string {
			if p == nil {
				return "None"
			}
			return fmt.Sprint(*p)
		}
		axis := "None"
		if s.ChAxis != nil {
			axis = fmt.Sprint(*s.ChAxis)
		}
		qscheme := "None"
		if s.QScheme != observers.QSchemeUnset {
			qscheme = s.QScheme.String()
		}
		o, err := s.Observer(s)
		require.NoError(t, err)
		out = fmt.Sprintf("QuantizationSpec(dtype=%s, qscheme=%s, quant_min=%s, quant_max=%s, ch_axis=%s, is_dynamic=%s, observer=%s)",
			s.DType, qscheme, opt(s.QuantMin), opt(s.QuantMax), axis, pyBool(s.IsDynamic), o.Class())
	case *convert.SharedQuantizationSpec:
		e := s.EdgeOrNode
		if e.IsEdge() {
			out = fmt.Sprintf("SharedQuantizationSpec((%s, %s))", e.Producer.Name(), e.Consumer.Name())
		} else {
			out = fmt.Sprintf("SharedQuantizationSpec(%s)", e.Producer.Name())
		}
	default:
		out = strings.TrimPrefix(fmt.Sprintf("%T", s), "*convert.")
	}
	return &out
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func qcGraphAnnotations(t *testing.T, g *fxgraph.Graph) []qcAnnotation {
	var out []qcAnnotation
	for _, n := range g.Nodes() {
		a := convert.Annotation(n)
		if a == nil {
			continue
		}
		r := qcAnnotation{Node: n.Name(), Output: qcSpecText(t, a.OutputQSpec), Annotated: a.Annotated}
		for _, e := range a.InputQSpecMap {
			name := e.Input.Name()
			r.Inputs = append(r.Inputs, [2]*string{&name, qcSpecText(t, e.Spec)})
		}
		out = append(out, r)
	}
	return out
}

func qcAnnotationsText(as []qcAnnotation) string {
	str := func(p *string) string {
		if p == nil {
			return "None"
		}
		return *p
	}
	var b strings.Builder
	for _, a := range as {
		fmt.Fprintf(&b, "%s annotated=%v output=%s\n", a.Node, a.Annotated, str(a.Output))
		for _, in := range a.Inputs {
			fmt.Fprintf(&b, "  %s: %s\n", str(in[0]), str(in[1]))
		}
	}
	return b.String()
}

// qcSame compares a tensor with a recorded one exactly: dtype and values
// (float32 through their bits), shapes up to the 0-d/1-element difference
// of a per-tensor qparam.
func qcSame(t *testing.T, what string, got *tensor.Tensor, want *fixtureTensor) {
	t.Helper()
	w := mustTensor(t, want)
	assert.Equal(t, w.DType(), got.DType(), "%s dtype", what)
	if got.Numel() != 1 || w.Numel() != 1 {
		assert.Equal(t, w.Shape(), got.Shape(), "%s shape", what)
	}
	gv, err := got.Float64s()
	require.NoError(t, err)
	wv, err := w.Float64s()
	require.NoError(t, err)
	if !assert.Len(t, gv, len(wv), what) {
		return
	}
	for i := range wv {
		if math.Float64bits(gv[i]) != math.Float64bits(wv[i]) {
			assert.Fail(t, fmt.Sprintf("%s element %d: got %v (%x), want %v (%x)", what, i, gv[i], math.Float32bits(float32(gv[i])), wv[i], math.Float32bits(float32(wv[i]))))
			return
		}
	}
}

func qcFloat32s(xs []float32) *tensor.Tensor {
	x, _ := tensor.FromData(tensor.Float32, []int{len(xs)}, xs)
	return x
}

func qcCheckObservers(t *testing.T, g *fxgraph.Graph, want map[string]qcObserver) {
	var names []string
	for k := range want {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		rec := want[name]
		v, ok := g.Attr(name)
		if !assert.True(t, ok, "observer %s missing", name) {
			continue
		}
		o := v.(observers.Observer)
		assert.Equal(t, rec.Class, o.Class(), name)
		switch o := o.(type) {
		case *observers.HistogramObserver:
			hist, mn, mx := o.State()
			qcSame(t, name+" min_val", qcFloat32s([]float32{mn}), rec.MinVal)
			qcSame(t, name+" max_val", qcFloat32s([]float32{mx}), rec.MaxVal)
			assert.Equal(t, rec.Bins, o.Bins(), name+" bins")
			buf := make([]byte, 4*len(hist))
			for i, h := range hist {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(h))
			}
			sum := sha256.Sum256(buf)
			assert.Equal(t, rec.HistSHA, hex.EncodeToString(sum[:]), name+" histogram")
		case *observers.PerChannelMinMaxObserver:
			mn, mx := o.MinMax()
			qcSame(t, name+" min_val", qcFloat32s(mn), rec.MinVal)
			qcSame(t, name+" max_val", qcFloat32s(mx), rec.MaxVal)
		case *observers.MinMaxObserver:
			mn, mx := o.MinMax()
			qcSame(t, name+" min_val", qcFloat32s([]float32{mn}), rec.MinVal)
			qcSame(t, name+" max_val", qcFloat32s([]float32{mx}), rec.MaxVal)
		}
		qp, err := o.CalculateQParams()
		if rec.Scale == nil {
			assert.Error(t, err, "%s: torchao: %s", name, rec.QPErr)
			continue
		}
		require.NoError(t, err, name)
		qcSame(t, name+" scale", qp.Scale, rec.Scale)
		qcSame(t, name+" zero_point", qp.ZeroPoint, rec.ZeroPoint)
	}
}

// qcCheckGetAttrs compares the converted graph's get_attr tensors with
// torchao's: convert's own (folded weights, qparams) exactly, the model's
// float parameters by shape and dtype.
func qcCheckGetAttrs(t *testing.T, g *fxgraph.Graph, want map[string]qcGetAttr) {
	byTarget := map[string]qcGetAttr{}
	for _, v := range want {
		byTarget[v.Target] = v
	}
	n := 0
	for node := range g.All() {
		if node.Op() != fxgraph.GetAttr {
			continue
		}
		n++
		rec, ok := byTarget[node.TargetName()]
		if !assert.True(t, ok, "get_attr %s (%s) not in torchao's graph", node.Name(), node.TargetName()) {
			continue
		}
		v, _ := g.Attr(node.TargetName())
		x, ok := v.(*tensor.Tensor)
		require.True(t, ok, "attribute %s", node.TargetName())
		if rec.Hex == nil && rec.Values == nil {
			assert.Equal(t, rec.Shape, x.Shape(), "get_attr %s shape", node.TargetName())
			assert.Equal(t, rec.DType, x.DType().String(), "get_attr %s dtype", node.TargetName())
			continue
		}
		qcSame(t, "get_attr "+node.TargetName(), x, &rec.fixtureTensor)
	}
	assert.Equal(t, len(want), n, "get_attr nodes")
}

// qcInputs reads the calibration and eval batches of NAME.outputs.json: each
// batch is one tensor, or a list of tensors for a model with several
// inputs.
func qcInputs(t *testing.T, dir, stem string) (calib, eval [][]*tensor.Tensor) {
	data, err := os.ReadFile(filepath.Join(dir, stem+".outputs.json"))
	require.NoError(t, err)
	var f struct {
		Inputs struct {
			Calibration []json.RawMessage `json:"calibration"`
			Eval        []json.RawMessage `json:"eval"`
		} `json:"inputs"`
	}
	require.NoError(t, json.Unmarshal(data, &f), "%s.outputs.json", stem)
	batches := func(raw []json.RawMessage) [][]*tensor.Tensor {
		var out [][]*tensor.Tensor
		for _, r := range raw {
			var list []fixtureTensor
			if json.Unmarshal(r, &list) != nil {
				var one fixtureTensor
				require.NoError(t, json.Unmarshal(r, &one))
				list = []fixtureTensor{one}
			}
			var b []*tensor.Tensor
			for i := range list {
				b = append(b, mustTensor(t, &list[i]))
			}
			out = append(out, b)
		}
		return out
	}
	return batches(f.Inputs.Calibration), batches(f.Inputs.Eval)
}
