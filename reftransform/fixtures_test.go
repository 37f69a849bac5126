package reftransform_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

const fixtureDir = "../tests/testdata/pt2e"

// jsonTensor is a tensor of the fixtures' outputs.json.
type jsonTensor struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
}

func (j jsonTensor) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	switch j.DType {
	case "float32":
		v := make([]float32, len(j.Values))
		for i, x := range j.Values {
			v[i] = float32(x)
		}
		return tensor.MustFromData(tensor.Float32, j.Shape, v)
	case "int8":
		v := make([]int8, len(j.Values))
		for i, x := range j.Values {
			v[i] = int8(x)
		}
		return tensor.MustFromData(tensor.Int8, j.Shape, v)
	}
	t.Fatalf("fixture tensor dtype %q not handled", j.DType)
	return nil
}

type outputsFile struct {
	Inputs struct {
		Eval []jsonTensor `json:"eval"`
	} `json:"inputs"`
	Int4 *struct {
		ConvertedOutputs    []jsonTensor `json:"converted_outputs"`
		ExportRefrepOutputs []jsonTensor `json:"export_refrep_outputs"`
	} `json:"int4"`
	Static *struct {
		Outputs       []jsonTensor `json:"outputs"`
		RefrepOutputs []jsonTensor `json:"refrep_outputs"`
	} `json:"static"`
}

func readOutputs(t *testing.T, stem string) outputsFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, stem+".outputs.json"))
	require.NoError(t, err)
	var o outputsFile
	require.NoError(t, json.Unmarshal(b, &o))
	return o
}

// int4Cases discovers the int4 fixtures by their re-exported archives.
func int4Cases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, "int4_linear_g*.converted.pt2"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var stems []string
	for _, f := range files {
		stems = append(stems, strings.TrimSuffix(filepath.Base(f), ".converted.pt2"))
	}
	return stems
}

// programInputs maps every placeholder of p to its value: parameters and
// buffers from the archive, the user input x.
func programInputs(t *testing.T, p *pt2.Program, x *tensor.Tensor) map[string]ops.Value {
	t.Helper()
	in := map[string]ops.Value{}
	for _, s := range p.Signature.Inputs {
		if s.Kind == pt2.UserInput {
			in[s.Name] = x
			continue
		}
		a, ok := p.Graph.Attr(s.Target)
		require.True(t, ok, "attribute %s of input %s", s.Target, s.Name)
		in[s.Name] = a.(ops.Value)
	}
	return in
}

// floats returns the float32 values of a tensor.
func floats(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	v, err := tensor.Data[float32](x.Contiguous())
	require.NoError(t, err)
	return v
}

// maxAbsDiff returns max |a-b| between two equally shaped float32 tensors.
func maxAbsDiff(t *testing.T, a, b *tensor.Tensor) float64 {
	t.Helper()
	require.Equal(t, a.Shape(), b.Shape())
	av, bv := floats(t, a), floats(t, b)
	m := 0.0
	for i := range av {
		m = math.Max(m, math.Abs(float64(av[i])-float64(bv[i])))
	}
	return m
}

// withinFloatTol checks the README's float tolerance |a-b| <= 1e-5 + 1e-5|b|
// elementwise.
func withinFloatTol(t *testing.T, got, want *tensor.Tensor) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape())
	g, w := floats(t, got), floats(t, want)
	for i := range g {
		tol := 1e-5 + 1e-5*math.Abs(float64(w[i]))
		if math.Abs(float64(g[i])-float64(w[i])) > tol {
			t.Errorf("element %d: got %g (%#08x), want %g (%#08x), tolerance %g", i, g[i], math.Float32bits(g[i]), w[i], math.Float32bits(w[i]), tol)
		}
	}
}

func listing(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	require.NoError(t, err)
	return string(b)
}

func countTarget(g *fxgraph.Graph, pred func(ops.Target) bool) int {
	n := 0
	for _, nd := range g.Nodes() {
		if nd.Op() == fxgraph.CallFunction && pred(nd.Target()) {
			n++
		}
	}
	return n
}
