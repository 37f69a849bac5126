package tests

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// pgDir holds the real PyTorch 2.14 + torchao PT2E fixtures (README.md
// there). Every <m>.float.pt2 in it is a model; the listings beside it say
// which flows were recorded.
const pgDir = "testdata/pt2e"

// pgTensor is a tensor of <m>.outputs.json: float32 values are compared
// through their hex bit patterns.
type pgTensor struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []any     `json:"values"`
	Hex    []string  `json:"hex"`
	Target string    `json:"target"`
	f32    []float32 `json:"-"`
}

func (p *pgTensor) float32s(t *testing.T) []float32 {
	t.Helper()
	return float32Values(t, p.Hex, p.Values, func(i int, v any) float32 {
		f, ok := v.(float64)
		require.True(t, ok, "value %d: want a number, got %v", i, v)
		return float32(f)
	})
}

func (p *pgTensor) ints(t *testing.T) []int64 {
	t.Helper()
	out := make([]int64, len(p.Values))
	for i, v := range p.Values {
		f, ok := v.(float64)
		require.True(t, ok, "value %d: want a number, got %v", i, v)
		out[i] = int64(f)
	}
	return out
}

func (p *pgTensor) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	return float32Tensor(t, p.DType, p.Shape, p.float32s)
}

type pgObserver struct {
	Class     string    `json:"class"`
	MinVal    *pgTensor `json:"min_val"`
	MaxVal    *pgTensor `json:"max_val"`
	Scale     *pgTensor `json:"scale"`
	ZeroPoint *pgTensor `json:"zero_point"`
	Histogram *pgTensor `json:"histogram"`
	Bins      int       `json:"bins"`
	Gran      string    `json:"granularity"`
	GraphUses []struct {
		Input string `json:"input"`
	} `json:"graph_uses"`
}

type pgFlow struct {
	Observers map[string]pgObserver `json:"observers"`
	Outputs   []pgTensor            `json:"outputs"`
	Converted []pgTensor            `json:"converted_outputs"`
	GetAttrs  map[string]pgTensor   `json:"get_attrs"`
}

type pgOutputs struct {
	Inputs struct {
		Calibration []pgTensor `json:"calibration"`
		Eval        []pgTensor `json:"eval"`
	} `json:"inputs"`
	Float   *pgFlow `json:"float"`
	Static  *pgFlow `json:"static"`
	Dynamic *pgFlow `json:"dynamic"`
	Int4    *pgFlow `json:"int4"`
}

// pgCase is one recorded flow of one model.
type pgCase struct {
	stem, mode       string
	quantizer        convert.Quantizer
	preparedListing  string
	convertedListing string
	flow             *pgFlow
	outputs          []pgTensor
}

var pgGroupRE = regexp.MustCompile(`PerGroup\(group_size=(\d+)\)`)

// pgCases discovers the flows of a model from the files beside its
// float.pt2: <m>.<mode>.graph.txt for the XNNPACK modes, and
// <m>.converted.graph.txt for the int4 cases.
func pgCases(t *testing.T, stem string, out *pgOutputs) []pgCase {
	var cases []pgCase
	for _, mode := range []string{"static", "dynamic"} {
		conv := filepath.Join(pgDir, stem+"."+mode+".graph.txt")
		if _, err := os.Stat(conv); err != nil {
			continue
		}
		flow := out.Static
		if mode == "dynamic" {
			flow = out.Dynamic
		}
		require.NotNil(t, flow, "%s: %s listing without %s outputs", stem, mode, mode)
		opts := convert.DefaultSymmetricConfigOptions()
		opts.PerChannel = true
		opts.Dynamic = mode == "dynamic"
		cases = append(cases, pgCase{
			stem: stem, mode: mode,
			quantizer:        convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(opts)),
			preparedListing:  filepath.Join(pgDir, stem+"."+mode+".prepared.graph.txt"),
			convertedListing: conv,
			flow:             flow, outputs: flow.Outputs,
		})
	}
	if conv := filepath.Join(pgDir, stem+".converted.graph.txt"); pgFileExists(conv) {
		require.NotNil(t, out.Int4, "%s: int4 listings without int4 outputs", stem)
		gs := 0
		for _, o := range out.Int4.Observers {
			if m := pgGroupRE.FindStringSubmatch(o.Gran); m != nil {
				gs, _ = strconv.Atoi(m[1])
			}
		}
		require.NotZero(t, gs, "%s: no PerGroup observer recorded", stem)
		cases = append(cases, pgCase{
			stem: stem, mode: "int4",
			quantizer:        convert.Int4GroupwiseQuantizer{GroupSize: gs},
			preparedListing:  filepath.Join(pgDir, stem+".prepared.graph.txt"),
			convertedListing: conv,
			flow:             out.Int4, outputs: out.Int4.Converted,
		})
	}
	return cases
}

func pgFileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pgLoad reads a model's float program and unlifts it as .module() does.
func pgLoad(t *testing.T, stem string) *fxgraph.Graph {
	t.Helper()
	return readUnlifted(t, filepath.Join(pgDir, stem+".float.pt2"))
}

// pgListing reads a fixture listing without the _guards_fn node, a torch
// artefact fxquant does not create.
func pgListing(t *testing.T, path string) []fxgraph.ListingRow {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rows, err := fxgraph.ParseListingString(string(data))
	require.NoError(t, err)
	return slices.DeleteFunc(rows, func(r fxgraph.ListingRow) bool { return r.Name == "_guards_fn" })
}

func TestPT2EGoldens(t *testing.T) {
	for _, stem := range fileStems(t, pgDir, ".float.pt2") {
		data, err := os.ReadFile(filepath.Join(pgDir, stem+".outputs.json"))
		require.NoError(t, err)
		var out pgOutputs
		require.NoError(t, json.Unmarshal(data, &out), "%s.outputs.json", stem)
		cases := pgCases(t, stem, &out)
		require.NotEmpty(t, cases, "%s: no recorded flow beside the float program", stem)
		for _, c := range cases {
			t.Run(stem+"/"+c.mode, func(t *testing.T) { runPT2EGolden(t, c, &out) })
		}
	}
}

func runPT2EGolden(t *testing.T, c pgCase, out *pgOutputs) {
	g := pgLoad(t, c.stem)
	require.NoError(t, convert.Prepare(g, c.quantizer))

	// The prepared graph: observers on the same edges, in the same places.
	want := pgListing(t, c.preparedListing)
	gotRows, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
	require.NoError(t, err)
	assert.Equal(t, pgRowsText(want), pgRowsText(gotRows), "prepared listing of %s", c.stem)

	var batches [][]*tensor.Tensor
	for i := range out.Inputs.Calibration {
		batches = append(batches, []*tensor.Tensor{out.Inputs.Calibration[i].tensor(t)})
	}
	require.NoError(t, convert.Calibrate(g, batches, nil))
	pgCheckObservers(t, g, c.flow)

	require.NoError(t, convert.Convert(g, convert.ConvertOptions{PacketAffineOps: false}))
	pgCompareConverted(t, g, pgListing(t, c.convertedListing))
	pgCheckGetAttrs(t, g, c.flow)
	pgCheckOutputs(t, g, out.Inputs.Eval, c.outputs)
}

func pgRowsText(rows []fxgraph.ListingRow) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func pgCheckObservers(t *testing.T, g *fxgraph.Graph, flow *pgFlow) {
	names := make([]string, 0, len(flow.Observers))
	for k := range flow.Observers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		rec := flow.Observers[name]
		t.Run(name, func(t *testing.T) {
			v, ok := g.Attr(name)
			require.True(t, ok, "observer %s missing", name)
			o, ok := v.(observers.Observer)
			require.True(t, ok)
			require.Equal(t, rec.Class, o.Class())
			if h, ok := o.(*observers.HistogramObserver); ok {
				pgCheckHistogram(t, h, rec)
			}
			if pc, ok := o.(*observers.PerChannelMinMaxObserver); ok {
				mn, mx := pc.MinMax()
				assert.Equal(t, pgBits(rec.MinVal.float32s(t)), pgBits(mn), "min_val")
				assert.Equal(t, pgBits(rec.MaxVal.float32s(t)), pgBits(mx), "max_val")
			}
			if rec.Scale == nil {
				return
			}
			qp, err := o.CalculateQParams()
			require.NoError(t, err)
			gotS, err := tensor.Data[float32](qp.Scale.Contiguous())
			require.NoError(t, err)
			assert.Equal(t, pgBits(rec.Scale.float32s(t)), pgBits(gotS), "scale")
			if rec.ZeroPoint.DType == "float32" {
				gotZ, err := tensor.Data[float32](qp.ZeroPoint.Contiguous())
				require.NoError(t, err)
				assert.Equal(t, pgBits(rec.ZeroPoint.float32s(t)), pgBits(gotZ), "zero_point")
			} else {
				gotZ, err := qp.ZeroPoint.Int64s()
				require.NoError(t, err)
				assert.Equal(t, rec.ZeroPoint.ints(t), gotZ, "zero_point")
				assert.Equal(t, rec.ZeroPoint.DType, qp.ZeroPoint.DType().String(), "zero_point dtype")
			}
		})
	}
}

