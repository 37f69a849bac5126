// Package report writes fxquant's quantization report: one self-contained
// HTML page (no network access, no external assets) that shows the float
// and the quantized graph side by side as SVG in a layered layout, with
// quantize/dequantize nodes and their qparams marked, every node coloured
// by its SQNR from a numdebug.Comparison, a sortable and searchable table
// of the per-node numbers, the run's settings and summary, and, when a
// node is clicked, its printed line, its numbers and the histogram its
// HistogramObserver recorded during calibration.
//
// The layout is computed here (a Sugiyama-style layered layout: longest
// path layers, virtual nodes on long edges, barycenter ordering): it is
// deterministic, linear-time per sweep, and fast on graphs of thousands
// of nodes. The same Page always gives the same bytes.
//
// `fxquant report` (cmd/fxquant) fills a Page from its run: the graphs,
// numdebug.Compare's result, and ObserverHistograms of the calibrated
// graph taken before convert.
package report
