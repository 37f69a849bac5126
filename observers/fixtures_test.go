package observers_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops/tensor"
)

// fixtureDir holds torchao's pt2e fixtures (PyTorch 2.14.1 + torchao); every
// *.outputs.json in it is checked.
const fixtureDir = "../tests/testdata/pt2e"

// fxT is a tensor of the fixture files: values as JSON doubles, float32 bit
// patterns in hex.
type fxT struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
	Hex    []string  `json:"hex"`
}

func (x *fxT) f32(t *testing.T) []float32 {
	t.Helper()
	out := make([]float32, len(x.Values))
	for i, v := range x.Values {
		out[i] = float32(v)
		if x.Hex != nil {
			u, err := strconv.ParseUint(x.Hex[i], 16, 32)
			require.NoError(t, err)
			out[i] = math.Float32frombits(uint32(u))
		}
	}
	return out
}

type fxObserver struct {
	Class     string   `json:"class"`
	DType     string   `json:"dtype"`
	QScheme   string   `json:"qscheme"`
	QuantMin  *int64   `json:"quant_min"`
	QuantMax  *int64   `json:"quant_max"`
	Eps       *float64 `json:"eps"`
	Reduce    bool     `json:"reduce_range"`
	Bins      int      `json:"bins"`
	MinVal    *fxT     `json:"min_val"`
	MaxVal    *fxT     `json:"max_val"`
	Histogram *fxT     `json:"histogram"`
	Scale     *fxT     `json:"scale"`
	ZeroPoint *fxT     `json:"zero_point"`
	TargetDT  string   `json:"target_dtype"`
	Mapping   string   `json:"mapping_type"`
	BlockSize []int    `json:"block_size"`
	GraphUses []struct {
		Input string `json:"input"`
	} `json:"graph_uses"`
}

type fxOutputs struct {
	Inputs struct {
		Calibration []fxT `json:"calibration"`
	} `json:"inputs"`
	Modes map[string]json.RawMessage `json:"-"`
}

func loadFixtureObservers(t *testing.T) (names []string, obs map[string]fxObserver, calib map[string][]fxT) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.outputs.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no fixtures in %s", fixtureDir)
	obs = map[string]fxObserver{}
	calib = map[string][]fxT{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &top))
		var out fxOutputs
		require.NoError(t, json.Unmarshal(data, &out))
		stem := strings.TrimSuffix(filepath.Base(f), ".outputs.json")
		calib[stem] = out.Inputs.Calibration
		for _, mode := range []string{"static", "dynamic", "int4"} {
			raw, ok := top[mode]
			if !ok {
				continue
			}
			var m struct {
				Observers map[string]fxObserver `json:"observers"`
			}
			require.NoError(t, json.Unmarshal(raw, &m))
			for name, o := range m.Observers {
				key := stem + "/" + mode + "/" + name
				names = append(names, key)
				obs[key] = o
			}
		}
	}
	slices.Sort(names)
	return names, obs, calib
}

func newFixtureHistogram(t *testing.T, o fxObserver) *observers.HistogramObserver {
	t.Helper()
	dt, err := observers.ParseDType(o.DType)
	require.NoError(t, err)
	qs, err := observers.ParseQScheme(o.QScheme)
	require.NoError(t, err)
	cfg := observers.Config{DType: dt, QScheme: qs, QuantMin: o.QuantMin, QuantMax: o.QuantMax, ReduceRange: o.Reduce, Bins: o.Bins}
	if o.Eps != nil {
		cfg.Eps = *o.Eps
	}
	h, err := observers.NewHistogramObserver(cfg)
	require.NoError(t, err)
	return h
}

func requireBits(t *testing.T, what string, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			assert.Failf(t, "float32 mismatch", "%s[%d]: want %g (%08x), got %g (%08x)", what, i,
				want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
		}
	}
}

func checkFixtureQParams(t *testing.T, o fxObserver, qp observers.QParams) {
	t.Helper()
	sv, err := tensor.Data[float32](qp.Scale)
	require.NoError(t, err)
	requireBits(t, "scale", o.Scale.f32(t), sv)
	assert.Equal(t, o.Scale.Shape, qp.Scale.Shape(), "scale shape")
	assert.Equal(t, o.ZeroPoint.DType, qp.ZeroPoint.DType().String(), "zero_point dtype")
	zv, err := qp.ZeroPoint.Float64s()
	require.NoError(t, err)
	assert.Equal(t, o.ZeroPoint.Values, zv, "zero_point")
}

// runFixtureObservers runs check as a subtest, named after the observer,
// for every fixture observer of class (with the calibration batches by
// fixture stem), and fails when the fixtures have none.
func runFixtureObservers(t *testing.T, class string, check func(t *testing.T, name string, o fxObserver, calib map[string][]fxT)) {
	t.Helper()
	names, obs, calib := loadFixtureObservers(t)
	n := 0
	for _, name := range names {
		o := obs[name]
		if o.Class != class {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) { check(t, name, o, calib) })
	}
	require.NotZero(t, n, "no %s in the fixtures", class)
}

// TestHistogramFixtures checks every HistogramObserver of the fixtures:
// qparams from the recorded histogram, min and max; and, for observers of
// a graph input, the histogram itself from the calibration batches.
func TestHistogramFixtures(t *testing.T) {
	runFixtureObservers(t, "HistogramObserver", func(t *testing.T, name string, o fxObserver, calib map[string][]fxT) {
		h := newFixtureHistogram(t, o)
		require.NoError(t, h.SetState(o.Histogram.f32(t), o.MinVal.f32(t)[0], o.MaxVal.f32(t)[0]))
		qp, err := h.CalculateQParams()
		require.NoError(t, err)
		checkFixtureQParams(t, o, qp)

		if len(o.GraphUses) != 1 || o.GraphUses[0].Input != "%x" {
			return
		}
		stem := strings.SplitN(name, "/", 2)[0]
		h2 := newFixtureHistogram(t, o)
		for _, b := range calib[stem] {
			x, err := tensor.FromData(tensor.Float32, b.Shape, b.f32(t))
			require.NoError(t, err)
			_, err = h2.Forward([]any{x})
			require.NoError(t, err)
		}
		hist, lo, hi := h2.State()
		requireBits(t, "min_val", o.MinVal.f32(t), []float32{lo})
		requireBits(t, "max_val", o.MaxVal.f32(t), []float32{hi})
		requireBits(t, "histogram", o.Histogram.f32(t), hist)
		qp2, err := h2.CalculateQParams()
		require.NoError(t, err)
		checkFixtureQParams(t, o, qp2)
	})
}

// TestAffineFixtures checks the AffineQuantizedMinMaxObserver qparams of
// the fixtures from their recorded min/max.
func TestAffineFixtures(t *testing.T) {
	runFixtureObservers(t, "AffineQuantizedMinMaxObserver", func(t *testing.T, _ string, o fxObserver, _ map[string][]fxT) {
		td, err := tensor.ParseDType(o.TargetDT)
		require.NoError(t, err)
		mt, err := observers.ParseMappingType(o.Mapping)
		require.NoError(t, err)
		c := observers.AffineConfig{MappingType: mt, TargetDType: td, Granularity: observers.PerTensor{}, QuantMin: o.QuantMin, QuantMax: o.QuantMax, Eps: o.Eps}
		qp, err := observers.ChooseQParamsAffineWithMinMax(o.MinVal.f32(t), o.MaxVal.f32(t), o.MinVal.Shape, c, *o.QuantMin, *o.QuantMax)
		require.NoError(t, err)
		checkFixtureQParams(t, o, qp)
	})
}
