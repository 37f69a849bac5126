package tests

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/fxquant/fxquant/pt2"
)

// pt2eDir holds the real PyTorch 2.14 + torchao programs, listings and
// recorded outputs (see its README).
const pt2eDir = "testdata/pt2e"

// fixtureTensor is a tensor in the encoding of the fixtures' outputs files:
// shape, dtype, row-major values, and for float32 the authoritative bit
// patterns in hex.
type fixtureTensor struct {
	Shape  []int             `json:"shape"`
	DType  string            `json:"dtype"`
	Values []json.RawMessage `json:"values"`
	Hex    []string          `json:"hex"`
}

// Tensor decodes the fixture tensor; float32 values come from their hex
// bit patterns.
func (f *fixtureTensor) Tensor() (*tensor.Tensor, error) {
	dt, err := tensor.ParseDType(f.DType)
	if err != nil {
		return nil, err
	}
	n := tensor.Numel(f.Shape)
	if dt == tensor.Float32 && len(f.Hex) > 0 {
		if len(f.Hex) != n {
			return nil, fmt.Errorf("fixture tensor: shape %v needs %d values, hex has %d", f.Shape, n, len(f.Hex))
		}
		vals, err := hexFloat32s(f.Hex)
		if err != nil {
			return nil, fmt.Errorf("fixture tensor: %w", err)
		}
		return tensor.FromData(dt, f.Shape, vals)
	}
	if len(f.Values) != n {
		return nil, fmt.Errorf("fixture tensor: shape %v needs %d values, got %d", f.Shape, n, len(f.Values))
	}
	ints := make([]int64, n)
	floats := make([]float64, n)
	for i, raw := range f.Values {
		str := strings.Trim(string(raw), `"`)
		var err error
		if dt.IsFloat() {
			floats[i], err = strconv.ParseFloat(str, 64)
		} else {
			ints[i], err = strconv.ParseInt(str, 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("fixture tensor: values[%d]: %w", i, err)
		}
	}
	switch dt {
	case tensor.Float32:
		vals := make([]float32, n)
		for i, v := range floats {
			vals[i] = float32(v)
		}
		return tensor.FromData(dt, f.Shape, vals)
	case tensor.Float64:
		return tensor.FromData(dt, f.Shape, floats)
	case tensor.Int8:
		return tensor.FromData(dt, f.Shape, convertInts[int8](ints))
	case tensor.UInt8:
		return tensor.FromData(dt, f.Shape, convertInts[uint8](ints))
	case tensor.Int32:
		return tensor.FromData(dt, f.Shape, convertInts[int32](ints))
	case tensor.Int64:
		return tensor.FromData(dt, f.Shape, ints)
	}
	return nil, fmt.Errorf("fixture tensor: dtype %s not supported", dt)
}

// hexFloat32s decodes float32 values from the hex bit patterns every
// fixture and vector file here uses ("3f800000" is 1); an error names the
// element as hex[i].
func hexFloat32s(hex []string) ([]float32, error) {
	out := make([]float32, len(hex))
	for i, h := range hex {
		b, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return nil, fmt.Errorf("hex[%d]: %w", i, err)
		}
		out[i] = math.Float32frombits(uint32(b))
	}
	return out, nil
}

// float32Values returns a vector tensor's float32 values: decoded from its
// hex bit patterns when it has them (hex != nil), else vals converted one
// by one with conv (which may fail t for a value of the wrong kind).
func float32Values[V any](t *testing.T, hex []string, vals []V, conv func(i int, v V) float32) []float32 {
	t.Helper()
	if hex != nil {
		out, err := hexFloat32s(hex)
		require.NoError(t, err)
		return out
	}
	out := make([]float32, len(vals))
	for i, v := range vals {
		out[i] = conv(i, v)
	}
	return out
}

// float32Tensor builds a float32 tensor of shape from a vector tensor whose
// recorded dtype must be "float32"; values is read only after that check.
func float32Tensor(t *testing.T, dtype string, shape []int, values func(*testing.T) []float32) *tensor.Tensor {
	t.Helper()
	require.Equal(t, "float32", dtype)
	x, err := tensor.FromData(tensor.Float32, shape, values(t))
	require.NoError(t, err)
	return x
}

func convertInts[T int8 | uint8 | int32](in []int64) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return out
}

