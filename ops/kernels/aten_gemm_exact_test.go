package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Powers of two used by the hand calculations below: products of them are
// exact, so only the order of the additions decides the result.
var (
	p12 = float32(math.Ldexp(1, -12)) // 2^-12; 2^-12·2^-12 = 2^-24, half an ulp of 1
	u12 = float32(1 + math.Ldexp(1, -12))
)

// TestGemmSummationOrder pins the order every float32 product sums in,
// with values where another order gives other bits.
func TestGemmSummationOrder(t *testing.T) {
	one := float32(1)
	onePlusUlp := math.Float32frombits(0x3f800001) // 1 + 2^-23
	tests := []struct {
		name string
		f    func() (*tensor.Tensor, error)
		want []float32
	}{
		// Products 1, 2^-24, 2^-24 summed in k order: 1 + 2^-24 ties to
		// even (1), and again: 1. Summing the small products first would
		// give 1 + 2^-23.
		{"mm sequential in k", func() (*tensor.Tensor, error) {
			return kernels.Mm(tensor.F32([]int{1, 3}, 1, p12, p12), tensor.F32([]int{3, 1}, 1, p12, p12))
		}, []float32{one}},
		{"bmm sequential in k", func() (*tensor.Tensor, error) {
			return kernels.Bmm(tensor.F32([]int{1, 1, 3}, 1, p12, p12), tensor.F32([]int{1, 3, 1}, 1, p12, p12))
		}, []float32{one}},
		{"matmul dot sequential in k", func() (*tensor.Tensor, error) {
			return kernels.Matmul(tensor.F32([]int{3}, 1, p12, p12), tensor.F32([]int{3}, 1, p12, p12))
		}, []float32{one}},
		{"linear without bias sequential in k", func() (*tensor.Tensor, error) {
			return kernels.Linear(tensor.F32([]int{1, 3}, 1, p12, p12), tensor.F32([]int{1, 3}, 1, p12, p12), nil)
		}, []float32{one}},
		// Products -1 and (1+2^-12)² = 1 + 2^-11 + 2^-24. Rounded on its own
		// the second is 1 + 2^-11 (tie to even), so the sum is 2^-11; a
		// fused multiply-add would keep 2^-11 + 2^-24.
		{"mm rounds each product (no FMA)", func() (*tensor.Tensor, error) {
			return kernels.Mm(tensor.F32([]int{1, 2}, 1, u12), tensor.F32([]int{2, 1}, -1, u12))
		}, []float32{float32(math.Ldexp(1, -11))}},
		{"linear rounds each product (no FMA)", func() (*tensor.Tensor, error) {
			return kernels.Linear(tensor.F32([]int{1, 2}, 1, u12), tensor.F32([]int{1, 2}, -1, u12), nil)
		}, []float32{float32(math.Ldexp(1, -11))}},
		// Bias 1 and products 2^-24, 2^-24. Bias last: 2^-23 + 1 = 1 + 2^-23.
		// Bias first: 1 + 2^-24 = 1, and again 1.
		{"linear adds the bias last", func() (*tensor.Tensor, error) {
			return kernels.Linear(tensor.F32([]int{1, 2}, p12, p12), tensor.F32([]int{1, 2}, p12, p12), tensor.F32([]int{1}, 1))
		}, []float32{onePlusUlp}},
		{"linear 3-D input adds the bias last", func() (*tensor.Tensor, error) {
			return kernels.Linear(tensor.F32([]int{1, 1, 2}, p12, p12), tensor.F32([]int{1, 2}, p12, p12), tensor.F32([]int{1}, 1))
		}, []float32{onePlusUlp}},
		{"addmm with a transposed mat2 adds self last", func() (*tensor.Tensor, error) {
			w := tensor.F32([]int{2, 2}, p12, p12, 0, 0)
			wt, err := w.Transpose(0, 1) // mat2 = w.t(), as linear passes it
			if err != nil {
				return nil, err
			}
			return kernels.Addmm(tensor.F32([]int{1}, 1), tensor.F32([]int{1, 2}, p12, p12), wt, 1, 1)
		}, []float32{onePlusUlp, one}}, // column 1: 1 + 0
		{"addmm with a contiguous mat2 starts from self", func() (*tensor.Tensor, error) {
			return kernels.Addmm(tensor.F32([]int{1}, 1), tensor.F32([]int{1, 2}, p12, p12), tensor.F32([]int{2, 2}, p12, 0, p12, 0), 1, 1)
		}, []float32{one, one}},
		{"conv1d starts from the bias", func() (*tensor.Tensor, error) {
			p, err := kernels.NewConvParams(1, []int{1}, []int{0}, []int{1}, 1)
			if err != nil {
				return nil, err
			}
			return kernels.ConvNd(1, tensor.F32([]int{1, 2, 1}, p12, p12), tensor.F32([]int{1, 2, 1}, p12, p12), tensor.F32([]int{1}, 1), p)
		}, []float32{one}},
		// The same without a bias: 2^-24 + 2^-24 = 2^-23.
		{"conv1d without bias", func() (*tensor.Tensor, error) {
			p, err := kernels.NewConvParams(1, []int{1}, []int{0}, []int{1}, 1)
			if err != nil {
				return nil, err
			}
			return kernels.ConvNd(1, tensor.F32([]int{1, 2, 1}, p12, p12), tensor.F32([]int{1, 2, 1}, p12, p12), nil, p)
		}, []float32{float32(math.Ldexp(1, -23))}},
		// Conv sums over (channel, kernel tap). Products by channel and tap:
		// c0 (2^-24, 1), c1 (2^-24, 0). Channel by channel: 2^-24 + 1 = 1
		// (tie to even), + 2^-24 = 1, + 0 = 1. Tap by tap (channels-last
		// order) would give 2^-24 + 2^-24 = 2^-23, + 1 = 1 + 2^-23.
		{"conv1d sums channel by channel", func() (*tensor.Tensor, error) {
			p, err := kernels.NewConvParams(1, []int{1}, []int{0}, []int{1}, 1)
			if err != nil {
				return nil, err
			}
			x := tensor.F32([]int{1, 2, 2}, p12, 1, p12, 0)
			w := tensor.F32([]int{1, 2, 2}, p12, 1, p12, 1)
			return kernels.ConvNd(1, x, w, nil, p)
		}, []float32{one}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f()
			require.NoError(t, err)
			requireBits(t, tt.want, got)
		})
	}
}

