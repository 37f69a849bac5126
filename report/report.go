package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
)

// Page is what one report shows.
type Page struct {
	// Title heads the page (the input's name).
	Title string
	// Settings are the run's settings (quantizer, calibration, ...), and
	// Summary its results (node counts, verifier, SQNR), shown in order.
	Settings, Summary []Field
	// Float is the float graph and Quant the converted one.
	Float, Quant *fxgraph.Graph
	// Comparison holds the per-node numbers (numdebug.Compare); nil when
	// there are none, and then Note says why.
	Comparison *numdebug.Comparison
	Note       string
	// Histograms are the observed activations, keyed by the name of the
	// observed node (ObserverHistograms).
	Histograms map[string]*Histogram
}

// Field is one labelled line of the settings or the summary.
type Field struct {
	Label, Value string
}

// Histogram is a HistogramObserver's state after calibration.
type Histogram struct {
	// Observer names the observer node.
	Observer string
	// Min and Max are the observed range; Counts the bins over it.
	Min, Max float64
	Counts   []float64
}

// histBins is how many bars the page draws of a histogram.
const histBins = 64

// ObserverHistograms returns the histogram of every HistogramObserver of
// a prepared (and calibrated) graph, keyed by the name of the node the
// observer watches (the observer node's first argument). Observers are
// the call_module nodes whose target names a graph attribute holding an
// observers.Observer, as prepare inserts them. Observers that saw no data
// are left out.
func ObserverHistograms(prepared *fxgraph.Graph) map[string]*Histogram {
	out := map[string]*Histogram{}
	for n := range prepared.All() {
		if n.Op() != fxgraph.CallModule {
			continue
		}
		v, ok := prepared.Attr(n.TargetName())
		if !ok {
			continue
		}
		o, ok := v.(*observers.HistogramObserver)
		if !ok {
			continue
		}
		in, ok := n.Arg(0).(*fxgraph.Node)
		if !ok {
			continue
		}
		hist, lo, hi := o.State()
		if lo > hi || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
			continue
		}
		counts := make([]float64, len(hist))
		for i, c := range hist {
			counts[i] = float64(c)
		}
		out[in.Name()] = &Histogram{Observer: n.Name(), Min: float64(lo), Max: float64(hi), Counts: counts}
	}
	return out
}