// fixtureOutputs is a <stem>.outputs.json file: inputs, float outputs and
// per-mode results. Mode sections are kept raw; see modeOutputs.
type fixtureOutputs struct {
	Model  string `json:"model"`
	Inputs struct {
		Calibration []fixtureTensor `json:"calibration"`
		Eval        []fixtureTensor `json:"eval"`
	} `json:"inputs"`
	Float struct {
		Outputs []fixtureTensor `json:"outputs"`
	} `json:"float"`
	Modes map[string]json.RawMessage `json:"-"`
}

func loadFixtureOutputs(t *testing.T, stem string) *fixtureOutputs {
	t.Helper()
	return readOutputs(t, pt2eDir, stem)
}

// readOutputs reads dir/stem.outputs.json: the inputs and outputs
// PyTorch recorded, with every mode's section kept raw in Modes.
func readOutputs(t *testing.T, dir, stem string) *fixtureOutputs {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, stem+".outputs.json"))
	require.NoError(t, err)
	var out fixtureOutputs
	require.NoError(t, json.Unmarshal(data, &out), "%s.outputs.json", stem)
	require.NoError(t, json.Unmarshal(data, &out.Modes))
	return &out
}

// modeTensors returns the tensor list stored at section.key (for example
// "static"."outputs" or "int4"."converted_outputs").
func (o *fixtureOutputs) modeTensors(t *testing.T, section, key string) []fixtureTensor {
	t.Helper()
	raw, ok := o.Modes[section]
	require.True(t, ok, "outputs file has no %q section", section)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	v, ok := m[key]
	require.True(t, ok, "outputs section %q has no %q", section, key)
	var ts []fixtureTensor
	require.NoError(t, json.Unmarshal(v, &ts))
	return ts
}

func mustTensor(t *testing.T, f *fixtureTensor) *tensor.Tensor {
	t.Helper()
	x, err := f.Tensor()
	require.NoError(t, err)
	return x
}

// oneEach makes one single-input batch of each recorded tensor, in order.
func oneEach(t *testing.T, fs []fixtureTensor) [][]*tensor.Tensor {
	t.Helper()
	var batches [][]*tensor.Tensor
	for i := range fs {
		batches = append(batches, []*tensor.Tensor{mustTensor(t, &fs[i])})
	}
	return batches
}

// readUnlifted reads the .pt2 at path and returns its graph, unlifted.
func readUnlifted(t *testing.T, path string) *fxgraph.Graph {
	t.Helper()
	_, g := readProgramUnlifted(t, path)
	return g
}

// readProgramUnlifted reads the .pt2 at path and returns it and its graph, unlifted.
func readProgramUnlifted(t *testing.T, path string) (*pt2.Program, *fxgraph.Graph) {
	t.Helper()
	p, err := pt2.ReadFile(path, nil)
	require.NoError(t, err, path)
	g, err := p.Unlifted()
	require.NoError(t, err, path)
	return p, g
}

// programInputs lays out the placeholder values of a program read by pt2:
// the user inputs in order, and for lifted parameters, buffers and
// constants the tensors stored as graph attributes.
func programInputs(t *testing.T, p *pt2.Program, user []*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	var out []*tensor.Tensor
	next := 0
	for _, in := range p.Signature.Inputs {
		if in.Kind == pt2.UserInput {
			require.Less(t, next, len(user), "program wants more user inputs than given")
			out = append(out, user[next])
			next++
			continue
		}
		v, ok := p.Graph.Attr(in.Target)
		require.True(t, ok, "input %s: no attribute %q", in.Name, in.Target)
		tt, ok := v.(*tensor.Tensor)
		require.True(t, ok, "input %s: attribute %q is %T, not a tensor", in.Name, in.Target, v)
		out = append(out, tt)
	}
	require.Equal(t, len(user), next, "program takes %d user inputs", next)
	return out
}

// fileStems globs dir for files named STEM+suffix, requires at least one
// (msgAndArgs describe the failure) and returns their stems in file-name
// order.
func fileStems(t *testing.T, dir, suffix string, msgAndArgs ...any) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	require.NoError(t, err)
	require.NotEmpty(t, files, msgAndArgs...)
	var stems []string
	for _, f := range files {
		stems = append(stems, strings.TrimSuffix(filepath.Base(f), suffix))
	}
	return stems
}

// stemAndKind splits "mlp.static.pt2" into ("mlp", "static") and
// "int4_linear_g8.converted.pt2" into ("int4_linear_g8", "converted").
func stemAndKind(path string) (string, string) {
	base := strings.TrimSuffix(filepath.Base(path), ".pt2")
	stem, kind, _ := strings.Cut(base, ".")
	return stem, kind
}
