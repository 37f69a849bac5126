package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/numdebug"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// evalRandomBatches is how many random batches run measures the SQNR on
// when it draws its calibration batches at random.
const evalRandomBatches = 2

// evalSeedOffset turns --seed into the seed of the random eval batches, so
// that they are never the calibration batches (the golden ratio's 64-bit
// fraction: any odd constant would do).
const evalSeedOffset = 0x9e3779b97f4a7c15

// worstShown is how many nodes the summary lists by SQNR.
const worstShown = 5

// splitEval chooses the batches run measures on.
//
//   - --eval-data FILE: that file's batches; every calibration batch
//     calibrates.
//   - --hold-back K: the last K calibration batches are measured on and
//     do not calibrate (at least one must be left to calibrate).
//   - random calibration (the default): evalRandomBatches more random
//     batches, drawn with another seed (--seed + evalSeedOffset).
//   - --no-compare: none.
//   - --calibration-data alone: every batch calibrates, as torchao's flow
//     calibrates on every batch a user gives it (so -o writes the program
//     torchao would write from the same data), and the SQNR is measured on
//     the calibration batches; the summary says that this is optimistic.
func splitEval(c *runConfig, specs []inputSpec, calib [][]*tensor.Tensor) (cal, eval [][]*tensor.Tensor, calDesc, evalDesc string, err error) {
	switch {
	case c.noCompare:
		return calib, nil, "", "none (--no-compare)", nil
	case c.evalData != "":
		if eval, err = loadEvalBatches(c.evalData, specs); err != nil {
			return nil, nil, "", "", err
		}
		if err := checkFinite(c.evalData, eval, specs); err != nil {
			return nil, nil, "", "", err
		}
		return calib, eval, "", fmt.Sprintf("%d batch%s from %s", len(eval), pluralES(len(eval)), c.evalData), nil
	case c.holdBack > 0:
		k := c.holdBack
		if k >= len(calib) {
			return nil, nil, "", "", usagef("--hold-back %d: the calibration set has %d batch%s, and at least one must calibrate", k, len(calib), pluralES(len(calib)))
		}
		n := len(calib) - k
		what := "random batches"
		if c.calibData != "" {
			what = "batches from " + c.calibData
		}
		calDesc = fmt.Sprintf("%d of %d %s (the last %d held back for the SQNR)", n, len(calib), what, k)
		return calib[:n], calib[n:], calDesc, fmt.Sprintf("the %d held-back calibration batch%s", k, pluralES(k)), nil
	case c.calibData == "":
		seed := c.seed + evalSeedOffset
		if eval, err = randomBatchesWithin(specs, evalRandomBatches, seed, c.calibBudget); err != nil {
			return nil, nil, "", "", fmt.Errorf("random eval batches: %w", err)
		}
		return calib, eval, "", fmt.Sprintf("%d random batches (seed %d's eval stream), not the calibration batches", len(eval), c.seed), nil
	}
	return calib, calib, "", fmt.Sprintf("the %d calibration batch%s (optimistic: --eval-data FILE or --hold-back K measures on other data)", len(calib), pluralES(len(calib))), nil
}

// loadEvalBatches reads --eval-data: what loadBatches reads, except that
// a fixtures outputs file (an object with inputs.calibration and
// inputs.eval) gives its eval inputs, not its calibration ones.
func loadEvalBatches(file string, specs []inputSpec) ([][]*tensor.Tensor, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f struct {
		Inputs struct {
			Eval json.RawMessage `json:"eval"`
		} `json:"inputs"`
	}
	trimmed := bytes.TrimSpace(data)
	if !bytes.HasPrefix(trimmed, []byte("{")) || json.Unmarshal(data, &f) != nil || len(f.Inputs.Eval) == 0 {
		return decodeBatches(file, data, specs)
	}
	batches, err := readJSONBatches(f.Inputs.Eval)
	if err != nil {
		return nil, fmt.Errorf("%s: inputs.eval: %w", file, err)
	}
	if len(batches) == 0 {
		return nil, fmt.Errorf("%s: inputs.eval: no batches", file)
	}
	if err := fitBatches(file+": inputs.eval", batches, specs); err != nil {
		return nil, err
	}
	return batches, nil
}

// dB prints an SQNR.
func dB(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf dB"
	case math.IsNaN(x):
		return "NaN dB"
	}
	return fmt.Sprintf("%.2f dB", x)
}

