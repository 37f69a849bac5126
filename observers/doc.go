// Package observers holds PT2E observers: the modules prepare inserts on
// graph edges to record statistics during calibration, their quantization
// parameter arithmetic (bit-exact with PyTorch), and a declarative
// description of what convert puts in the graph for each of them.
//
// # Observers
//
// The uniform-quantization observers of torch.ao / torchao.quantization.pt2e
// are [MinMaxObserver], [MovingAverageMinMaxObserver],
// [PerChannelMinMaxObserver], [MovingAveragePerChannelMinMaxObserver] and
// [HistogramObserver]; they share [Config] (dtype, qscheme, quant range,
// reduce_range, eps, ch_axis, averaging constant). [PlaceholderObserver]
// marks dynamic quantization and float16 casts, [FixedQParamsObserver]
// returns fixed parameters. The torchao affine family is
// [AffineQuantizedMinMaxObserver] and [AffineQuantizedPlaceholderObserver],
// configured by [AffineConfig] with a [Granularity] and a [MappingType].
//
// Every observer implements [Observer]: Forward (the [fxgraph.Module]
// contract) records statistics from a *tensor.Tensor and returns it
// unchanged, CalculateQParams returns scale and zero point as tensors of
// PyTorch's dtypes and shapes, and Plan returns a [ConvertPlan].
//
// # Arithmetic
//
// All statistics and qparams are computed in float32 with one rounding per
// PyTorch tensor operation, in PyTorch's order, and with every float32
// product explicitly rounded before it is added (no fused multiply-add),
// except where PyTorch itself fuses (the linspace of [HistogramObserver],
// section 2.5 of the torchao-pt2e spec). Rounding is half to even.
//
// # Speed
//
// The hot loops have AVX2 kernels (quanterr_amd64.s), chosen at run time
// from the CPU's features: the HistogramObserver's quantization-error
// evaluation, histc counting and the row sums of ATen's float32 sum, and
// the min/max scan of every min/max observer. Each lane runs the float32
// (and, for the exact fmod quotient, float64) operations of the Go code in
// the same order without fused multiply-adds, so the bits are the same;
// tests run both paths and compare, and -tags purego builds only the Go
// code. The range search and histogram updates take their scratch
// buffers from pools, so a calibration run's observers do not allocate
// per call.
//
// # Errors
//
// Bad input is an error, never a panic: an unknown dtype or qscheme, an
// invalid quant range, an input of the wrong dtype or shape, and asking an
// observer that saw no data for its qparams (PyTorch warns and returns
// scale 1, zero point 0; fxquant returns [ErrNoData] instead). A NaN in the
// input propagates into min/max as in PyTorch and makes CalculateQParams
// fail, as PyTorch's "min should be less than max" assertion does.
package observers
