package tests

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/interp"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// Tolerances of tests/testdata/pt2e/README.md ("Tolerances for comparing
// fxquant's results"): matrix products and convolutions sum in another
// order, so float outputs agree to 1e-5 + 1e-5*|b|; a quantized program may
// move a value that sits on a rounding boundary by one step, so at least 90%
// of its elements agree that closely and every element within 4*s, s being
// the largest scale of any quantize op in the graph.
const (
	fixtureAtol         = 1e-5
	fixtureRtol         = 1e-5
	quantizedCloseShare = 0.90
	quantizedStepsBound = 4.0
)

// expectedOutputs names, for each kind of archive, where its recorded
// outputs live in <stem>.outputs.json.
func expectedOutputs(kind string) (section, key string, quantized bool, ok bool) {
	switch kind {
	case "float":
		return "float", "outputs", false, true
	case "static", "dynamic":
		return kind, "outputs", true, true
	case "converted":
		return "int4", "converted_outputs", true, true
	}
	return "", "", false, false
}

// TestPT2ProgramsRun loads every .pt2 fixture, runs it with the interpreter
// on the recorded evaluation inputs and compares with the outputs PyTorch
// recorded; then writes the program, reads it back and requires the re-read
// program to give bit-identical outputs.
func TestPT2ProgramsRun(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(pt2eDir, "*.pt2"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		stem, kind := stemAndKind(path)
		t.Run(stem+"."+kind, func(t *testing.T) {
			section, key, quantized, ok := expectedOutputs(kind)
			require.True(t, ok, "%s: no recorded outputs are known for archives of kind %q", path, kind)
			fx := loadFixtureOutputs(t, stem)
			var want []fixtureTensor
			if section == "float" {
				want = fx.Float.Outputs
			} else {
				want = fx.modeTensors(t, section, key)
			}
			require.Len(t, want, len(fx.Inputs.Eval), "one recorded output per eval input")

			prog, err := pt2.ReadFile(path, nil)
			require.NoError(t, err)
			require.NoError(t, fxgraph.Verify(prog.Graph, fxgraph.VerifyOptions{}), "imported graph must verify")

			var buf bytes.Buffer
			require.NoError(t, prog.WriteArchive(&buf, nil))
			again, err := pt2.Read(buf.Bytes(), nil)
			require.NoError(t, err)

			for i := range fx.Inputs.Eval {
				x := mustTensor(t, &fx.Inputs.Eval[i])
				got, scales := runProgram(t, prog, x)
				require.Len(t, got, 1, "the fixture models return one tensor")
				w := mustTensor(t, &want[i])
				if quantized {
					require.NotEmpty(t, scales, "a quantized program has quantize ops")
					checkQuantizedOutput(t, fmt.Sprintf("eval[%d]", i), w, got[0], slices.Max(scales))
				} else {
					checkFloatOutput(t, fmt.Sprintf("eval[%d]", i), w, got[0])
				}
				re, _ := runProgram(t, again, x)
				require.True(t, tensor.Equal(got[0], re[0]), "eval[%d]: the re-read program gives other outputs", i)
			}
		})
	}
}

// runProgram runs p on one user input and returns its outputs and the scale
// of every quantize op it ran (the largest bounds the quantized tolerance).
func runProgram(t *testing.T, p *pt2.Program, x *tensor.Tensor) ([]*tensor.Tensor, []float64) {
	t.Helper()
	return runGraph(t, p.Graph, programInputs(t, p, []*tensor.Tensor{x}))
}

// runGraph runs g on inputs and returns its outputs, which must be tensors,
// and the scale of every quantize op it ran (see quantizeScales).
func runGraph(t *testing.T, g *fxgraph.Graph, inputs []*tensor.Tensor) ([]*tensor.Tensor, []float64) {
	t.Helper()
	values := map[*fxgraph.Node]ops.Value{}
	outs, err := interp.Run(g, inputs, interp.Options{
		Hook: func(n *fxgraph.Node, v ops.Value) error { values[n] = v; return nil },
	})
	require.NoError(t, err)
	var res []*tensor.Tensor
	for _, o := range outs {
		tt, ok := o.(*tensor.Tensor)
		require.True(t, ok, "output is %T, not a tensor", o)
		res = append(res, tt)
	}
	return res, quantizeScales(t, g, values)
}

// quantizeScales returns every scale used by a quantize op of g, reading
// literal scales from the arguments and tensor scales from the values the
// run produced.
func quantizeScales(t *testing.T, g *fxgraph.Graph, values map[*fxgraph.Node]ops.Value) []float64 {
	t.Helper()
	var out []float64
	reg := ops.Default()
	for n := range g.All() {
		o, ok := n.Target().(ops.Overload)
		if n.Op() != fxgraph.CallFunction || !ok || !strings.HasPrefix(o.Packet.Name, "quantize") {
			continue
		}
		sch, ok := reg.Schema(o)
		require.True(t, ok)
		full, err := sch.Normalize(n.Args(), n.Kwargs())
		require.NoError(t, err)
		i := sch.ArgIndex("scale")
		if i < 0 {
			i = sch.ArgIndex("scales")
		}
		require.GreaterOrEqual(t, i, 0, "%s has no scale argument", o)
		switch s := full[i].(type) {
		case float64:
			out = append(out, s)
		case *fxgraph.Node:
			st, ok := values[s].(*tensor.Tensor)
			require.True(t, ok, "scale of %s is not a tensor", n)
			vals, err := st.Float64s()
			require.NoError(t, err)
			out = append(out, slices.Max(vals))
		default:
			t.Fatalf("scale of %s is %T", n, s)
		}
	}
	return out
}

func closeEnough(a, b float64) bool {
	return math.Abs(a-b) <= fixtureAtol+fixtureRtol*math.Abs(b)
}

func checkFloatOutput(t *testing.T, what string, want, got *tensor.Tensor) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), "%s: shape", what)
	w, err := want.Float64s()
	require.NoError(t, err)
	g, err := got.Float64s()
	require.NoError(t, err)
	for i := range w {
		if !closeEnough(g[i], w[i]) {
			t.Fatalf("%s: element %d: want %g, got %g (tolerance %g + %g*|want|)", what, i, w[i], g[i], fixtureAtol, fixtureRtol)
		}
	}
}

func checkQuantizedOutput(t *testing.T, what string, want, got *tensor.Tensor, scale float64) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), "%s: shape", what)
	w, err := want.Float64s()
	require.NoError(t, err)
	g, err := got.Float64s()
	require.NoError(t, err)
	close := 0
	for i := range w {
		if closeEnough(g[i], w[i]) {
			close++
		}
		if d := math.Abs(g[i] - w[i]); d > quantizedStepsBound*scale {
			t.Fatalf("%s: element %d: want %g, got %g: off by %g, more than %g steps of scale %g", what, i, w[i], g[i], d, quantizedStepsBound, scale)
		}
	}
	share := float64(close) / float64(len(w))
	require.GreaterOrEqual(t, share, quantizedCloseShare, "%s: only %.0f%% of elements within float tolerance", what, 100*share)
}
