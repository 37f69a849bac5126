package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/golden"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

var (
	linearOp = ops.MustOverload("aten.linear.default")
	reluOp   = ops.MustOverload("aten.relu.default")
	addOp    = ops.MustOverload("aten.add.Tensor")
)

// mlp returns x: f32[4, 16] -> layers of linear(16 -> 16) -> relu, with
// a residual add around every second layer when skip is set, and
// seeded random weights.
func mlp(layers int, skip bool) *fxgraph.Graph {
	rng := rand.New(rand.NewPCG(1, 2))
	g := fxgraph.New()
	x := g.Placeholder("x", ops.Plain(tensor.Float32, 4, 16))
	h := x
	for l := range layers {
		param := func(name string, shape ...int) *fxgraph.Node {
			vals := make([]float32, tensor.Numel(shape))
			for i := range vals {
				vals[i] = float32(rng.NormFloat64() * 0.3)
			}
			g.SetAttr(name, tensor.MustFromData(tensor.Float32, shape, vals))
			return g.GetAttr(name, ops.Plain(tensor.Float32, ops.ShapeInts(shape)...))
		}
		in := h
		w, b := param("fc"+string(rune('a'+l%26))+".weight", 16, 16), param("fc"+string(rune('a'+l%26))+".bias", 16)
		y := g.Call(linearOp, h, w, b)
		y.SetType(ops.Plain(tensor.Float32, 4, 16))
		h = g.Call(reluOp, y)
		h.SetType(ops.Plain(tensor.Float32, 4, 16))
		if skip && l%2 == 1 {
			h = g.Call(addOp, h, in)
			h.SetType(ops.Plain(tensor.Float32, 4, 16))
		}
	}
	g.SetOutput(ops.Tuple{h})
	return g
}

// batches are n seeded random inputs f32[4, 16].
func batches(n int) [][]*tensor.Tensor {
	rng := rand.New(rand.NewPCG(3, 4))
	var out [][]*tensor.Tensor
	for range n {
		vals := make([]float32, 64)
		for i := range vals {
			vals[i] = float32(rng.NormFloat64())
		}
		out = append(out, []*tensor.Tensor{tensor.MustFromData(tensor.Float32, []int{4, 16}, vals)})
	}
	return out
}

// page runs the XNNPACK static flow on mlp(layers, skip) and returns the
// report's page, with the numeric debugger's comparison.
func page(t testing.TB, layers int, skip bool) *Page {
	t.Helper()
	float := mlp(layers, skip)
	numdebug.GenerateHandles(float)
	g, _ := float.Clone()
	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
	if err := convert.Prepare(g, q); err != nil {
		t.Fatal(err)
	}
	b := batches(4)
	if err := convert.Calibrate(g, b, nil); err != nil {
		t.Fatal(err)
	}
	hists := ObserverHistograms(g)
	if err := convert.Convert(g, convert.ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	cmp, err := numdebug.Compare(float, g, b)
	if err != nil {
		t.Fatal(err)
	}
	return &Page{
		Title:      "mlp",
		Settings:   []Field{{"quantizer", "xnnpack-static"}, {"calibration", "4 random batches"}},
		Summary:    []Field{{"verifier", "ok"}},
		Float:      float,
		Quant:      g,
		Comparison: cmp,
		Histograms: hists,
	}
}

var (
	tagRE    = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*?)(/?)>`)
	attrRE   = regexp.MustCompile(`\s(id|class|data-[a-z]+)="([^"]*)"`)
	voidTags = map[string]bool{"meta": true, "input": true, "br": true}
)

// outline is the page's element tree, one element a line, indented by
// depth, with its id, classes and data attributes and, for leaf text
// elements, their text; scripts and styles are shown by their length.
func outline(page []byte) string {
	var b strings.Builder
	s := string(page)
	depth := 0
	for {
		m := tagRE.FindStringSubmatchIndex(s)
		if m == nil {
			break
		}
		closing, tag, attrs, self := s[m[2]:m[3]], s[m[4]:m[5]], s[m[6]:m[7]], s[m[8]:m[9]] != ""
		rest := s[m[1]:]
		if closing != "" {
			depth--
			s = rest
			continue
		}
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(tag)
		for _, a := range attrRE.FindAllStringSubmatch(attrs, -1) {
			b.WriteString(" " + a[1] + "=" + a[2])
		}
		switch {
		case tag == "script" || tag == "style":
			end := strings.Index(rest, "</"+tag+">")
			b.WriteString(" (content)\n")
			s = rest[end+len(tag)+3:]
			continue
		case tag == "text" || tag == "th" || tag == "h1" || tag == "h2" || tag == "title":
			if end := strings.IndexByte(rest, '<'); end > 0 && strings.HasPrefix(rest[end:], "</"+tag) {
				b.WriteString(" " + strings.TrimSpace(rest[:end]))
			}
		}
		b.WriteByte('\n')
		if !self && !voidTags[tag] {
			depth++
		}
		s = rest
	}
	return b.String()
}