// pgFloatTol is the README's tolerance for float values computed by another
// implementation: matrix products and convolutions sum in a different order.
func pgFloatTol(got, want float32) bool {
	return math.Abs(float64(got)-float64(want)) <= 1e-5+1e-5*math.Abs(float64(want))
}

// pgInexactObservers names, as "<model>/<mode>/<observer>", the
// HistogramObservers whose input PyTorch computes with a kernel fxquant
// does not yet reproduce bit for bit, with the op responsible. Every other
// observer, those after a linear or convolution included (the kernels sum
// in PyTorch's CPU order, ops/kernels/aten_gemm_exact.go), must match
// PyTorch's min, max and histogram exactly.
var pgInexactObservers = map[string]string{
	// Empty: every HistogramObserver of the fixtures is bit-exact since
	// adaptive_avg_pool2d to [1, 1] sums as mean()'s cascade does (it was
	// listed for cnn/static/activation_post_process_9). Add an entry here,
	// with the op responsible, only for a kernel known not to reproduce
	// PyTorch's order.
}

// pgCheckHistogram compares a calibrated HistogramObserver with PyTorch's
// state bit for bit. For an observer listed in [pgInexactObservers] a
// difference is allowed within the README's float tolerance: it is
// logged, and the recorded state is loaded so that the qparams and the
// converted graph are still checked exactly.
func pgCheckHistogram(t *testing.T, h *observers.HistogramObserver, rec pgObserver) {
	hist, mn, mx := h.State()
	require.Equal(t, rec.Bins, h.Bins())
	wantMin, wantMax := rec.MinVal.float32s(t)[0], rec.MaxVal.float32s(t)[0]
	wantHist := rec.Histogram.float32s(t)
	if mn == wantMin && mx == wantMax && slices.Equal(hist, wantHist) {
		return
	}
	key := strings.TrimPrefix(t.Name(), "TestPT2EGoldens/")
	reason, known := pgInexactObservers[key]
	require.True(t, known, "%s: state differs from PyTorch's (min %08x, want %08x; max %08x, want %08x; histogram equal: %v)",
		key, math.Float32bits(mn), math.Float32bits(wantMin), math.Float32bits(mx), math.Float32bits(wantMax), slices.Equal(hist, wantHist))
	assert.True(t, pgFloatTol(mn, wantMin), "min_val %g, want %g", mn, wantMin)
	assert.True(t, pgFloatTol(mx, wantMax), "max_val %g, want %g", mx, wantMax)
	t.Logf("state differs from PyTorch's because of %s (min %08x/%08x, max %08x/%08x): loading the recorded state",
		reason, math.Float32bits(mn), math.Float32bits(wantMin), math.Float32bits(mx), math.Float32bits(wantMax))
	require.NoError(t, h.SetState(wantHist, wantMin, wantMax))
}

func pgBits(fs []float32) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%08x", math.Float32bits(f))
	}
	return out
}

// pgCompareConverted compares the converted graph with torchao's listing
// line for line: the same opcodes, targets equal up to packet -> .default,
// the same literal arguments, and node references that correspond (node
// names themselves are not compared).
func pgCompareConverted(t *testing.T, g *fxgraph.Graph, want []fxgraph.ListingRow) {
	got, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
	require.NoError(t, err)
	if !assert.Len(t, got, len(want), "converted graph:\n%s\nwant:\n%s", pgRowsText(got), pgRowsText(want)) {
		return
	}
	corr := map[string]string{} // torchao name -> fxquant name
	for i := range want {
		w, gr := want[i], got[i]
		ctx := fmt.Sprintf("line %d: want %s\n got %s", i+1, w.String(), gr.String())
		corr[w.Name] = gr.Name
		if !assert.Equal(t, w.Op, gr.Op, ctx) {
			continue
		}
		wt, gt := w.Target, gr.Target
		if w.Op == fxgraph.CallFunction {
			wt = pgDefaultForm(wt)
			gt = pgDefaultForm(gt)
		}
		if w.Op != fxgraph.Placeholder && w.Op != fxgraph.Output {
			// get_attr targets of fxquant's attributes follow the same naming.
			assert.Equal(t, wt, gt, ctx)
		}
		assert.Equal(t, pgArgsText(w.Args, w.Kwargs, corr, true), pgArgsText(gr.Args, gr.Kwargs, nil, false), ctx)
	}
}

// pgDefaultForm maps a packet of the torchao namespace to its .default.
func pgDefaultForm(target string) string {
	if strings.HasPrefix(target, "torchao.") && strings.Count(target, ".") == 1 {
		return target + ".default"
	}
	return target
}