// TestGemmNonContiguous runs the products on transposed and sliced views
// and requires the bits of the contiguous computation's hand result.
func TestGemmNonContiguous(t *testing.T) {
	// aT holds [1, p12, p12] in its first column: a = aT.t() is [1, 3]
	// with strides (1, 2).
	aT := tensor.F32([]int{3, 2}, 1, 7, p12, 7, p12, 7)
	a, err := aT.Transpose(0, 1)
	require.NoError(t, err)
	a, err = a.Slice(0, 0, 1, 1)
	require.NoError(t, err)
	require.False(t, a.IsContiguous())
	b := tensor.F32([]int{3, 1}, 1, p12, p12)

	got, err := kernels.Mm(a, b)
	require.NoError(t, err)
	requireBits(t, []float32{1}, got) // sequential in k, as in TestGemmSummationOrder

	got, err = kernels.Linear(a, tensor.F32([]int{1, 3}, 1, p12, p12), tensor.F32([]int{1}, 0.5))
	require.NoError(t, err)
	requireBits(t, []float32{1.5}, got) // 1 + 0.5, bias last

	// A non-contiguous 3-D input goes through matmul and add_: bias last.
	x3, err := tensor.F32([]int{2, 1, 2}, p12, 5, p12, 5).Permute(1, 2, 0) // [1, 2, 2]: [[p12, p12], [5, 5]]
	require.NoError(t, err)
	require.False(t, x3.IsContiguous())
	got, err = kernels.Linear(x3, tensor.F32([]int{1, 2}, p12, p12), tensor.F32([]int{1}, 1))
	require.NoError(t, err)
	// Row 0: 2^-23 + 1; row 1: 5·2^-12 + 5·2^-12 = 10·2^-12, + 1.
	requireBits(t, []float32{math.Float32frombits(0x3f800001), float32(1 + 10*math.Ldexp(1, -12))}, got)
}

// naiveSeq returns, for a [m, k] and b [k, n] row-major, the [m, n] sums
// start[i, j] + a[i, 0]·b[0, j] + ... in k order, each product and sum
// rounded to float32: the reference order, in the simplest loop.
func naiveSeq(a, b, start []float32, m, k, n int) []float32 {
	out := make([]float32, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := float32(0)
			if start != nil {
				acc = start[i*n+j]
			}
			for l := 0; l < k; l++ {
				acc = acc + float32(a[i*k+l]*b[l*n+j])
			}
			out[i*n+j] = acc
		}
	}
	return out
}

