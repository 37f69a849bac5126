package convert_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/convert"
	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/observers"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parallelCase is a fixture and the quantizer that prepares it.
type parallelCase struct {
	stem string
	q    func() convert.Quantizer
}

func xnnpackPerChannel() convert.Quantizer {
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	return convert.NewXNNPACKQuantizer(convert.SymmetricQuantizationConfig(o))
}

// xnnpackMovingAverage is the XNNPACK config with
// MovingAverageMinMaxObserver on activations, whose statistics depend on
// the order of the batches.
func xnnpackMovingAverage() convert.Quantizer {
	o := convert.DefaultSymmetricConfigOptions()
	o.PerChannel = true
	c := convert.SymmetricQuantizationConfig(o)
	c.InputActivation.Observer = convert.MovingAverageMinMaxObserverCtor(observers.Config{})
	return convert.NewXNNPACKQuantizer(c)
}

var parallelCases = []parallelCase{
	{"cnn", xnnpackPerChannel},
	{"cnn-moving-average", xnnpackMovingAverage},
	{"groupnorm", xnnpackPerChannel},
	{"mlp", xnnpackPerChannel},
	{"int4_linear_g16", func() convert.Quantizer { return convert.Int4GroupwiseQuantizer{GroupSize: 16} }},
}

// preparedFixture loads a fixture and prepares it with c's quantizer.
func preparedFixture(t *testing.T, c parallelCase) *fxgraph.Graph {
	t.Helper()
	stem, _, _ := strings.Cut(c.stem, "-")
	g := loadFloat(t, stem)
	require.NoError(t, convert.Prepare(g, c.q()))
	return g
}

// scaledBatches draws n batches for g's placeholders, standard normal
// values times 1+b for batch b, so that the observers' statistics (a
// HistogramObserver's bins above all) depend on the order of the batches.
func scaledBatches(t *testing.T, g *fxgraph.Graph, n int) [][]*tensor.Tensor {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 3))
	var out [][]*tensor.Tensor
	for b := range n {
		var batch []*tensor.Tensor
		for _, ph := range g.Placeholders() {
			tt, ok := ph.Type().(ops.TensorType)
			require.True(t, ok && tt.Static(), "placeholder %s", ph.Name())
			shape := make([]int, len(tt.Shape))
			numel := 1
			for i, d := range tt.Shape {
				shape[i] = int(d)
				numel *= int(d)
			}
			v := make([]float32, numel)
			for i := range v {
				v[i] = float32(r.NormFloat64() * float64(1+b))
			}
			batch = append(batch, tensor.MustFromData(tensor.Float32, shape, v))
		}
		out = append(out, batch)
	}
	return out
}

// qparamBytes is every observer's qparams of g, as bytes by attribute.
func qparamBytes(t *testing.T, g *fxgraph.Graph) map[string][2][]byte {
	t.Helper()
	out := map[string][2][]byte{}
	for _, name := range g.AttrNames() {
		v, _ := g.Attr(name)
		o, ok := v.(observers.Observer)
		if !ok {
			continue
		}
		qp, err := o.CalculateQParams()
		if err != nil { // a placeholder observer has none
			out[name] = [2][]byte{[]byte(err.Error())}
			continue
		}
		out[name] = [2][]byte{
			append([]byte(qp.Scale.DType().String()+":"), qp.Scale.Contiguous().Bytes()...),
			append([]byte(qp.ZeroPoint.DType().String()+":"), qp.ZeroPoint.Contiguous().Bytes()...),
		}
	}
	return out
}

// TestCalibrateParallelBitIdentical: with several workers every
// observer's qparams are, byte for byte, those of a one-worker run, and
// the converted graphs print the same. The same batches in reverse order
// give other qparams, so the batch order the turnstiles keep matters.
func TestCalibrateParallelBitIdentical(t *testing.T) {
	for _, c := range parallelCases {
		t.Run(c.stem, func(t *testing.T) {
			one := preparedFixture(t, c)
			batches := scaledBatches(t, one, 7)
			require.NoError(t, convert.CalibrateWithOptions(one, batches, convert.CalibrateOptions{Workers: 1}))
			want := qparamBytes(t, one)
			require.NotEmpty(t, want)

			for _, workers := range []int{2, 3, 8} {
				many := preparedFixture(t, c)
				var seen []int
				require.NoError(t, convert.CalibrateWithOptions(many, batches, convert.CalibrateOptions{
					Workers:  workers,
					Progress: func(i, n int) { seen = append(seen, i); assert.Equal(t, len(batches), n) },
				}))
				assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6}, seen, "progress in batch order")
				got := qparamBytes(t, many)
				require.Equal(t, len(want), len(got))
				for name, w := range want {
					assert.Equal(t, w, got[name], "workers %d: observer %s", workers, name)
				}
				if workers == 2 {
					require.NoError(t, convert.Convert(one, convert.ConvertOptions{}))
					require.NoError(t, convert.Convert(many, convert.ConvertOptions{}))
					assert.Equal(t, fxgraph.Format(one), fxgraph.Format(many))
				}
			}

			if c.stem == "cnn-moving-average" {
				rev := preparedFixture(t, c)
				reversed := slices.Clone(batches)
				slices.Reverse(reversed)
				require.NoError(t, convert.CalibrateWithOptions(rev, reversed, convert.CalibrateOptions{Workers: 1}))
				differ := 0
				for name, w := range qparamBytes(t, rev) {
					if !slices.Equal(w[0], want[name][0]) || !slices.Equal(w[1], want[name][1]) {
						differ++
					}
				}
				assert.NotZero(t, differ, "reversing the batches changes no qparam: the test would not see a reordering")
			}
		})
	}
}

// TestCalibrateParallelFailure: a batch whose observer fails (a NaN the
// graph computes, 0/0, makes the HistogramObserver fail) gives the error
// of a one-worker run, naming the first failing batch, and progress
// reports only the batches before it.
func TestCalibrateParallelFailure(t *testing.T) {
	hist := minmaxSpec()
	hist.Observer = convert.HistogramObserverCtor(observers.Config{})
	ok := tensor.MustFromData(tensor.Float32, []int{2}, []float32{1, 2})
	zero := tensor.MustFromData(tensor.Float32, []int{2}, []float32{0, 1})
	batches := [][]*tensor.Tensor{{ok, ok}, {ok, ok}, {ok, ok}, {zero, zero}, {ok, ok}, {zero, zero}, {ok, ok}}
	var msgs []string
	for _, workers := range []int{1, 2, 4} {
		g := divGraph(t, hist)
		var seen []int
		err := convert.CalibrateWithOptions(g, batches, convert.CalibrateOptions{Workers: workers, Progress: func(i, _ int) { seen = append(seen, i) }})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `calibrate: batch 3: observer "activation_post_process_0" of node "div_tensor": `)
		assert.Equal(t, []int{0, 1, 2}, seen, "workers %d", workers)
		msgs = append(msgs, err.Error())
	}
	assert.Equal(t, msgs[0], msgs[1])
	assert.Equal(t, msgs[0], msgs[2])
}