func pgArgsText(args []ops.Value, kw []ops.Kwarg, corr map[string]string, mapRefs bool) string {
	var m func(v ops.Value) ops.Value
	m = func(v ops.Value) ops.Value {
		switch v := v.(type) {
		case fxgraph.Ref:
			if mapRefs {
				if n, ok := corr[v.Name]; ok {
					return fxgraph.Ref{Name: n}
				}
			}
			return v
		case ops.List:
			out := make(ops.List, len(v))
			for i, e := range v {
				out[i] = m(e)
			}
			return out
		case ops.Tuple:
			out := make(ops.Tuple, len(v))
			for i, e := range v {
				out[i] = m(e)
			}
			return out
		}
		return v
	}
	r := fxgraph.ListingRow{Name: "x", Op: fxgraph.CallFunction, Target: "t"}
	for _, a := range args {
		r.Args = append(r.Args, m(a))
	}
	for _, k := range kw {
		r.Kwargs = append(r.Kwargs, ops.Kwarg{Name: k.Name, Value: m(k.Value)})
	}
	s := r.String()
	return s[strings.Index(s, " | t | ")+len(" | t | "):]
}

// pgCheckGetAttrs compares the tensors behind the converted graph's
// get_attr nodes (folded weights, per-channel and affine qparams) with the
// recorded ones, by attribute target, exactly.
func pgCheckGetAttrs(t *testing.T, g *fxgraph.Graph, flow *pgFlow) {
	if flow.GetAttrs == nil {
		return
	}
	byTarget := map[string]pgTensor{}
	for _, v := range flow.GetAttrs {
		byTarget[v.Target] = v
	}
	for n := range g.All() {
		if n.Op() != fxgraph.GetAttr {
			continue
		}
		rec, ok := byTarget[n.TargetName()]
		if !assert.True(t, ok, "get_attr %s (%s) not recorded", n.Name(), n.TargetName()) {
			continue
		}
		v, _ := g.Attr(n.TargetName())
		x, ok := v.(*tensor.Tensor)
		require.True(t, ok, "attribute %s", n.TargetName())
		assert.Equal(t, rec.Shape, x.Shape(), "get_attr %s shape", n.TargetName())
		assert.Equal(t, rec.DType, x.DType().String(), "get_attr %s dtype", n.TargetName())
		if rec.DType == "float32" {
			got, err := tensor.Data[float32](x.Contiguous())
			require.NoError(t, err)
			assert.Equal(t, pgBits(rec.float32s(t)), pgBits(got), "get_attr %s", n.TargetName())
		} else {
			got, err := x.Int64s()
			require.NoError(t, err)
			assert.Equal(t, rec.ints(t), got, "get_attr %s", n.TargetName())
		}
	}
}

// pgCheckOutputs runs the converted graph on the eval inputs and compares
// with torchao's converted outputs within the README's tolerance for
// quantized programs: |a-b| <= 1e-5 + 1e-5|b| for at least 90% of the
// elements, and every element within 4 * (largest scale of the graph).
func pgCheckOutputs(t *testing.T, g *fxgraph.Graph, eval []pgTensor, want []pgTensor) {
	require.Len(t, want, len(eval))
	pgCheckQuantOutputs(t, g, eval, want, pgMaxScale(t, g))
}

// pgMaxScale is the largest scale of any quantize op: literal scales and
// the scale tensors behind get_attr nodes. Dynamic quantize ops compute
// their scale at run time; for them the bound uses the largest scale
// choose_qparams gives on the data, which the tolerance does not need: we
// take 1 as a loose bound when no static scale exists.
func pgMaxScale(t *testing.T, g *fxgraph.Graph) float64 {
	m := 0.0
	for n := range g.All() {
		if n.Op() != fxgraph.CallFunction || !strings.Contains(n.Target().String(), "quantize") || strings.Contains(n.Target().String(), "dequantize") {
			continue
		}
		var sArg ops.Value
		if len(n.Args()) > 2 {
			sArg = n.Arg(1)
			if strings.Contains(n.Target().String(), "affine") {
				sArg = n.Arg(2)
			}
		}
		switch s := sArg.(type) {
		case float64:
			m = math.Max(m, s)
		case *fxgraph.Node:
			if s.Op() == fxgraph.GetAttr {
				v, _ := g.Attr(s.TargetName())
				if x, ok := v.(*tensor.Tensor); ok {
					fs, err := x.Float64s()
					require.NoError(t, err)
					for _, f := range fs {
						m = math.Max(m, f)
					}
				}
			} else {
				m = math.Max(m, 1)
			}
		}
	}
	if m == 0 {
		m = 1
	}
	return m
}

