package kernels_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops/kernels"
	"github.com/fxquant/fxquant/ops/tensor"
)

// onednnCase is one convolution of testdata/onednn/onednn_conv_avx2.json
// (see gen_onednn_conv.py there): its shape, PyTorch's backend, the oneDNN
// implementation ONEDNN_VERBOSE named, and PyTorch's output bits.
type onednnCase struct {
	Model    string `json:"model"`
	Input    []int  `json:"input"`
	Weight   []int  `json:"weight"`
	Stride   []int  `json:"stride"`
	Padding  []int  `json:"padding"`
	Dilation []int  `json:"dilation"`
	Groups   int    `json:"groups"`
	Bias     bool   `json:"bias"`
	Backend  string `json:"backend"`
	Impl     string `json:"impl"`
	Seed     uint32 `json:"seed"`
	Shape    []int  `json:"shape"`
	Out      string `json:"out"`
}

type onednnDoc struct {
	Format   string         `json:"format"`
	CPUISA   string         `json:"cpu_isa"`
	ZooCount map[string]int `json:"zoo_count"`
	Cases    []onednnCase   `json:"cases"`
	Rule     []onednnCase   `json:"rule"`
}

func loadOnednn(t *testing.T) onednnDoc {
	t.Helper()
	var d onednnDoc
	loadVectorFile(t, filepath.Join("testdata", "onednn", "onednn_conv_avx2.json"), "fxquant-onednn-conv/1", &d)
	return d
}

// loadVectorFile decodes the JSON vector file at path into doc and
// requires its "format" field to be format.
func loadVectorFile(t *testing.T, path, format string, doc any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, doc), path)
	var head struct {
		Format string `json:"format"`
	}
	require.NoError(t, json.Unmarshal(raw, &head), path)
	require.Equal(t, format, head.Format, path)
}

// xorshiftValues is the generator's data: xorshift32 from seed, each value
// ((u >> 8) · 2^-23) - 1.
func xorshiftValues(seed uint32, n int) []float32 {
	x := seed
	if x == 0 {
		x = 1
	}
	out := make([]float32, n)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = float32(float64(x>>8)*0x1p-23 - 1)
	}
	return out
}

func (c onednnCase) shape() kernels.ConvShape {
	return kernels.ConvShape{N: c.Input[0], C: c.Input[1], H: c.Input[2], W: c.Input[3],
		O: c.Weight[0], KH: c.Weight[2], KW: c.Weight[3], Groups: c.Groups,
		SH: c.Stride[0], SW: c.Stride[1], DH: c.Dilation[0], DW: c.Dilation[1],
		PT: c.Padding[0], PB: c.Padding[0], PL: c.Padding[1], PR: c.Padding[1]}
}

// ruleShape reads a rule-table entry, 1-D (3-D input) or 2-D.
func (c onednnCase) ruleShape() kernels.ConvShape {
	if len(c.Input) == 3 {
		return kernels.ConvShape{N: c.Input[0], C: c.Input[1], H: 1, W: c.Input[2],
			O: c.Weight[0], KH: 1, KW: c.Weight[2], Groups: c.Groups,
			SH: 1, SW: c.Stride[0], DH: 1, DW: c.Dilation[0], PL: c.Padding[0], PR: c.Padding[0]}
	}
	return c.shape()
}

func (c onednnCase) String() string {
	return fmt.Sprintf("%s in%v w%v s%v p%v d%v g%d bias=%v", c.Model, c.Input, c.Weight, c.Stride, c.Padding, c.Dilation, c.Groups, c.Bias)
}

// TestConvBackendMatchesPyTorch checks kernels.UseMkldnn against
// torch._C._select_conv_backend on every recorded shape (the zoo's
// convolutions, the extra cases and the random rule table).
func TestConvBackendMatchesPyTorch(t *testing.T) {
	d := loadOnednn(t)
	n := 0
	for _, c := range append(append([]onednnCase(nil), d.Cases...), d.Rule...) {
		want := c.Backend == "Mkldnn"
		require.Contains(t, []string{"Mkldnn", "Slow2d", "SlowDilated2d"}, c.Backend, "%v", c)
		require.Equal(t, want, kernels.UseMkldnn(c.ruleShape(), 1), "%v: PyTorch's backend is %s", c, c.Backend)
		n++
	}
	t.Logf("use_mkldnn agrees with PyTorch on %d shapes", n)
}

