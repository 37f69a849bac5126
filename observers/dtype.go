package observers

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Sentinel errors. Errors returned by this package wrap one of them where
// it applies, so callers can test with errors.Is.
var (
	// ErrNoData reports an observer asked for qparams (or a convert plan
	// that needs them) before it recorded any element.
	ErrNoData = errors.New("observer has seen no data")
	// ErrConfig reports an invalid observer configuration.
	ErrConfig = errors.New("invalid observer config")
	// ErrInput reports an input tensor the observer cannot take (wrong
	// dtype, rank or shape).
	ErrInput = errors.New("invalid observer input")
	// ErrInvalidStats reports statistics from which PyTorch cannot compute
	// qparams (NaN, or min greater than max).
	ErrInvalidStats = errors.New("invalid observer statistics")
	// ErrNoQParams reports a call to CalculateQParams on an observer that
	// has none (placeholder observers), as PyTorch raises.
	ErrNoQParams = errors.New("observer has no qparams")
)

// DType is an observer's dtype argument: one of PyTorch's quantized dtypes
// (torch.quint8, torch.qint8, ...) or a plain dtype (torch.int8,
// torch.float16, ...). The zero value means "not set" and takes the
// observer's default.
type DType uint8

// The observer dtypes.
const (
	DTypeUnset DType = iota
	QUInt8
	QInt8
	QInt32
	QUInt4x2
	QUInt2x4
	UInt8
	Int8
	Int16
	UInt16
	Int32
	Float8E5M2
	Float8E4M3FN
	Float16
	BFloat16
	Float32
	numObserverDTypes
)

var dtypeNames = [numObserverDTypes]string{
	DTypeUnset:   "unset",
	QUInt8:       "quint8",
	QInt8:        "qint8",
	QInt32:       "qint32",
	QUInt4x2:     "quint4x2",
	QUInt2x4:     "quint2x4",
	UInt8:        "uint8",
	Int8:         "int8",
	Int16:        "int16",
	UInt16:       "uint16",
	Int32:        "int32",
	Float8E5M2:   "float8_e5m2",
	Float8E4M3FN: "float8_e4m3fn",
	Float16:      "float16",
	BFloat16:     "bfloat16",
	Float32:      "float32",
}

// String returns the name Python prints, e.g. "torch.quint8".
func (d DType) String() string {
	if d >= numObserverDTypes {
		return fmt.Sprintf("observers.DType(%d)", uint8(d))
	}
	return "torch." + dtypeNames[d]
}

// ParseDType parses a dtype name as Python writes it ("torch.quint8",
// "quint8", "torch.int8", "torch.float"). It fails for names observers do
// not take.
func ParseDType(s string) (DType, error) {
	name := strings.TrimPrefix(strings.TrimSpace(s), "torch.")
	switch name {
	case "float":
		return Float32, nil
	case "half":
		return Float16, nil
	}
	for d := QUInt8; d < numObserverDTypes; d++ {
		if dtypeNames[d] == name {
			return d, nil
		}
	}
	return DTypeUnset, fmt.Errorf("%w: unknown observer dtype %q", ErrConfig, s)
}

// FromTensorDType maps a plain tensor dtype to the observer dtype of the
// same name (tensor.Int8 -> Int8). It fails for dtypes observers do not take.
func FromTensorDType(d tensor.DType) (DType, error) {
	return ParseDType(d.String())
}

// Underlying returns the dtype that holds the quantized values in the
// decomposed ops: quint8 -> uint8, qint8 -> int8, qint32 -> int32,
// quint4x2/quint2x4 -> uint8; plain dtypes map to themselves. It returns
// tensor.Unknown for DTypeUnset.
func (d DType) Underlying() tensor.DType {
	switch d {
	case QUInt8, UInt8, QUInt4x2, QUInt2x4:
		return tensor.UInt8
	case QInt8, Int8:
		return tensor.Int8
	case QInt32, Int32:
		return tensor.Int32
	case Int16:
		return tensor.Int16
	case UInt16:
		return tensor.UInt16
	case Float8E5M2:
		return tensor.Float8E5M2
	case Float8E4M3FN:
		return tensor.Float8E4M3FN
	case Float16:
		return tensor.Float16
	case BFloat16:
		return tensor.BFloat16
	case Float32:
		return tensor.Float32
	}
	return tensor.Unknown
}

// uniformDTypes are the dtypes UniformQuantizationObserverBase accepts.
func (d DType) uniformSupported() bool {
	switch d {
	case QInt8, QUInt8, QUInt4x2, QInt32, Int8, UInt8, Int16, Int32, Float8E5M2, Float8E4M3FN, UInt16:
		return true
	}
	return false
}

// convertSupported reports membership in convert's SUPPORTED_QDTYPES.
func (d DType) convertSupported() bool {
	switch d {
	case QUInt8, QInt8, QInt32, UInt8, Int8, UInt16, Int16, Int32, Float8E5M2, Float8E4M3FN:
		return true
	}
	return false
}

// bits returns the bit width torch.iinfo reports for an integer dtype.
func (d DType) bits() (int, bool) {
	switch d {
	case QUInt8, QInt8, UInt8, Int8:
		return 8, true
	case Int16, UInt16:
		return 16, true
	case QInt32, Int32:
		return 32, true
	}
	return 0, false
}