// The page's structure: header, legend, both graphs' SVG with one box per
// node (q/dq marked, with their qparams), details, settings, summary,
// per-node table, data and script.
func TestGoldenStructure(t *testing.T) {
	p := page(t, 2, true)
	html, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(outline(html))
	d := pageData(t, html)
	for _, g := range []string{"f", "q"} {
		for k, m := range d.Bands[g] {
			fmt.Fprintf(&b, "== band %s %d\n%s", g, k, outline([]byte(m)))
		}
	}
	golden.Check(t, "testdata/mlp2.outline", []byte(b.String()))
}

// pageData decodes the page's data element.
func pageData(t testing.TB, html []byte) *jsonData {
	t.Helper()
	s := string(html)
	start := strings.Index(s, `id="report-data">`) + len(`id="report-data">`)
	end := start + strings.Index(s[start:], "</script>")
	var d jsonData
	if err := json.Unmarshal([]byte(s[start:end]), &d); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	return &d
}

// The outline is not vacuous: one SVG box per graph node, one table row
// per comparison result, q/dq nodes marked.
func TestStructureCounts(t *testing.T) {
	p := page(t, 3, true)
	html, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	d := pageData(t, html)
	svgF := strings.Join(d.Bands["f"], "")
	svgQ := strings.Join(d.Bands["q"], "")
	if n := strings.Count(svgF, `<g class="n `); n != p.Float.Len() {
		t.Errorf("float SVG has %d node boxes, want %d", n, p.Float.Len())
	}
	if n := strings.Count(svgQ, `<g class="n `); n != p.Quant.Len() {
		t.Errorf("quantized SVG has %d node boxes, want %d", n, p.Quant.Len())
	}
	q, dq := 0, 0
	for n := range p.Quant.All() {
		switch {
		case n.Op() != fxgraph.CallFunction:
		case strings.Contains(n.Target().String(), ".quantize_per"):
			q++
		case strings.Contains(n.Target().String(), ".dequantize_per"):
			dq++
		}
	}
	if q == 0 || strings.Count(svgQ, " qdq q") != q || strings.Count(svgQ, " qdq dq") != dq {
		t.Errorf("marked q/dq boxes: %d q, %d dq; the graph has %d and %d", strings.Count(svgQ, " qdq q"), strings.Count(svgQ, " qdq dq"), q, dq)
	}
	if n := strings.Count(s, "<tr data-r="); n != len(p.Comparison.Results) {
		t.Errorf("table has %d rows, want %d results", n, len(p.Comparison.Results))
	}
	if strings.Contains(svgF, " qdq") {
		t.Error("the float graph has q/dq boxes")
	}
	for _, tag := range []string{"<link", "<img", "src=", "http://", "https://"} {
		if tag == "http://" {
			s = strings.ReplaceAll(s, `http://www.w3.org/2000/svg`, "") // the SVG namespace
		}
		if strings.Contains(s, tag) {
			t.Errorf("the page refers to an external asset: %s", tag)
		}
	}
}

// Same input, same bytes: two pages from two independent runs.
func TestDeterministic(t *testing.T) {
	a, err := HTML(page(t, 4, true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := HTML(page(t, 4, true))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two pages of the same run differ:\n%s", golden.Diff(outline(a), outline(b)))
	}
}

// Each histogram counts every element its observer saw: 4 batches of
// 4x16 values = 256, over the observed range.
func TestObserverHistograms(t *testing.T) {
	p := page(t, 2, false)
	if len(p.Histograms) == 0 {
		t.Fatal("no histograms")
	}
	x, ok := p.Histograms["x"]
	if !ok {
		t.Fatalf("no histogram of the input x: %v", p.Histograms)
	}
	// The input's range, by hand from the batches.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, b := range batches(4) {
		v, _ := b[0].Float64s()
		for _, e := range v {
			lo, hi = math.Min(lo, e), math.Max(hi, e)
		}
	}
	if x.Min != lo || x.Max != hi {
		t.Errorf("x's histogram range [%v, %v], want [%v, %v]", x.Min, x.Max, lo, hi)
	}
	for name, h := range p.Histograms {
		sum := 0.0
		for _, c := range h.Counts {
			sum += c
		}
		if sum != 256 || len(h.Counts) != 2048 {
			t.Errorf("%s: %d bins holding %v values, want 2048 bins holding 256", name, len(h.Counts), sum)
		}
	}
	if got := downsample(x.Counts, histBins); len(got) != 64 {
		t.Errorf("downsampled to %d bars, want 64", len(got))
	}
}

