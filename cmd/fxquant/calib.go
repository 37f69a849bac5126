package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// inputSpec is one user input of a program: its placeholder's name, dtype
// and static shape.
type inputSpec struct {
	name  string
	dtype tensor.DType
	// shape is the input's shape; a symbolic dimension (sym[i] != "")
	// holds its size at the symbols' hints, the size random batches take.
	shape []int
	sym   []string
}

func (s inputSpec) String() string {
	return s.name + ": " + (ops.TensorType{Shape: s.typeShape(), Elem: ops.Scalar{DType: s.dtype}, Syms: s.sym}).String()
}

// typeShape is the shape of the input's type: DynamicDim where symbolic.
func (s inputSpec) typeShape() []int64 {
	out := ops.ShapeInts(s.shape)
	for i, sym := range s.sym {
		if sym != "" {
			out[i] = ops.DynamicDim
		}
	}
	return out
}

// shapeText prints the shape as Go prints ints ([4 32]), or with its
// symbols ([s77, 16]) when it has any.
func (s inputSpec) shapeText() string {
	if s.sym == nil {
		return fmt.Sprint(s.shape)
	}
	t := ops.TensorType{Shape: s.typeShape(), Syms: s.sym}.String()
	return t[strings.IndexByte(t, '['):]
}

// fits reports whether a tensor of the given shape fits the input: same
// rank, the static dimensions equal. Symbolic sizes are checked against
// their ranges when the batch runs (convert.Calibrate).
func (s inputSpec) fits(shape []int) bool {
	if len(shape) != len(s.shape) {
		return false
	}
	for i, d := range s.shape {
		if (i >= len(s.sym) || s.sym[i] == "") && shape[i] != d {
			return false
		}
	}
	return true
}

// userInputs returns the placeholders of an unlifted graph (its user
// inputs) with their tensor types. A symbolic dimension (a program
// exported with torch.export.Dim) must be an expression of the graph's
// symbols that have hints: random batches take its size at the hints.
func userInputs(g *fxgraph.Graph) ([]inputSpec, error) {
	var specs []inputSpec
	hints := map[string]int64{}
	for _, s := range g.Symbols() {
		if s.Hint != nil {
			hints[s.Name] = *s.Hint
		}
	}
	for _, ph := range g.Placeholders() {
		tt, ok := ph.TensorType()
		if !ok {
			return nil, fmt.Errorf("input %q has type %v, want a tensor type", ph.Name(), ph.Type())
		}
		shape := make([]int, len(tt.Shape))
		var sym []string
		for i, d := range tt.Shape {
			shape[i] = int(d)
			if d >= 0 {
				continue
			}
			if i >= len(tt.Syms) || tt.Syms[i] == "" {
				return nil, fmt.Errorf("input %q has type %v: dimension %d has no symbol", ph.Name(), tt, i)
			}
			e, err := ops.ParseSymExpr(tt.Syms[i])
			if err != nil {
				return nil, fmt.Errorf("input %q: dimension %d: %w", ph.Name(), i, err)
			}
			v, err := e.Eval(func(n string) (int64, bool) { h, ok := hints[n]; return h, ok })
			if err != nil || v < 0 {
				return nil, fmt.Errorf("input %q has type %v: dimension %d has no example size (the program records no hint)", ph.Name(), tt, i)
			}
			shape[i] = int(v)
			if sym == nil {
				sym = make([]string, len(tt.Shape))
			}
			sym[i] = tt.Syms[i]
		}
		specs = append(specs, inputSpec{name: ph.Name(), dtype: tt.DType(), shape: shape, sym: sym})
	}
	return specs, nil
}

// randomBatches returns n batches shaped like the inputs: standard normal
// floats (integers uniform in [0, 10)) from a PCG generator seeded with seed,
// so the same seed gives the same batches on every machine. The batches
// may take at most defaultCalibrationBudget bytes (see randomBatchesWithin).
func randomBatches(specs []inputSpec, n int, seed uint64) ([][]*tensor.Tensor, error) {
	return randomBatchesWithin(specs, n, seed, defaultCalibrationBudget)
}

// randomBatchesWithin is randomBatches whose batches may take at most
// budget bytes in all, checked before any is drawn; budget 0 means
// defaultCalibrationBudget.
func randomBatchesWithin(specs []inputSpec, n int, seed uint64, budget int64) ([][]*tensor.Tensor, error) {
	if budget == 0 {
		budget = defaultCalibrationBudget
	}
	if err := checkCalibrationBudget(specs, n, budget); err != nil {
		return nil, err
	}
	r := newRand(seed)
	batches := make([][]*tensor.Tensor, n)
	for b := range batches {
		for _, s := range specs {
			t, err := randomTensor(r, s)
			if err != nil {
				return nil, fmt.Errorf("input %q: %w", s.name, err)
			}
			batches[b] = append(batches[b], t)
		}
	}
	return batches, nil
}