func (d DType) isUInt8Like() bool { return d == QUInt8 || d == UInt8 }
func (d DType) isInt8Like() bool  { return d == QInt8 || d == Int8 }
func (d DType) isInt32Like() bool { return d == QInt32 || d == Int32 }

// QScheme is a PyTorch quantization scheme. The zero value means "not set"
// and takes the observer's default.
type QScheme uint8

// The quantization schemes.
const (
	QSchemeUnset QScheme = iota
	PerTensorAffine
	PerTensorSymmetric
	PerChannelAffine
	PerChannelSymmetric
	PerChannelAffineFloatQParams
	numQSchemes
)

var qschemeNames = [numQSchemes]string{
	QSchemeUnset:                 "unset",
	PerTensorAffine:              "per_tensor_affine",
	PerTensorSymmetric:           "per_tensor_symmetric",
	PerChannelAffine:             "per_channel_affine",
	PerChannelSymmetric:          "per_channel_symmetric",
	PerChannelAffineFloatQParams: "per_channel_affine_float_qparams",
}

// String returns the name Python prints, e.g. "torch.per_tensor_affine".
func (q QScheme) String() string {
	if q >= numQSchemes {
		return fmt.Sprintf("observers.QScheme(%d)", uint8(q))
	}
	return "torch." + qschemeNames[q]
}

// ParseQScheme parses "torch.per_tensor_affine" or "per_tensor_affine".
func ParseQScheme(s string) (QScheme, error) {
	name := strings.TrimPrefix(strings.TrimSpace(s), "torch.")
	for q := PerTensorAffine; q < numQSchemes; q++ {
		if qschemeNames[q] == name {
			return q, nil
		}
	}
	return QSchemeUnset, fmt.Errorf("%w: unknown qscheme %q", ErrConfig, s)
}

// IsPerChannel reports whether q is one of the per-channel schemes.
func (q QScheme) IsPerChannel() bool {
	return q == PerChannelAffine || q == PerChannelSymmetric || q == PerChannelAffineFloatQParams
}

// IsSymmetric reports whether q is per_tensor_symmetric or
// per_channel_symmetric.
func (q QScheme) IsSymmetric() bool { return q == PerTensorSymmetric || q == PerChannelSymmetric }

// Float32Eps is torch.finfo(torch.float32).eps, 2**-23, the default eps of
// every observer.
const Float32Eps = 1.1920928955078125e-07

// Float32SmallestNormal is torch.finfo(torch.float32).smallest_normal, the
// eps default of the runtime choose_qparams_affine op.
const Float32SmallestNormal = 1.1754943508222875e-38

// CalculateQMinQMax returns the quant range an observer uses, as torchao's
// calculate_qmin_qmax computes it from the constructor's quant_min,
// quant_max (nil for None), dtype and reduce_range. A range is customized
// when both bounds are given; it must then satisfy qmin <= 0 <= qmax and
// qmin < qmax, and for int8 dtypes span at most 256 values (2**32 for
// int32). reduce_range halves the bounds with floor division.
func CalculateQMinQMax(quantMin, quantMax *int64, dtype DType, reduceRange bool) (qmin, qmax int64, customized bool, err error) {
	customized = quantMin != nil && quantMax != nil
	if customized {
		lo, hi := *quantMin, *quantMax
		if !(lo <= 0 && 0 <= hi) {
			return 0, 0, true, fmt.Errorf("%w: quant_min %d and quant_max %d: want quant_min <= 0 <= quant_max", ErrConfig, lo, hi)
		}
		if lo >= hi {
			return 0, 0, true, fmt.Errorf("%w: quant_min %d must be less than quant_max %d", ErrConfig, lo, hi)
		}
		n := hi - lo + 1
		if dtype.isInt8Like() && !(n > 0 && n <= 256) {
			return 0, 0, true, fmt.Errorf("%w: quant range [%d, %d] of %d values does not fit %s (at most 256)", ErrConfig, lo, hi, n, dtype)
		}
		if dtype.isInt32Like() && !(n > 0 && n <= 1<<32) {
			return 0, 0, true, fmt.Errorf("%w: quant range [%d, %d] does not fit %s (at most 2**32 values)", ErrConfig, lo, hi, dtype)
		}
		if reduceRange {
			lo, hi = floorDiv2(lo), floorDiv2(hi)
		}
		return lo, hi, true, nil
	}
	switch {
	case dtype.isInt8Like():
		if reduceRange {
			return -64, 63, false, nil
		}
		return -128, 127, false, nil
	case dtype.isUInt8Like():
		if reduceRange {
			return 0, 127, false, nil
		}
		return 0, 255, false, nil
	case dtype.isInt32Like():
		return math.MinInt32, math.MaxInt32, false, nil
	case dtype == UInt16:
		return 0, 1<<16 - 1, false, nil
	case dtype == Int16:
		return -1 << 15, 1<<15 - 1, false, nil
	}
	return 0, 15, false, nil
}

func floorDiv2(v int64) int64 {
	if v >= 0 {
		return v / 2
	}
	return -((-v + 1) / 2)
}