// writeMeasure prints the SQNR lines of the summary: the outputs' SQNR,
// the worst nodes and the node whose error grows most.
func (r *runResult) writeMeasure(w io.Writer) {
	fmt.Fprintf(w, "eval:        %s\n", r.evalDesc)
	if r.nothingQuantized {
		fmt.Fprintf(w, "warning:     nothing was quantized (no quantize or dequantize node, no quantized value): the quantizer annotated no node of this program\n")
	}
	if r.cfg.noCompare {
		fmt.Fprintf(w, "SQNR:        not measured (--no-compare)\n")
		return
	}
	if r.sqnrErr != nil {
		fmt.Fprintf(w, "SQNR:        unavailable: %v\n", r.sqnrErr)
		return
	}
	c := r.cmp
	if c.Output == nil {
		fmt.Fprintf(w, "SQNR:        unavailable: the program returns no floating point tensor\n")
	} else {
		fmt.Fprintf(w, "SQNR:        %s (float vs quantized outputs)\n", dB(c.Output.SQNR))
	}
	if len(c.Results) == 0 {
		return
	}
	worst := c.Worst(worstShown)
	fmt.Fprintf(w, "\nworst nodes by SQNR (%d of %d compared; torchao's compute_sqnr per numeric debug handle)\n", len(worst), len(c.Results))
	rows := [][]string{{"node", "target", "SQNR", "max abs err", "float range"}}
	for _, i := range worst {
		res := c.Results[i]
		rows = append(rows, []string{res.FloatNode, res.Target, dB(res.SQNR), fmt.Sprintf("%.4g", res.MaxAbsErr),
			fmt.Sprintf("[%.4g, %.4g]", res.Min, res.Max)})
	}
	writeTable(w, rows)
	for _, i := range worst {
		if res := c.Results[i]; res.Note != "" {
			fmt.Fprintf(w, "  note: %s: %s\n", res.FloatNode, res.Note)
		}
	}
	if c.WorstGrowth >= 0 {
		res := c.Results[c.WorstGrowth]
		growth := fmt.Sprintf("loses %.2f dB over its inputs", res.Growth)
		if math.IsInf(res.Growth, 1) {
			growth = "is the first to lose precision"
		}
		fmt.Fprintf(w, "most error added: %s (%s, %s, %s)\n", res.FloatNode, res.Target, dB(res.SQNR), growth)
	}
}

// writeTable prints rows as left-aligned columns, two spaces apart, with
// the first row as the header.
func writeTable(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, cell := range row {
			if i == len(row)-1 {
				b.WriteString(cell)
				break
			}
			fmt.Fprintf(&b, "%-*s  ", widths[i], cell)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// quantizedNodes counts the nodes of g that only quantization brings:
// calls of quantized_decomposed and torchao ops (q/dq, choose_qparams,
// the affine ops, reference_dqlinear_int4) and values of a quantized
// dtype (the reference representation's integer arithmetic).
func quantizedNodes(g *fxgraph.Graph) int {
	count := 0
	for n := range g.All() {
		if n.Op() == fxgraph.CallFunction {
			if p, ok := ops.PacketOf(n.Target()); ok && (p.NS == "quantized_decomposed" || p.NS == "torchao") {
				count++
				continue
			}
		}
		if tt, ok := n.Type().(ops.TensorType); ok {
			switch tt.DType() {
			case tensor.Int8, tensor.UInt8, tensor.Int4, tensor.UInt4:
				count++
			}
		}
	}
	return count
}

// compareGraphs is the per-node comparison of run and report:
// numdebug.Compare. Tests may replace it.
var compareGraphs = numdebug.Compare

// measure compares the float and the quantized graph on the eval batches,
// unless --no-compare, and warns on stderr when convert quantized nothing
// (the SQNR is then inf dB, which must not read as a perfect
// quantization).
func (r *runResult) measure(eval [][]*tensor.Tensor, stderr io.Writer) {
	if !r.cfg.noCompare {
		r.cmp, r.sqnrErr = compareGraphs(r.float, r.quant, eval)
	}
	r.nothingQuantized = quantizedNodes(r.quant) == quantizedNodes(r.float)
	if r.nothingQuantized {
		fmt.Fprintf(stderr, "fxquant run: warning: nothing was quantized: the converted graph has no quantize or dequantize node and no quantized value (%s annotated no node)\n", r.cfg.quantizer)
	}
}