// fromFloat64s builds a contiguous tensor of dtype d from float64 values.
func fromFloat64s(d tensor.DType, shape []int, vals []float64) (*tensor.Tensor, error) {
	return inputTensor(d, shape, len(vals), func(i int) float64 { return vals[i] })
}

// inputTensor builds a contiguous calibration input of dtype d with n
// elements, calling at(i) for element i in order and storing it straight
// in the tensor's storage; an integer dtype refuses a value it cannot
// hold.
func inputTensor(d tensor.DType, shape []int, n int, at func(i int) float64) (*tensor.Tensor, error) {
	switch d {
	case tensor.Float32:
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(at(i))
		}
		return tensor.FromData(d, shape, out)
	case tensor.Float64:
		out := make([]float64, n)
		for i := range out {
			out[i] = at(i)
		}
		return tensor.FromData(d, shape, out)
	case tensor.Int8:
		return intInput[int8](d, shape, n, at)
	case tensor.UInt8:
		return intInput[uint8](d, shape, n, at)
	case tensor.Int32:
		return intInput[int32](d, shape, n, at)
	case tensor.Int64:
		return intInput[int64](d, shape, n, at)
	}
	return nil, fmt.Errorf("dtype %s is not supported for calibration inputs; want float32, float64, int8, uint8, int32 or int64", d)
}

func intInput[T int8 | uint8 | int32 | int64](d tensor.DType, shape []int, n int, at func(int) float64) (*tensor.Tensor, error) {
	lo, hi, _ := d.IntRange()
	out := make([]T, n)
	for i := range out {
		v := at(i)
		if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
			return nil, fmt.Errorf("element %d is %v, which %s cannot hold", i, v, d)
		}
		out[i] = T(v)
	}
	return tensor.FromData(d, shape, out)
}

// castTo returns t converted to dtype d (t itself when it already has it).
func castTo(t *tensor.Tensor, d tensor.DType) (*tensor.Tensor, error) {
	if t.DType() == d {
		return t, nil
	}
	vals, err := t.Float64s()
	if err != nil {
		return nil, err
	}
	return fromFloat64s(d, t.Shape(), vals)
}

// loadBatches reads calibration batches from file: a .npy array whose first
// axis is the batch (one user input only), or JSON (see readJSONBatches).
// Each tensor is converted to its input's dtype and must have its shape.
func loadBatches(file string, specs []inputSpec) ([][]*tensor.Tensor, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decodeBatches(file, data, specs)
}