// pgInt4Flow runs the int4 flow of one fixture stem with the given convert
// options and returns the converted graph.
func pgInt4Flow(t *testing.T, stem string, opts convert.ConvertOptions) *fxgraph.Graph {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pgDir, stem+".outputs.json"))
	require.NoError(t, err)
	var out pgOutputs
	require.NoError(t, json.Unmarshal(data, &out))
	cs := pgCases(t, stem, &out)
	require.Len(t, cs, 1)
	g := pgLoad(t, stem)
	require.NoError(t, convert.Prepare(g, cs[0].quantizer))
	var batches [][]*tensor.Tensor
	for i := range out.Inputs.Calibration {
		batches = append(batches, []*tensor.Tensor{out.Inputs.Calibration[i].tensor(t)})
	}
	require.NoError(t, convert.Calibrate(g, batches, nil))
	require.NoError(t, convert.Convert(g, opts))
	return g
}

// pgInt4Stems lists the int4 fixtures: models with a converted listing.
func pgInt4Stems(t *testing.T) []string {
	return fileStems(t, pgDir, ".converted.graph.txt")
}

// TestPT2EAffineTargetForms checks that every torchao op convert inserts is
// a .default overload, and that with PacketAffineOps every one is a packet
// and the converted graph equals torchao's listing (which holds packets)
// line for line, names and targets included.
func TestPT2EAffineTargetForms(t *testing.T) {
	for _, stem := range pgInt4Stems(t) {
		t.Run(stem+"/default", func(t *testing.T) {
			g := pgInt4Flow(t, stem, convert.ConvertOptions{})
			n := 0
			for node := range g.All() {
				if node.Op() != fxgraph.CallFunction || !strings.HasPrefix(node.Target().String(), "torchao.") {
					continue
				}
				n++
				_, isOverload := node.Target().(ops.Overload)
				assert.True(t, isOverload, "node %s: target %s is a packet", node.Name(), node.Target())
			}
			assert.Equal(t, 4, n, "torchao ops in the converted graph (choose, q, dq, weight dq)")
		})
		t.Run(stem+"/packet", func(t *testing.T) {
			g := pgInt4Flow(t, stem, convert.ConvertOptions{PacketAffineOps: true})
			for node := range g.All() {
				if node.Op() != fxgraph.CallFunction || !strings.HasPrefix(node.Target().String(), "torchao.") {
					continue
				}
				_, isPacket := node.Target().(ops.Packet)
				assert.True(t, isPacket, "node %s: target %s is not a packet", node.Name(), node.Target())
			}
			want := pgListing(t, filepath.Join(pgDir, stem+".converted.graph.txt"))
			got, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
			require.NoError(t, err)
			assert.Equal(t, pgRowsText(want), pgRowsText(got))
		})
		t.Run(stem+"/nofold", func(t *testing.T) {
			g := pgInt4Flow(t, stem, convert.ConvertOptions{PacketAffineOps: true, NoFoldQuantize: true})
			want := pgListing(t, filepath.Join(pgDir, stem+".converted_nofold.graph.txt"))
			got, err := fxgraph.ParseListingString(fxgraph.FormatListing(g))
			require.NoError(t, err)
			assert.Equal(t, pgRowsText(want), pgRowsText(got))
		})
	}
}

// TestPT2EDeterministic runs the same flow twice and requires the same
// printed graph, byte for byte.
func TestPT2EDeterministic(t *testing.T) {
	stem := pgInt4Stems(t)[0]
	a := fxgraph.Format(pgInt4Flow(t, stem, convert.ConvertOptions{}))
	b := fxgraph.Format(pgInt4Flow(t, stem, convert.ConvertOptions{}))
	require.Equal(t, a, b)
}

// TestPT2EReferenceInt4 converts the int4 fixtures with the reference
// representation on: convert's .default affine ops let the int4 rewrite fire,
// leaving one reference_dqlinear_int4.default and no dequantize_affine.
func TestPT2EReferenceInt4(t *testing.T) {
	ref := ops.MustOverload("torchao.reference_dqlinear_int4.default")
	for _, stem := range pgInt4Stems(t) {
		t.Run(stem, func(t *testing.T) {
			g := pgInt4Flow(t, stem, convert.ConvertOptions{ReferenceRepresentation: true})
			assert.Len(t, g.FindNodes(fxgraph.CallFunction, ref), 1, "%s", fxgraph.Format(g))
			for n := range g.All() {
				if n.Op() == fxgraph.CallFunction {
					assert.NotContains(t, n.Target().String(), "dequantize_affine", "node %s", n.Name())
				}
			}
		})
	}
}