// Write writes p as one self-contained HTML page: no network access, no
// external assets. The same page always gives the same bytes.
func Write(w io.Writer, p *Page) error {
	b, err := HTML(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// HTML returns p as a self-contained HTML page (see Write).
func HTML(p *Page) ([]byte, error) {
	if p == nil || p.Float == nil || p.Quant == nil {
		return nil, errors.New("report: the page needs both the float and the quantized graph")
	}
	r := newRenderer(p)
	return r.render()
}

// graphView is one graph's drawing and per-node data.
type graphView struct {
	key    string // "f" or "q"
	title  string
	lay    *layout
	bandOf []int    // per node: its band (set by graph)
	result []int    // per node: index into Comparison.Results, or -1
	hist   []string // per node: histogram key, or ""
	qdq    []string // per node: "q", "dq", "cq" (choose_qparams) or ""
	label  []string // first line: the node's name
	sub    []string // second line: the op
	qp     []string // third line of q/dq nodes: their qparams
}

type renderer struct {
	p        *Page
	results  []numdebug.Result
	byHandle map[int]int // numeric debug handle -> index in results
	views    [2]*graphView
	buf      bytes.Buffer
	cur      *bytes.Buffer       // where w writes: buf, or a band's markup
	bands    map[string][]string // per graph key, each band's SVG markup
	// byObserver maps an observer node's name to its histogram's key.
	byObserver map[string]string
}

func newRenderer(p *Page) *renderer {
	r := &renderer{p: p, bands: map[string][]string{}, byObserver: map[string]string{}}
	r.cur = &r.buf
	for k, h := range p.Histograms {
		if h != nil && h.Observer != "" {
			r.byObserver[h.Observer] = k
		}
	}
	if p.Comparison != nil {
		r.results = p.Comparison.Results
	}
	fIdx := map[string]int{}
	qIdx := map[string]int{}
	r.byHandle = map[int]int{}
	for i, res := range r.results {
		if _, dup := r.byHandle[res.Handle]; !dup && res.Handle != 0 {
			r.byHandle[res.Handle] = i
		}
		if _, dup := fIdx[res.FloatNode]; !dup {
			fIdx[res.FloatNode] = i
		}
		if _, dup := qIdx[res.QuantNode]; !dup {
			qIdx[res.QuantNode] = i
		}
	}
	r.views[0] = r.view("f", "Float graph", p.Float, fIdx)
	r.views[1] = r.view("q", "Quantized graph", p.Quant, qIdx)
	return r
}

// view collects what the page shows of g's nodes and lays g out.
func (r *renderer) view(key, title string, g *fxgraph.Graph, byName map[string]int) *graphView {
	v := &graphView{key: key, title: title}
	for n := range g.All() {
		// A node is coloured by its comparison; a node that holds a
		// compared handle without being the compared node (the node a
		// quantize and dequantize follow) by that handle's.
		i, ok := byName[n.Name()]
		if !ok {
			i, ok = r.byHandle[n.Meta.NumericDebugHandle]
		}
		if !ok {
			i = -1
		}
		v.result = append(v.result, i)
		kind := qdqKind(n)
		qp := qparamsLabel(n, kind)
		hist := r.histKey(n, kind)
		if obs := refQDQObserver(n, kind); obs != "" {
			// The last node of a quantize or dequantize that the
			// reference representation decomposed.
			kind, qp = "ref", "from "+obs
			if hist == "" {
				hist = r.byObserver[obs]
			}
		}
		v.qdq = append(v.qdq, kind)
		v.hist = append(v.hist, hist)
		v.label = append(v.label, n.Name())
		v.sub = append(v.sub, opLabel(n))
		v.qp = append(v.qp, qp)
	}
	v.lay = layoutGraph(g, func(i int) float64 {
		chars := max(len(v.label[i]), len(v.sub[i]), len(v.qp[i]))
		return math.Min(maxNodeW, math.Max(minNodeW, math.Ceil(float64(chars)*charW)+14))
	}, func(i int) float64 {
		if v.qp[i] != "" {
			return 48
		}
		return 34
	})
	return v
}

// histKey is the histogram shown for n: its own, or for a quantize node
// the histogram of the value it quantizes (and for a dequantize node the
// one of its quantize node's input).
func (r *renderer) histKey(n *fxgraph.Node, kind string) string {
	if _, ok := r.p.Histograms[n.Name()]; ok {
		return n.Name()
	}
	src := n
	switch kind {
	case "dq":
		in, ok := n.Arg(0).(*fxgraph.Node)
		if !ok || qdqKind(in) != "q" {
			return ""
		}
		src = in
		fallthrough
	case "q":
		in, ok := src.Arg(0).(*fxgraph.Node)
		if !ok {
			return ""
		}
		if _, ok := r.p.Histograms[in.Name()]; ok {
			return in.Name()
		}
	}
	return ""
}

// refQDQObserver returns, for a node that is not itself a q/dq call but
// whose from_node record says convert created it for an observer (the
// node that ends a quantize or dequantize rewritten to the reference
// representation: to(div, round, add, clamp) or mul(sub(...))), the
// observer's name; otherwise "".
func refQDQObserver(n *fxgraph.Node, kind string) string {
	if kind != "" || n.Op() != fxgraph.CallFunction || n.Meta == nil || !strings.Contains(n.Meta.FromNode, convert.ReplaceObserverPassName) {
		return ""
	}
	src, err := convert.ParseFromNode(n.Meta.FromNode)
	if err != nil || len(src) == 0 || src[0].PassName != convert.ReplaceObserverPassName {
		return ""
	}
	return src[0].Name
}

// qdqKind says whether n is a quantize ("q"), dequantize ("dq") or
// choose_qparams ("cq") call.
func qdqKind(n *fxgraph.Node) string {
	if n.Op() != fxgraph.CallFunction {
		return ""
	}
	p, ok := ops.PacketOf(n.Target())
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(p.Name, "quantize_"):
		return "q"
	case strings.HasPrefix(p.Name, "dequantize_"):
		return "dq"
	case strings.HasPrefix(p.Name, "choose_qparams"):
		return "cq"
	}
	return ""
}

// opLabel is the node's op in short: "linear", "quantize_per_tensor",
// "placeholder", or an observer's module name.
func opLabel(n *fxgraph.Node) string {
	switch n.Op() {
	case fxgraph.CallFunction:
		if o, ok := n.Target().(ops.Overload); ok {
			if o.Name == "default" {
				return o.Packet.Name
			}
			return o.Packet.Name + "." + o.Name
		}
		if c, ok := n.Target().(ops.Callable); ok {
			return c.Name
		}
		if n.Target() != nil {
			return n.Target().String()
		}
	case fxgraph.CallModule, fxgraph.CallMethod:
		return n.Op().String() + " " + n.TargetName()
	}
	return n.Op().String()
}

// qparamsLabel is the third line of a q/dq node: its scale and zero point
// (a number, or the name of the node holding them) and its dtype.
func qparamsLabel(n *fxgraph.Node, kind string) string {
	if kind != "q" && kind != "dq" {
		return ""
	}
	o, ok := n.Target().(ops.Overload)
	if !ok {
		return ""
	}
	s, ok := ops.Default().Schema(o)
	if !ok {
		return ""
	}
	var parts []string
	for i, a := range s.Args {
		var v ops.Value
		if i < len(n.Args()) {
			v = n.Arg(i)
		} else if kv, ok := n.Kwarg(a.Name); ok {
			v = kv
		} else {
			continue
		}
		switch a.Name {
		case "scale", "scales":
			parts = append(parts, "s="+shortValue(v))
		case "zero_point", "zero_points":
			parts = append(parts, "zp="+shortValue(v))
		case "dtype", "output_dtype":
			parts = append(parts, shortValue(v))
		}
	}
	return strings.Join(parts, " ")
}

// shortValue prints a literal argument compactly.
func shortValue(v ops.Value) string {
	switch x := v.(type) {
	case *fxgraph.Node:
		return "%" + x.Name()
	case float64:
		return strconv.FormatFloat(x, 'g', 4, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return "None"
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// sqnrClass buckets an SQNR for the node colours (CSS classes s0..s5).
func sqnrClass(db float64) string {
	switch {
	case math.IsNaN(db):
		return "s0"
	case db >= 40:
		return "s5"
	case db >= 30:
		return "s4"
	case db >= 20:
		return "s3"
	case db >= 10:
		return "s2"
	}
	return "s1"
}

// num formats a number for the page: 4 significant digits, "inf", "nan".
func num(v float64) string { return formatFloat(v, 'g', 4) }

// dB formats an SQNR or a growth in dB with two decimals.
func dB(v float64) string { return formatFloat(v, 'f', 2) }

// formatFloat is strconv.FormatFloat with "inf", "-inf" and "nan" for the
// values that are not finite.
func formatFloat(v float64, format byte, prec int) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return strconv.FormatFloat(v, format, prec, 64)
}

// sortKey is a cell's numeric sort key: finite, with +Inf above everything.
func sortKey(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "1e308"
	case math.IsInf(v, -1), math.IsNaN(v):
		return "-1e308"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (r *renderer) w(s ...string) {
	for _, x := range s {
		r.cur.WriteString(x)
	}
}

func esc(s string) string { return html.EscapeString(s) }

func ff(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (r *renderer) render() ([]byte, error) {
	p := r.p
	title := "fxquant report"
	if p.Title != "" {
		title += ": " + p.Title
	}
	r.w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", esc(title), "</title>\n")
	r.w("<style>\n", pageCSS, "</style>\n</head>\n<body>\n")
	r.w("<header><h1>", esc(title), "</h1></header>\n")
	r.w("<noscript><p class=\"note\">This page draws its graphs with JavaScript, which is off.</p></noscript>\n")

	// Colours, and the node that adds most error.
	r.w("<section id=\"legend\">")
	r.w("<span class=\"lg\"><span class=\"sw s5\"></span>SQNR &ge; 40 dB <span class=\"sw s4\"></span>30&ndash;40 <span class=\"sw s3\"></span>20&ndash;30 <span class=\"sw s2\"></span>10&ndash;20 <span class=\"sw s1\"></span>&lt; 10 <span class=\"sw s0\"></span>no number</span>\n")
	r.w("<span class=\"lg\"><span class=\"sw s0 qsw\"></span>quantize / dequantize with its qparams (dotted: the end of one the reference representation decomposed)</span>\n")
	if p.Comparison == nil {
		note := p.Note
		if note == "" {
			note = "no per-node comparison"
		}
		r.w("<span id=\"note\" class=\"lg note\">Nodes are not coloured: ", esc(note), "</span>\n")
	} else if wg := p.Comparison.WorstGrowth; wg >= 0 && wg < len(r.results) {
		res := r.results[wg]
		r.w("<span id=\"worst\" class=\"lg\">Most error added: <a href=\"#\" data-r=\"", strconv.Itoa(wg), "\">", esc(res.FloatNode), "</a> (", esc(res.Target), ", ", dB(res.Growth), " dB over its inputs, SQNR ", dB(res.SQNR), " dB)</span>\n")
	}
	r.w("</section>\n")

	// The graphs side by side, and the details of the selected node.
	r.w("<section id=\"graphs\">\n")
	for _, v := range r.views {
		r.graph(v)
	}
	r.w("<aside id=\"details\"><h2>Node</h2><div id=\"detail-body\"><p class=\"hint\">Click a node in a graph or a row of the table.</p></div></aside>\n")
	r.w("</section>\n")

	// Settings and summary, then the per-node table.
	r.w("<section id=\"run\">\n")
	r.fields("settings", "Settings", p.Settings)
	r.fields("summary", "Summary", p.Summary)
	r.w("</section>\n")
	r.table()

	data, err := r.data()
	if err != nil {
		return nil, err
	}
	r.w("<script type=\"application/json\" id=\"report-data\">")
	r.buf.Write(data)
	r.w("</script>\n<script>\n", pageJS, "</script>\n</body>\n</html>\n")
	return r.buf.Bytes(), nil
}

func (r *renderer) fields(id, title string, fs []Field) {
	r.w("<div class=\"kv\" id=\"", id, "\"><h2>", title, "</h2>\n<table>\n")
	for _, f := range fs {
		r.w("<tr><th>", esc(f.Label), "</th><td>", esc(f.Value), "</td></tr>\n")
	}
	r.w("</table></div>\n")
}

// bandHeight is about how high one band of a drawing is. A drawing is
// cut into bands between layers; the page holds each band's SVG markup in
// its data and the script draws a band when it scrolls into view, so a
// page of 12,000 nodes opens as fast as a small one (the browser parses
// and lays out only what is on screen).
const bandHeight = 2400

// graph writes one graph's pane: a stack of empty band boxes, each as
// high as its slice of the drawing. Each band's markup is one SVG whose
// viewBox is its slice, with one <g class="n"> per node of its layers
// (data-i is the node's index in graph order) and one path of the edges
// that cross it; it goes into the page's data (see data).
func (r *renderer) graph(v *graphView) {
	L := v.lay
	r.w("<div class=\"pane\" id=\"pane-", v.key, "\"><h2>", v.title, " <span class=\"count\">", strconv.Itoa(len(L.nodes)), " nodes</span></h2>\n")
	r.w("<div class=\"scroll\">\n<div class=\"graph\" id=\"svg-", v.key, "\" data-g=\"", v.key, "\">\n")
	tops := L.bands(bandHeight)
	band := func(y float64) int { // the band holding y
		k, _ := slices.BinarySearch(tops, y)
		if k == len(tops) || tops[k] > y {
			k--
		}
		return max(k, 0)
	}
	nodes := make([][]int, len(tops))
	v.bandOf = make([]int, len(L.nodes))
	for i := range L.nodes {
		k := band(L.y[i])
		nodes[k] = append(nodes[k], i)
		v.bandOf[i] = k
	}
	paths := make([]strings.Builder, len(tops))
	for _, pts := range L.edges {
		lo, hi := pts[0].y, pts[0].y
		for _, pt := range pts {
			lo, hi = min(lo, pt.y), max(hi, pt.y)
		}
		for k := band(lo); k <= band(hi); k++ {
			e := &paths[k]
			for j, pt := range pts {
				if j == 0 {
					e.WriteByte('M')
				} else {
					e.WriteByte('L')
				}
				e.WriteString(ff(pt.x))
				e.WriteByte(' ')
				e.WriteString(ff(pt.y))
			}
		}
	}
	var markup bytes.Buffer
	for k, top := range tops {
		bottom := L.height
		if k+1 < len(tops) {
			bottom = tops[k+1]
		}
		h := ff(round1(bottom - top))
		r.w("<div class=\"band\" data-b=\"", strconv.Itoa(k), "\" style=\"width:", ff(L.width), "px;height:", h, "px\"></div>\n")
		markup.Reset()
		r.cur = &markup
		r.w("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", ff(L.width), "\" height=\"", h, "\" viewBox=\"0 ", ff(top), " ", ff(L.width), " ", h, "\">\n")
		r.w("<path class=\"edges\" d=\"", paths[k].String(), "\"/>\n")
		for _, i := range nodes[k] {
			r.node(v, i)
		}
		r.w("</svg>")
		r.cur = &r.buf
		r.bands[v.key] = append(r.bands[v.key], markup.String())
	}
	r.w("</div>\n</div></div>\n")
}

// node writes node i's box: a rect and two or three lines of text.
func (r *renderer) node(v *graphView, i int) {
	L := v.lay
	cls := "n s0"
	if ri := v.result[i]; ri >= 0 {
		cls = "n " + sqnrClass(r.results[ri].SQNR)
	}
	if k := v.qdq[i]; k != "" {
		cls += " qdq " + k
	}
	if v.hist[i] != "" {
		cls += " obs"
	}
	x, y, w, h := L.x[i], L.y[i], L.w[i], L.h[i]
	r.w("<g class=\"", cls, "\" data-i=\"", strconv.Itoa(i), "\"><rect x=\"", ff(x), "\" y=\"", ff(y), "\" width=\"", ff(w), "\" height=\"", ff(h), "\" rx=\"4\"/>")
	cx := ff(round1(x + w/2))
	r.w("<text x=\"", cx, "\" y=\"", ff(y+14), "\">", esc(clip(v.label[i], w)), "</text>")
	r.w("<text class=\"op\" x=\"", cx, "\" y=\"", ff(y+27), "\">", esc(clip(v.sub[i], w)), "</text>")
	if v.qp[i] != "" {
		r.w("<text class=\"qp\" x=\"", cx, "\" y=\"", ff(y+41), "\">", esc(clip(v.qp[i], w)), "</text>")
	}
	r.w("</g>\n")
}

// clip shortens s to fit a box of width w, on a rune boundary.
func clip(s string, w float64) string {
	n := int((w - 10) / charW)
	if n < 4 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// table writes the sortable per-node table: one row per comparison
// result, or per float call node when there are no numbers.
func (r *renderer) table() {
	r.w("<section id=\"nodes\"><h2>Per-node numbers</h2>\n")
	r.w("<p><input id=\"filter\" type=\"search\" placeholder=\"find a node by name or op (Enter selects the first)\" size=\"48\"> <span id=\"shown\"></span></p>\n")
	r.w("<table id=\"node-table\">\n<thead><tr>")
	cols := []struct{ name, kind string }{
		{"handle", "n"}, {"float node", "s"}, {"quantized node", "s"}, {"target", "s"},
		{"SQNR (dB)", "n"}, {"max abs err", "n"}, {"min", "n"}, {"max", "n"}, {"growth (dB)", "n"},
	}
	for k, c := range cols {
		r.w("<th data-k=\"", c.kind, "\" data-c=\"", strconv.Itoa(k), "\">", c.name, "</th>")
	}
	r.w("</tr></thead>\n<tbody>\n")
	if len(r.results) > 0 {
		for i, res := range r.results {
			r.w("<tr data-r=\"", strconv.Itoa(i), "\" class=\"", sqnrClass(res.SQNR), "\">")
			r.w("<td>", strconv.Itoa(res.Handle), "</td><td>", esc(res.FloatNode), "</td><td>", esc(res.QuantNode), "</td><td>", esc(res.Target), "</td>")
			for _, x := range []struct {
				v float64
				s string
			}{{res.SQNR, dB(res.SQNR)}, {res.MaxAbsErr, num(res.MaxAbsErr)}, {res.Min, num(res.Min)}, {res.Max, num(res.Max)}, {res.Growth, dB(res.Growth)}} {
				r.w("<td data-v=\"", sortKey(x.v), "\">", x.s, "</td>")
			}
			r.w("</tr>\n")
		}
	} else {
		v := r.views[0]
		for i, n := range v.lay.nodes {
			if n.Op() != fxgraph.CallFunction {
				continue
			}
			target := ""
			if n.Target() != nil {
				target = n.Target().String()
			}
			r.w("<tr data-f=\"", strconv.Itoa(i), "\" class=\"s0\"><td></td><td>", esc(n.Name()), "</td><td></td><td>", esc(target), "</td>")
			r.w("<td data-v=\"0\"></td><td data-v=\"0\"></td><td data-v=\"0\"></td><td data-v=\"0\"></td><td data-v=\"0\"></td></tr>\n")
		}
	}
	r.w("</tbody>\n</table>\n</section>\n")
}

// jsonData is the data the page's script reads: per graph and node its
// printed line, result and histogram; the results; the histograms.
type jsonData struct {
	Graphs  map[string][]jsonNode `json:"graphs"`
	Results []jsonResult          `json:"results"`
	Hist    map[string]jsonHist   `json:"hist"`
	// Bands holds per graph each band's SVG markup.
	Bands map[string][]string `json:"bands"`
}

type jsonNode struct {
	Name string `json:"n"`
	Line string `json:"l"`
	R    int    `json:"r"`
	H    string `json:"h,omitempty"`
	B    int    `json:"b"` // the node's band
}

type jsonResult struct {
	Handle int    `json:"handle"`
	F      string `json:"f"`
	Q      string `json:"q"`
	FI     int    `json:"fi"`
	QI     int    `json:"qi"`
	Target string `json:"target"`
	SQNR   string `json:"sqnr"`
	Err    string `json:"err"`
	Min    string `json:"min"`
	Max    string `json:"max"`
	Growth string `json:"growth"`
}

type jsonHist struct {
	Observer string   `json:"obs"`
	Min      string   `json:"min"`
	Max      string   `json:"max"`
	Counts   []string `json:"counts"`
}

func (r *renderer) data() ([]byte, error) {
	d := jsonData{Graphs: map[string][]jsonNode{}, Hist: map[string]jsonHist{}, Bands: r.bands}
	nodeIndex := [2]map[string]int{{}, {}}
	for gi, v := range r.views {
		nodes := make([]jsonNode, len(v.lay.nodes))
		for i, n := range v.lay.nodes {
			nodes[i] = jsonNode{Name: n.Name(), Line: fxgraph.FormatNode(n), R: v.result[i], H: v.hist[i], B: v.bandOf[i]}
			nodeIndex[gi][n.Name()] = i
		}
		d.Graphs[v.key] = nodes
	}
	for _, res := range r.results {
		fi, ok := nodeIndex[0][res.FloatNode]
		if !ok {
			fi = -1
		}
		qi, ok := nodeIndex[1][res.QuantNode]
		if !ok {
			qi = -1
		}
		d.Results = append(d.Results, jsonResult{Handle: res.Handle, F: res.FloatNode, Q: res.QuantNode, FI: fi, QI: qi,
			Target: res.Target, SQNR: dB(res.SQNR), Err: num(res.MaxAbsErr), Min: num(res.Min), Max: num(res.Max), Growth: dB(res.Growth)})
	}
	if d.Results == nil {
		d.Results = []jsonResult{}
	}
	// Only the histograms some node shows.
	for _, v := range r.views {
		for _, k := range v.hist {
			if k == "" {
				continue
			}
			if _, done := d.Hist[k]; done {
				continue
			}
			h := r.p.Histograms[k]
			counts := downsample(h.Counts, histBins)
			cs := make([]string, len(counts))
			for i, c := range counts {
				cs[i] = strconv.FormatFloat(c, 'g', -1, 64)
			}
			d.Hist[k] = jsonHist{Observer: h.Observer, Min: num(h.Min), Max: num(h.Max), Counts: cs}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the markup stays short; "</" is escaped below
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	// Nothing in the data can end the script element or open an HTML
	// comment in it: "</" is written "<\/" and "<!" "\u003c!" (the same
	// JSON strings).
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	out = bytes.ReplaceAll(out, []byte("</"), []byte(`<\/`))
	out = bytes.ReplaceAll(out, []byte("<!"), []byte(`\u003c!`))
	return out, nil
}

// downsample sums counts into at most n bars of (nearly) equal width.
func downsample(counts []float64, n int) []float64 {
	if len(counts) <= n {
		return counts
	}
	out := make([]float64, n)
	for i, c := range counts {
		out[i*n/len(counts)] += c
	}
	return out
}