// TestGemmBlockedMatchesNaive checks the register-blocked, goroutine-split
// loops against naiveSeq on sizes that leave partial blocks and cross the
// parallel threshold.
func TestGemmBlockedMatchesNaive(t *testing.T) {
	sizes := []struct{ m, k, n int }{{1, 1, 1}, {3, 5, 7}, {4, 8, 4}, {9, 17, 6}, {37, 300, 53}, {130, 64, 5}}
	for _, sz := range sizes {
		m, k, n := sz.m, sz.k, sz.n
		t.Run(formatSize(m, k, n), func(t *testing.T) {
			av, bv, biasv := lcg(m*k, 21), lcg(k*n, 22), lcg(n, 23)
			a := tensor.F32([]int{m, k}, av...)
			b := tensor.F32([]int{k, n}, bv...)
			got, err := kernels.Mm(a, b)
			require.NoError(t, err)
			requireBits(t, naiveSeq(av, bv, nil, m, k, n), got)

			// Linear: w = bᵀ stored [n, k]; the bias is added last.
			wv := make([]float32, n*k)
			for l := 0; l < k; l++ {
				for j := 0; j < n; j++ {
					wv[j*k+l] = bv[l*n+j]
				}
			}
			got, err = kernels.Linear(a, tensor.F32([]int{n, k}, wv...), tensor.F32([]int{n}, biasv...))
			require.NoError(t, err)
			want := naiveSeq(av, bv, nil, m, k, n)
			for i := range want {
				want[i] += biasv[i%n]
			}
			requireBits(t, want, got)

			// Addmm with a contiguous mat2 starts from self.
			start := make([]float32, m*n)
			for i := range start {
				start[i] = biasv[i%n]
			}
			got, err = kernels.Addmm(tensor.F32([]int{n}, biasv...), a, b, 1, 1)
			require.NoError(t, err)
			requireBits(t, naiveSeq(av, bv, start, m, k, n), got)
		})
	}
}

func formatSize(m, k, n int) string {
	return "m" + itoa(m) + "_k" + itoa(k) + "_n" + itoa(n)
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

// TestConvMatchesNaive checks a strided, padded, dilated conv2d against a
// direct loop that starts each output from its bias and adds the taps in
// (channel, kernel row, kernel column) order, padding taps included as zero
// products. One image, one group and a small input keep it on ATen's
// native kernel (PyTorch sends batches and grouped convolutions to oneDNN:
// see conv_onednn_test.go).
func TestConvMatchesNaive(t *testing.T) {
	const N, C, H, W, O, G, K = 1, 6, 9, 8, 4, 1, 3
	const stride, pad, dil = 2, 1, 2
	xv, wv, bv := lcg(N*C*H*W, 31), lcg(O*(C/G)*K*K, 32), lcg(O, 33)
	got := conv2d(t, tensor.F32([]int{N, C, H, W}, xv...), tensor.F32([]int{O, C / G, K, K}, wv...),
		tensor.F32([]int{O}, bv...), []int{stride}, []int{pad}, []int{dil}, G)
	Ho := (H+2*pad-dil*(K-1)-1)/stride + 1
	Wo := (W+2*pad-dil*(K-1)-1)/stride + 1
	require.Equal(t, []int{N, O, Ho, Wo}, got.Shape())
	var want []float32
	for n := 0; n < N; n++ {
		for o := 0; o < O; o++ {
			g := o / (O / G)
			for oy := 0; oy < Ho; oy++ {
				for ox := 0; ox < Wo; ox++ {
					acc := bv[o]
					for c := 0; c < C/G; c++ {
						for i := 0; i < K; i++ {
							for j := 0; j < K; j++ {
								y, xx := oy*stride-pad+i*dil, ox*stride-pad+j*dil
								v := float32(0)
								if y >= 0 && y < H && xx >= 0 && xx < W {
									v = xv[((n*C+g*(C/G)+c)*H+y)*W+xx]
								}
								acc = acc + float32(v*wv[((o*(C/G)+c)*K+i)*K+j])
							}
						}
					}
					want = append(want, acc)
				}
			}
		}
	}
	requireBits(t, want, got)
}