// TestConvOneDNNImplMatchesVerbose checks ConvBackend's choice of oneDNN
// implementation (for an AVX2 CPU, where the vectors were made) against
// the one ONEDNN_VERBOSE named.
func TestConvOneDNNImplMatchesVerbose(t *testing.T) {
	d := loadOnednn(t)
	require.Equal(t, "avx2", d.CPUISA)
	names := map[string]kernels.ConvImpl{"native": kernels.ConvNative, "jit_dw:avx2": kernels.ConvJitDW,
		"jit:avx2": kernels.ConvJit, "jit_1x1:avx2": kernels.ConvJit1x1, "x64:gemm:jit": kernels.ConvGemm}
	for _, c := range d.Cases {
		want, ok := names[c.Impl]
		require.True(t, ok, "%v: unknown implementation %q", c, c.Impl)
		require.Equal(t, want, kernels.ConvBackend(c.shape(), kernels.ConvOptions{ISA: kernels.ConvISAAVX2}), "%v: verbose says %s", c, c.Impl)
	}
}

// TestConvOneDNNBitExactAVX2 runs every recorded case through
// ConvolutionWith for an AVX2 CPU and requires PyTorch's output bits.
func TestConvOneDNNBitExactAVX2(t *testing.T) {
	d := loadOnednn(t)
	counts := map[string]int{}
	total := map[string]int{}
	for _, c := range d.Cases {
		if c.Out == "" {
			continue
		}
		total[c.Impl]++
		x, w, b := c.tensors()
		p, err := kernels.NewConvParams(2, c.Stride, c.Padding, c.Dilation, c.Groups)
		require.NoError(t, err)
		y, err := kernels.ConvolutionWith(x, w, b, p, kernels.ConvOptions{ISA: kernels.ConvISAAVX2})
		require.NoError(t, err)
		require.Equal(t, c.Shape, y.Shape(), "%v", c)
		got, err := tensor.Data[float32](y)
		require.NoError(t, err)
		want := c.want(t)
		bad := 0
		var first string
		var maxULP int64
		for i := range want {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				maxULP = max(maxULP, ulpDiff(want[i], got[i]))
				if bad == 0 {
					first = fmt.Sprintf("element %d: want %g (%08x), got %g (%08x)", i, want[i], math.Float32bits(want[i]), got[i], math.Float32bits(got[i]))
				}
				bad++
			}
		}
		if bad == 0 {
			counts[c.Impl]++
			continue
		}
		t.Errorf("%v (%s): %d of %d outputs differ, by up to %d ULP; %s", c, c.Impl, bad, len(want), maxULP, first)
	}
	var parts []string
	for k, v := range total {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, counts[k], v))
	}
	t.Logf("bit-exact cases: %s", strings.Join(parts, ", "))
}

func (c onednnCase) tensors() (x, w, b *tensor.Tensor) {
	nIn := c.Input[0] * c.Input[1] * c.Input[2] * c.Input[3]
	nW := c.Weight[0] * c.Weight[1] * c.Weight[2] * c.Weight[3]
	v := xorshiftValues(c.Seed, nIn+nW+c.Weight[0])
	x = tensor.F32(c.Input, v[:nIn]...)
	w = tensor.F32(c.Weight, v[nIn:nIn+nW]...)
	if c.Bias {
		b = tensor.F32([]int{c.Weight[0]}, v[nIn+nW:]...)
	}
	return x, w, b
}