// decodeBatches is loadBatches on file's contents, data.
func decodeBatches(file string, data []byte, specs []inputSpec) ([][]*tensor.Tensor, error) {
	var batches [][]*tensor.Tensor
	var err error
	if strings.EqualFold(filepath.Ext(file), ".npy") || bytes.HasPrefix(data, npyMagic) {
		if len(specs) != 1 {
			return nil, fmt.Errorf("%s: a .npy file holds batches for one input, but the program has %d user inputs", file, len(specs))
		}
		t, err := readNPY(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if t.Dim() != len(specs[0].shape)+1 {
			return nil, fmt.Errorf("%s: array shape %v, want [N %s] (batches of input %s)", file, t.Shape(), strings.Trim(specs[0].shapeText(), "[]"), specs[0])
		}
		for i := range t.Size(0) {
			bt, err := t.Select(0, i)
			if err != nil {
				return nil, fmt.Errorf("%s: batch %d: %w", file, i, err)
			}
			batches = append(batches, []*tensor.Tensor{bt.Contiguous()})
		}
	} else {
		batches, err = readJSONBatches(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if len(batches) == 0 {
		return nil, fmt.Errorf("%s: no calibration batches", file)
	}
	if err := fitBatches(file, batches, specs); err != nil {
		return nil, err
	}
	return batches, nil
}

// fitBatches checks that every batch holds one tensor of a fitting shape
// per user input and casts each to its input's dtype, in place. where
// starts the messages (the file, and the part of it the batches are from).
func fitBatches(where string, batches [][]*tensor.Tensor, specs []inputSpec) error {
	for b, batch := range batches {
		if len(batch) != len(specs) {
			return fmt.Errorf("%s: batch %d has %d tensors, want %d (one per user input)", where, b, len(batch), len(specs))
		}
		for i, s := range specs {
			if !s.fits(batch[i].Shape()) {
				return fmt.Errorf("%s: batch %d, input %q: shape %v, want %s", where, b, s.name, batch[i].Shape(), s.shapeText())
			}
			t, err := castTo(batch[i], s.dtype)
			if err != nil {
				return fmt.Errorf("%s: batch %d, input %q: %w", where, b, s.name, err)
			}
			batch[i] = t
		}
	}
	return nil
}

// jsonTensor is a tensor in the encoding of the pt2e fixtures' outputs
// files: shape, dtype name, row-major values, and for float32 optionally the
// bit patterns as 8 hex digits.
type jsonTensor struct {
	Shape  []int             `json:"shape"`
	DType  string            `json:"dtype"`
	Values []json.RawMessage `json:"values"`
	Hex    []string          `json:"hex"`
}

// readJSONBatches decodes calibration batches from JSON: a list whose items
// are tensors (one input per batch) or lists of tensors (one per input),
// or a fixtures outputs file, whose inputs.calibration list is used.
func readJSONBatches(data []byte) ([][]*tensor.Tensor, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	var list []json.RawMessage
	switch top.(type) {
	case []any:
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
	case map[string]any:
		var f struct {
			Inputs struct {
				Calibration []json.RawMessage `json:"calibration"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
		if f.Inputs.Calibration == nil {
			return nil, errors.New("json: want a list of tensors, or an object with inputs.calibration")
		}
		list = f.Inputs.Calibration
	default:
		return nil, errors.New("json: want a list of tensors, or an object with inputs.calibration")
	}
	batches := make([][]*tensor.Tensor, 0, len(list))
	for b, raw := range list {
		raw = bytes.TrimSpace(raw)
		var batch []*tensor.Tensor
		if bytes.HasPrefix(raw, []byte("[")) {
			var items []jsonTensor
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("batch %d: %w", b, err)
			}
			for i, it := range items {
				t, err := it.tensor()
				if err != nil {
					return nil, fmt.Errorf("batch %d, tensor %d: %w", b, i, err)
				}
				batch = append(batch, t)
			}
		} else {
			var it jsonTensor
			if err := json.Unmarshal(raw, &it); err != nil {
				return nil, fmt.Errorf("batch %d: want a tensor object: %w", b, err)
			}
			t, err := it.tensor()
			if err != nil {
				return nil, fmt.Errorf("batch %d: %w", b, err)
			}
			batch = append(batch, t)
		}
		batches = append(batches, batch)
	}
	return batches, nil
}

// tensor decodes one jsonTensor. Float32 values come from hex when present,
// so they are exact.
func (j jsonTensor) tensor() (*tensor.Tensor, error) {
	if j.Shape == nil {
		return nil, errors.New("missing shape")
	}
	d, err := tensor.ParseDType(j.DType)
	if err != nil {
		return nil, fmt.Errorf("dtype %q: %w", j.DType, err)
	}
	for _, s := range j.Shape {
		if s < 0 {
			return nil, fmt.Errorf("shape %v has a negative size", j.Shape)
		}
	}
	n, err := tensor.CheckedNumel(j.Shape)
	if err != nil {
		return nil, err
	}
	if d == tensor.Float32 && j.Hex != nil {
		if len(j.Hex) != n {
			return nil, fmt.Errorf("hex has %d elements, want %d for shape %v", len(j.Hex), n, j.Shape)
		}
		out := make([]float32, n)
		for i, h := range j.Hex {
			bits, err := strconv.ParseUint(h, 16, 32)
			if err != nil || len(h) != 8 {
				return nil, fmt.Errorf("hex[%d] = %q, want 8 hex digits", i, h)
			}
			out[i] = math.Float32frombits(uint32(bits))
		}
		return tensor.FromData(d, slices.Clone(j.Shape), out)
	}
	if len(j.Values) != n {
		return nil, fmt.Errorf("values has %d elements, want %d for shape %v", len(j.Values), n, j.Shape)
	}
	vals := make([]float64, n)
	for i, raw := range j.Values {
		v, err := jsonNumber(raw)
		if err != nil {
			return nil, fmt.Errorf("values[%d]: %w", i, err)
		}
		vals[i] = v
	}
	return fromFloat64s(d, slices.Clone(j.Shape), vals)
}

// jsonNumber reads a JSON number, or one of the strings "NaN", "Infinity",
// "-Infinity" (as PyTorch's JSON writers spell them).
func jsonNumber(raw json.RawMessage) (float64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		switch s {
		case "NaN", "nan":
			return math.NaN(), nil
		case "Infinity", "inf":
			return math.Inf(1), nil
		case "-Infinity", "-inf":
			return math.Inf(-1), nil
		}
		return 0, fmt.Errorf("want a number, got %q", s)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("want a number, got %s", raw)
	}
	return f, nil
}
