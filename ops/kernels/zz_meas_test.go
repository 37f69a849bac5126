package kernels_test

import (
	"encoding/binary"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

func ulpd(a, b float32) int64 {
	ia, ib := int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b)))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	if ia > ib {
		return ia - ib
	}
	return ib - ia
}

func TestZZMeasure(t *testing.T) {
	dir := "/opt/torch-oracle/tmp/meas/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skip()
	}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".bin")
		raw, _ := os.ReadFile(dir + e.Name())
		n := len(raw) / 8
		x := make([]float32, n)
		want := make([]float32, n)
		for i := 0; i < n; i++ {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			want[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(n+i):]))
		}
		var got []float32
		rows := func(D int, f func(*tensor.Tensor) (*tensor.Tensor, error)) {
			for s := 0; s+D <= n; s += D {
				y, err := f(tensor.F32([]int{D}, x[s:s+D]...))
				if err != nil {
					t.Fatal(err)
				}
				d, _ := tensor.Data[float32](y)
				got = append(got, d...)
			}
		}
		D := 1000
		if strings.HasSuffix(name, "15") {
			D = 15
		}
		switch {
		case strings.HasPrefix(name, "gelu_strided"):
			buf := make([]float32, 2*n)
			for i := range x {
				buf[2*i] = x[i]
			}
			b := tensor.F32([]int{n, 2}, buf...)
			c, _ := b.Select(1, 0)
			y, _ := kernels.Gelu(c, "none")
			got, _ = tensor.Data[float32](y)
		case strings.HasPrefix(name, "gelu_tanh"):
			rows(D, func(t *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Gelu(t, "tanh") })
		case strings.HasPrefix(name, "gelu"):
			rows(D, func(t *tensor.Tensor) (*tensor.Tensor, error) { return kernels.Gelu(t, "none") })
		case strings.HasPrefix(name, "sigmoid"):
			rows(D, kernels.Sigmoid)
		case strings.HasPrefix(name, "silu"):
			rows(D, kernels.Silu)
		case name == "exp":
			rows(D, kernels.Exp)
		case name == "tanh":
			rows(D, kernels.Tanh)
		case name == "erf":
			rows(D, kernels.Erf)
		case strings.HasPrefix(name, "pow_"):
			var e float64
			switch name {
			case "pow_1.5":
				e = 1.5
			case "pow_-1.5":
				e = -1.5
			case "pow_0.3":
				e = 0.3
			case "pow_2.5":
				e = 2.5
			}
			rows(D, func(t *tensor.Tensor) (*tensor.Tensor, error) { return kernels.PowScalar(t, e) })
		case strings.Contains(name, "softmax_last"):
			var L int
			for _, c := range strings.TrimLeft(name, "log_softmax_last") {
				L = L*10 + int(c-'0')
			}
			f := kernels.Softmax
			if strings.HasPrefix(name, "log_") {
				f = kernels.LogSoftmax
			}
			y, err := f(tensor.F32([]int{n / L, L}, x...), -1)
			if err != nil {
				t.Fatal(err)
			}
			got, _ = tensor.Data[float32](y)
		case strings.Contains(name, "softmax_mid"):
			f := kernels.Softmax
			if strings.HasPrefix(name, "log_") {
				f = kernels.LogSoftmax
			}
			y, _ := f(tensor.F32([]int{64, 10, 37}, x...), 1)
			got, _ = tensor.Data[float32](y)
		default:
			t.Logf("%s: skipped", name)
			continue
		}
		var bad, worst int64
		var worstAbs float64
		var at float32
		for i := range got {
			if got[i] != got[i] && want[i] != want[i] {
				continue
			}
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				bad++
				if d := ulpd(got[i], want[i]); d > worst {
					worst, at = d, x[i]
				}
				worstAbs = math.Max(worstAbs, math.Abs(float64(got[i])-float64(want[i])))
			}
		}
		t.Logf("%-22s n=%7d differ=%6d worst=%d ULP (at x=%v) max|diff|=%.3g", name, len(got), bad, worst, at, worstAbs)
	}
}