func (c onednnCase) want(t *testing.T) []float32 {
	raw, err := base64.StdEncoding.DecodeString(c.Out)
	require.NoError(t, err)
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// TestConvOneDNNZooAVX512 checks the default (avx512_core) path on the zoo's
// convolutions. jit_dw and gemm add in the same order on both ISAs, so on
// the zoo shapes where the AVX2 machine ran them, the avx512_core choice
// must be the same implementation with the same bits. (The zoo's recorded
// outputs, made on an AVX-512 machine, equal the AVX2 machine's for the
// three models without jit convolutions, which supports this; regnet's
// jit:avx512_core convolutions are checked end to end in
// tests/zoo_conv_float_test.go.)
func TestConvOneDNNZooAVX512(t *testing.T) {
	d := loadOnednn(t)
	impls := map[string]int{}
	for _, c := range d.Cases {
		if strings.HasPrefix(c.Model, "extra") {
			continue
		}
		impl := kernels.ConvBackend(c.shape(), kernels.ConvOptions{})
		impls[impl.String()]++
		if c.Impl != "jit_dw:avx2" && c.Impl != "x64:gemm:jit" {
			continue
		}
		want := map[string]kernels.ConvImpl{"jit_dw:avx2": kernels.ConvJitDW, "x64:gemm:jit": kernels.ConvGemm}[c.Impl]
		require.Equal(t, want, impl, "%v", c)
		x, w, b := c.tensors()
		p, err := kernels.NewConvParams(2, c.Stride, c.Padding, c.Dilation, c.Groups)
		require.NoError(t, err)
		y, err := kernels.Convolution(x, w, b, p)
		require.NoError(t, err)
		got, err := tensor.Data[float32](y)
		require.NoError(t, err)
		want32 := c.want(t)
		for i := range want32 {
			require.Equal(t, math.Float32bits(want32[i]), math.Float32bits(got[i]), "%v: output %d", c, i)
		}
	}
	t.Logf("zoo convolution shapes by avx512_core implementation: %v", impls)
}

// onednnMoreCase is a case of onednn_conv_more_avx2.json, whose padding may
// be the string "same" and whose input may be 3-D (conv1d).
type onednnMoreCase struct {
	onednnCase
	Padding json.RawMessage `json:"padding"`
}

// TestConvOneDNNMoreAVX2 checks conv1d (which PyTorch and oneDNN see as 2-D
// of height 1), padding="same" with an even kernel (PyTorch pads the input
// at the end first) and 1×1 kernels at batch 16 (jit_1x1) against
// testdata/onednn/onednn_conv_more_avx2.json, bit for bit.
func TestConvOneDNNMoreAVX2(t *testing.T) {
	var d struct {
		Cases []onednnMoreCase `json:"cases"`
	}
	loadVectorFile(t, filepath.Join("testdata", "onednn", "onednn_conv_more_avx2.json"), "fxquant-onednn-conv/1", &d)
	require.NotEmpty(t, d.Cases)
	impls := map[string]int{}
	for _, c := range d.Cases {
		nd := len(c.Input) - 2
		var pad []int
		same := string(c.Padding) == `"same"`
		if !same {
			require.NoError(t, json.Unmarshal(c.Padding, &pad))
		} else {
			pad = []int{0}
		}
		p, err := kernels.NewConvParams(nd, c.Stride, pad, c.Dilation, c.Groups)
		require.NoError(t, err)
		if same {
			require.NoError(t, p.PaddingMode("same", c.Weight[2:]))
		}
		nIn, nW := 1, 1
		for _, v := range c.Input {
			nIn *= v
		}
		for _, v := range c.Weight {
			nW *= v
		}
		v := xorshiftValues(c.Seed, nIn+nW+c.Weight[0])
		x, w := tensor.F32(c.Input, v[:nIn]...), tensor.F32(c.Weight, v[nIn:nIn+nW]...)
		var b *tensor.Tensor
		if c.Bias {
			b = tensor.F32([]int{c.Weight[0]}, v[nIn+nW:]...)
		}
		y, err := kernels.ConvolutionWith(x, w, b, p, kernels.ConvOptions{ISA: kernels.ConvISAAVX2})
		require.NoError(t, err)
		require.Equal(t, c.Shape, y.Shape(), "%v", c.Input)
		got, err := tensor.Data[float32](y)
		require.NoError(t, err)
		want := c.want(t)
		for i := range want {
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "in%v w%v pad %s (%s): output %d: want %g, got %g", c.Input, c.Weight, c.Padding, c.Impl, i, want[i], got[i])
		}
		impls[c.Impl]++
	}
	t.Logf("bit-exact: %v", impls)
}

// TestConvBackendBadShapes: shapes no convolution has give ConvNative
// (whose kernel reports the error) instead of dividing by zero.
func TestConvBackendBadShapes(t *testing.T) {
	ok := kernels.ConvShape{N: 2, C: 8, H: 5, W: 5, O: 8, KH: 3, KW: 3, Groups: 8, SH: 1, SW: 1, DH: 1, DW: 1}
	require.Equal(t, kernels.ConvJitDW, kernels.ConvBackend(ok, kernels.ConvOptions{}))
	for _, mut := range []func(*kernels.ConvShape){
		func(s *kernels.ConvShape) { s.Groups = 0 },
		func(s *kernels.ConvShape) { s.Groups = 3 },
		func(s *kernels.ConvShape) { s.SH = 0 },
		func(s *kernels.ConvShape) { s.DW = 0 },
		func(s *kernels.ConvShape) { s.KW = 0 },
	} {
		s := ok
		mut(&s)
		require.Equal(t, kernels.ConvNative, kernels.ConvBackend(s, kernels.ConvOptions{}), "%+v", s)
	}
}