// Without a comparison the page still draws both graphs, uncoloured, and
// says why.
func TestNoComparison(t *testing.T) {
	p := page(t, 2, false)
	p.Comparison = nil
	p.Note = "numdebug: not implemented"
	html, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	d := pageData(t, html)
	if !strings.Contains(s, "Nodes are not coloured: numdebug: not implemented") {
		t.Error("the page does not say why nodes are not coloured")
	}
	if regexp.MustCompile(`class="n s[1-5]`).MatchString(strings.Join(append(d.Bands["f"], d.Bands["q"]...), "")) {
		t.Error("a node is coloured without a comparison")
	}
	if n := strings.Count(strings.Join(append(d.Bands["f"], d.Bands["q"]...), ""), `<g class="n `); n != p.Float.Len()+p.Quant.Len() {
		t.Errorf("%d node boxes, want %d", n, p.Float.Len()+p.Quant.Len())
	}
}

// Text from the program is escaped, and "</script>" in a name cannot end
// the data element.
func TestEscaping(t *testing.T) {
	p := page(t, 1, false)
	p.Title = `<b>"x"</b>`
	p.Settings = append(p.Settings, Field{"input", "</script><script>alert(1)</script>"})
	p.Comparison.Results[0].Target = "</script>"
	html, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(html)
	if strings.Contains(s, "<b>") || strings.Count(s, "</script>") != 2 || strings.Contains(s, "<!") && !strings.HasPrefix(s, "<!DOCTYPE") {
		t.Errorf("unescaped text in the page (%d </script>)", strings.Count(s, "</script>"))
	}
}

func TestNeedsBothGraphs(t *testing.T) {
	if _, err := HTML(&Page{Float: fxgraph.New()}); err == nil {
		t.Error("HTML without the quantized graph did not fail")
	}
	if _, err := HTML(&Page{Float: fxgraph.New(), Quant: fxgraph.New()}); err != nil {
		t.Errorf("two empty graphs: %v", err)
	}
}

// A long name is cut on a rune boundary, with an ellipsis.
func TestClip(t *testing.T) {
	s := strings.Repeat("é", 40)
	got := clip(s, 100) // (100-10)/6.6 = 13 runes at most
	if !utf8.ValidString(got) || utf8.RuneCountInString(got) != 13 || !strings.HasSuffix(got, "…") {
		t.Errorf("clip = %q", got)
	}
	if clip("short", 100) != "short" {
		t.Error("a short name was cut")
	}
}

// The colour buckets, by hand.
func TestSQNRClass(t *testing.T) {
	for _, c := range []struct {
		db   float64
		want string
	}{{math.Inf(1), "s5"}, {40, "s5"}, {39.99, "s4"}, {30, "s4"}, {25, "s3"}, {10, "s2"}, {9.9, "s1"}, {-3, "s1"}, {math.NaN(), "s0"}} {
		if got := sqnrClass(c.db); got != c.want {
			t.Errorf("sqnrClass(%v) = %s, want %s", c.db, got, c.want)
		}
	}
}

// In the reference representation the quantize of x is decomposed
// (div, round, to, add, clamp, to): its last node, which convert created
// for x's observer, is marked, names the observer and shows x's histogram.
func TestReferenceQDQMarked(t *testing.T) {
	float := mlp(1, false)
	g, _ := float.Clone()
	q := convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(convert.DefaultSymmetricConfigOptions()))
	if err := convert.Prepare(g, q); err != nil {
		t.Fatal(err)
	}
	if err := convert.Calibrate(g, batches(2), nil); err != nil {
		t.Fatal(err)
	}
	hists := ObserverHistograms(g)
	obs := hists["x"].Observer
	if err := convert.Convert(g, convert.ConvertOptions{ReferenceRepresentation: true}); err != nil {
		t.Fatal(err)
	}
	r := newRenderer(&Page{Float: float, Quant: g, Histograms: hists})
	v := r.views[1]
	found := false
	for i, n := range v.lay.nodes {
		if v.qdq[i] != "ref" {
			continue
		}
		if n.Op() != fxgraph.CallFunction || qdqKind(n) != "" {
			t.Errorf("%s marked as a decomposed q/dq", n.Name())
		}
		// The first one in graph order ends the quantize of x.
		if !found {
			found = true
			in, _ := n.Arg(0).(*fxgraph.Node)
			if n.Target().String() != "aten.to.dtype" || in == nil || in.Target().String() != "aten.clamp.default" && in.Target().String() != "aten.clamp" {
				t.Errorf("first decomposed q/dq %s = %v(%v), want to(clamp(...))", n.Name(), n.Target(), in)
			}
			if v.qp[i] != "from "+obs || v.hist[i] != "x" {
				t.Errorf("%s: third line %q, histogram %q; want \"from %s\" and x", n.Name(), v.qp[i], v.hist[i], obs)
			}
		}
	}
	if !found {
		t.Error("no decomposed q/dq marked")
	}
}
