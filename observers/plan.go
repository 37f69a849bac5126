package observers

import (
	"fmt"

	"github.com/fxquant/fxquant/ops/tensor"
)

// PlanKind says which replacement convert inserts for an observer node
// (spec section 2.4).
type PlanKind uint8

// The plan kinds.
const (
	// PlanRemove: the observer's dtype is not quantizable (e.g. a float32
	// PlaceholderObserver for a bias); the node is removed and its users
	// take its input.
	PlanRemove PlanKind = iota + 1
	// PlanPerTensor: quantize_per_tensor.default and
	// dequantize_per_tensor.default with Scale and ZeroPoint as literals.
	PlanPerTensor
	// PlanPerChannel: get_attr nodes for ScaleTensor and ZeroPointTensor
	// (shared by q and dq), quantize_per_channel.default and
	// dequantize_per_channel.default on Axis.
	PlanPerChannel
	// PlanDynamic: choose_qparams.tensor (or choose_qparams_symmetric.tensor
	// when Symmetric) with QuantMin, QuantMax, Eps and Dtype, two getitems,
	// then quantize_per_tensor.tensor and dequantize_per_tensor.tensor.
	PlanDynamic
	// PlanFloat16: convert_element_type.no_fuse to float16 and back to
	// float32.
	PlanFloat16
	// PlanAffineStatic: get_attr nodes _scaleN and _zero_pointN holding
	// ScaleTensor and ZeroPointTensor, torchao quantize_affine and
	// dequantize_affine (output_dtype=OutputDType as a kwarg).
	PlanAffineStatic
	// PlanAffineDynamic: torchao choose_qparams_affine(x, MappingType,
	// BlockSize, Dtype, QuantMin, QuantMax, Eps, ScaleDType,
	// ZeroPointDType), two getitems, then quantize_affine and
	// dequantize_affine as in PlanAffineStatic.
	PlanAffineDynamic
)

var planKindNames = [...]string{"invalid", "remove", "per_tensor", "per_channel", "dynamic", "float16", "affine_static", "affine_dynamic"}

// String names the kind.
func (k PlanKind) String() string {
	if int(k) < len(planKindNames) {
		return planKindNames[k]
	}
	return fmt.Sprintf("PlanKind(%d)", uint8(k))
}

// ConvertPlan is a declarative description of what convert puts in the
// graph in place of one observer node. Fields that do not apply to Kind
// are zero. The convert package turns it into nodes.
type ConvertPlan struct {
	// Kind is the replacement convert inserts; it says which of the
	// fields below apply.
	Kind PlanKind
	// Dtype is the dtype argument of the q/dq ops: the underlying dtype
	// (quint8 -> torch.uint8) for the decomposed ops, the target dtype for
	// the affine ones.
	Dtype tensor.DType
	// QuantMin and QuantMax are the integer range literals. For affine
	// plans with QuantRangeNone set, the literals are None and these hold
	// the resolved bounds.
	QuantMin, QuantMax int64
	QuantRangeNone     bool // the range literals are None (affine plans)
	// Scale and ZeroPoint are the PlanPerTensor literals: float(scale) of
	// the float32 scale, int(zero_point).
	Scale     float64
	ZeroPoint int64
	// ScaleTensor and ZeroPointTensor are the buffers behind the get_attr
	// nodes of PlanPerChannel and PlanAffineStatic.
	ScaleTensor, ZeroPointTensor *tensor.Tensor
	// Axis is the channel axis of PlanPerChannel (ch_axis as configured).
	Axis int
	// Symmetric selects choose_qparams_symmetric.tensor in PlanDynamic.
	Symmetric bool
	// Eps is the eps literal of PlanDynamic and PlanAffineDynamic; EpsNone
	// marks a None literal in PlanAffineDynamic.
	Eps     float64
	EpsNone bool
	// BlockSize is the tuple literal of the affine plans.
	BlockSize []int64
	// MappingType is the mapping of the affine plans (passed by name).
	MappingType MappingType
	// ScaleDType and ZeroPointDType are the PlanAffineDynamic literals;
	// tensor.Unknown means None.
	ScaleDType, ZeroPointDType tensor.DType
	// OutputDType is the affine dequantize's output_dtype (the observed
	// tensor's dtype).
	OutputDType tensor.DType
}

// uniformPlan is convert's _replace_observer_with_quantize_dequantize_node_decomposed
// decision for a uniform observer.
func uniformPlan(o Observer, b *uniformBase) (ConvertPlan, error) {
	p := ConvertPlan{Dtype: b.dtype.Underlying(), QuantMin: b.qmin, QuantMax: b.qmax}
	switch {
	case b.isDynamic:
		return dynamicPlan(o.Class(), b.dtype, b.qscheme, b.qmin, b.qmax, float64(b.eps))
	case b.dtype == Float16:
		p.Kind = PlanFloat16
		return p, nil
	case !b.dtype.convertSupported():
		return ConvertPlan{Kind: PlanRemove}, nil
	}
	qp, err := o.CalculateQParams()
	if err != nil {
		return ConvertPlan{}, fmt.Errorf("convert plan: %w", err)
	}
	if b.qscheme.IsPerChannel() {
		p.Kind = PlanPerChannel
		p.ScaleTensor, p.ZeroPointTensor = qp.Scale, qp.ZeroPoint
		if pc, ok := o.(*PerChannelMinMaxObserver); ok {
			p.Axis = pc.chAxis
		}
		return p, nil
	}
	s, err := tensor.Data[float32](qp.Scale)
	if err != nil {
		return ConvertPlan{}, err
	}
	zps, err := qp.ZeroPoint.Float64s()
	if err != nil {
		return ConvertPlan{}, err
	}
	p.Kind = PlanPerTensor
	p.Scale = float64(s[0])
	p.ZeroPoint = int64(zps[0])
	return p, nil
}

func dynamicPlan(class string, d DType, q QScheme, qmin, qmax int64, eps float64) (ConvertPlan, error) {
	u := d.Underlying()
	if u != tensor.UInt8 && u != tensor.Int8 {
		return ConvertPlan{}, fmt.Errorf("%s: convert plan: %w: dynamic quantization needs dtype uint8 or int8, got %s", class, ErrConfig, d)
	}
	if q == QSchemeUnset {
		q = PerTensorAffine
	}
	if q != PerTensorAffine && q != PerTensorSymmetric {
		return ConvertPlan{}, fmt.Errorf("%s: convert plan: %w: dynamic quantization needs qscheme per_tensor_affine or per_tensor_symmetric, got %s", class, ErrConfig, q)
	}
	return ConvertPlan{Kind: PlanDynamic, Dtype: u, QuantMin: qmin, QuantMax: qmax, Eps: eps, Symmetric: q == PerTensorSymmetric}, nil
}
