package ops

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/ops/tensor"
)

// Type is the static type of a value in a graph: a [TensorType], a
// [TupleType] for multi-result ops, or a [PyType] for non-tensor values
// such as a symbolic int. Types are immutable values compared with
// [Type.Equal], never with ==.
type Type interface {
	// String returns the printed form used in graph text: "f32[4, 32]",
	// "(f32[1], i32[1])", "!quant.uniform<i8:f32, 0.02:-3>[1, 16]".
	String() string
	// Equal reports exact equality: shapes, element types and every
	// quantization parameter (scales compared by float64 bits).
	Equal(Type) bool
	isType()
}

// Element is the element type of a tensor: a [Scalar] dtype or a quantized
// type ([UniformQuantized], [UniformQuantizedPerAxis]).
type Element interface {
	// String returns the printed form: "f32", "!quant.uniform<i8:f32, 0.5:3>".
	String() string
	// Equal reports exact equality.
	Equal(Element) bool
	// Storage returns the dtype holding the values in memory.
	Storage() tensor.DType
	isElement()
}

// Scalar is a plain element type.
type Scalar struct{ DType tensor.DType }

func (Scalar) isElement() {}

// String returns FX's abbreviation, e.g. "f32".
func (s Scalar) String() string { return s.DType.Abbrev() }

// Equal reports whether e is the same plain dtype.
func (s Scalar) Equal(e Element) bool { o, ok := e.(Scalar); return ok && o == s }

// Storage returns the dtype itself.
func (s Scalar) Storage() tensor.DType { return s.DType }

// UniformQuantized is a per-tensor quantized element type (MLIR's
// !quant.uniform): expressed = (stored - ZeroPoint) * Scale, stored values
// lie in [StorageMin, StorageMax].
type UniformQuantized struct {
	StorageType tensor.DType // integer storage: i8, u8, i16, u16, i32, or i4/u4
	StorageMin  int64        // smallest stored value (quant_min), within StorageType's range
	StorageMax  int64        // largest stored value (quant_max), within StorageType's range
	Expressed   tensor.DType // float type the values stand for: f32, f16, bf16
	Scale       float64      // step between neighbouring stored values, in Expressed units
	ZeroPoint   int64        // stored value that stands for 0.0
}

func (UniformQuantized) isElement() {}

// Storage returns the storage dtype (i8 for int4, which PT2E keeps in int8).
func (q UniformQuantized) Storage() tensor.DType { return q.StorageType.Storage() }

// Equal compares every field, scales by their float64 bits.
func (q UniformQuantized) Equal(e Element) bool {
	o, ok := e.(UniformQuantized)
	return ok && q.StorageType == o.StorageType && q.StorageMin == o.StorageMin && q.StorageMax == o.StorageMax &&
		q.Expressed == o.Expressed && math.Float64bits(q.Scale) == math.Float64bits(o.Scale) && q.ZeroPoint == o.ZeroPoint
}

// String prints MLIR's syntax with shortest round-trip scales:
// "!quant.uniform<i8:f32, 0.02:-3>", "!quant.uniform<i8<-127:127>:f32, 0.5>".
func (q UniformQuantized) String() string {
	var b strings.Builder
	b.WriteString("!quant.uniform<")
	writeStorage(&b, q.StorageType, q.StorageMin, q.StorageMax)
	b.WriteString(":")
	b.WriteString(q.Expressed.Abbrev())
	b.WriteString(", ")
	writeScaleZP(&b, q.Scale, q.ZeroPoint)
	b.WriteString(">")
	return b.String()
}

// UniformQuantizedPerAxis is a per-axis quantized element type: pair i of
// Scales/ZeroPoints applies to every element whose index along Axis is i.
type UniformQuantizedPerAxis struct {
	StorageType tensor.DType // integer storage, as in [UniformQuantized]
	StorageMin  int64        // smallest stored value (quant_min)
	StorageMax  int64        // largest stored value (quant_max)
	Expressed   tensor.DType // float type the values stand for
	Axis        int          // the quantized dimension (the channel axis)
	Scales      []float64    // one scale per index along Axis
	ZeroPoints  []int64      // one zero point per index along Axis, len(Scales) long
}

func (UniformQuantizedPerAxis) isElement() {}

// Storage returns the storage dtype.
func (q UniformQuantizedPerAxis) Storage() tensor.DType { return q.StorageType.Storage() }

// Equal compares every field, scales by their float64 bits.
func (q UniformQuantizedPerAxis) Equal(e Element) bool {
	o, ok := e.(UniformQuantizedPerAxis)
	if !ok || q.StorageType != o.StorageType || q.StorageMin != o.StorageMin || q.StorageMax != o.StorageMax ||
		q.Expressed != o.Expressed || q.Axis != o.Axis || len(q.Scales) != len(o.Scales) || !slices.Equal(q.ZeroPoints, o.ZeroPoints) {
		return false
	}
	for i := range q.Scales {
		if math.Float64bits(q.Scales[i]) != math.Float64bits(o.Scales[i]) {
			return false
		}
	}
	return true
}

// String prints "!quant.uniform<i8:f32:1, {0.1,0.2:3}>".
func (q UniformQuantizedPerAxis) String() string {
	var b strings.Builder
	b.WriteString("!quant.uniform<")
	writeStorage(&b, q.StorageType, q.StorageMin, q.StorageMax)
	b.WriteString(":")
	b.WriteString(q.Expressed.Abbrev())
	b.WriteString(":")
	b.WriteString(strconv.Itoa(q.Axis))
	b.WriteString(", {")
	for i := range q.Scales {
		if i > 0 {
			b.WriteString(",")
		}
		writeScaleZP(&b, q.Scales[i], q.ZeroPoints[i])
	}
	b.WriteString("}>")
	return b.String()
}

func writeStorage(b *strings.Builder, st tensor.DType, lo, hi int64) {
	b.WriteString(st.Abbrev())
	if dlo, dhi, ok := st.IntRange(); !ok || dlo != lo || dhi != hi {
		fmt.Fprintf(b, "<%d:%d>", lo, hi)
	}
}

func writeScaleZP(b *strings.Builder, s float64, zp int64) {
	b.WriteString(strconv.FormatFloat(s, 'g', -1, 64))
	if zp != 0 {
		b.WriteString(":")
		b.WriteString(strconv.FormatInt(zp, 10))
	}
}

// Errors returned by the quantized-type constructors.
var (
	ErrBadScale     = errors.New("scale must be finite and positive")
	ErrBadZeroPoint = errors.New("zero point outside the storage range")
	ErrBadStorage   = errors.New("storage must be an integer type and its range inside the type's")
	ErrBadExpressed = errors.New("expressed type must be a float type")
	ErrBadAxis      = errors.New("per-axis type does not fit the shape")
)

func checkQuantCommon(st tensor.DType, lo, hi int64, ex tensor.DType) error {
	dlo, dhi, ok := st.IntRange()
	if !ok || st == tensor.Bool || lo < dlo || hi > dhi || lo >= hi {
		return fmt.Errorf("%w: %s<%d:%d>", ErrBadStorage, st, lo, hi)
	}
	if !ex.IsFloat() {
		return fmt.Errorf("%w: got %s", ErrBadExpressed, ex)
	}
	return nil
}

func checkScaleZP(s float64, zp, lo, hi int64) error {
	if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
		return fmt.Errorf("%w: got %v", ErrBadScale, s)
	}
	if zp < lo || zp > hi {
		return fmt.Errorf("%w: %d not in [%d, %d]", ErrBadZeroPoint, zp, lo, hi)
	}
	return nil
}

// NewUniformQuantized validates and returns a per-tensor quantized element
// type: integer storage with lo < hi inside the storage type's range, a
// float expressed type, a finite positive scale and a zero point in [lo, hi].
func NewUniformQuantized(storage tensor.DType, lo, hi int64, expressed tensor.DType, scale float64, zp int64) (UniformQuantized, error) {
	if err := checkQuantCommon(storage, lo, hi, expressed); err != nil {
		return UniformQuantized{}, err
	}
	if err := checkScaleZP(scale, zp, lo, hi); err != nil {
		return UniformQuantized{}, err
	}
	return UniformQuantized{StorageType: storage, StorageMin: lo, StorageMax: hi, Expressed: expressed, Scale: scale, ZeroPoint: zp}, nil
}

// NewUniformQuantizedPerAxis validates and returns a per-axis quantized
// element type. Scales and zero points are copied.
func NewUniformQuantizedPerAxis(storage tensor.DType, lo, hi int64, expressed tensor.DType, axis int, scales []float64, zps []int64) (UniformQuantizedPerAxis, error) {
	if err := checkQuantCommon(storage, lo, hi, expressed); err != nil {
		return UniformQuantizedPerAxis{}, err
	}
	if axis < 0 {
		return UniformQuantizedPerAxis{}, fmt.Errorf("%w: negative axis %d", ErrBadAxis, axis)
	}
	if len(scales) == 0 || len(scales) != len(zps) {
		return UniformQuantizedPerAxis{}, fmt.Errorf("%w: %d scales and %d zero points", ErrBadAxis, len(scales), len(zps))
	}
	for i := range scales {
		if err := checkScaleZP(scales[i], zps[i], lo, hi); err != nil {
			return UniformQuantizedPerAxis{}, fmt.Errorf("channel %d: %w", i, err)
		}
	}
	return UniformQuantizedPerAxis{StorageType: storage, StorageMin: lo, StorageMax: hi, Expressed: expressed, Axis: axis,
		Scales: slices.Clone(scales), ZeroPoints: slices.Clone(zps)}, nil
}

// DynamicDim marks a dimension whose size is not known statically.
const DynamicDim int64 = -1

// TensorType is a tensor's static type: shape and element type. A
// dimension of [DynamicDim] is symbolic; Syms, when non-nil, names each
// symbolic dimension ("s0") and is empty for static ones.
type TensorType struct {
	Shape []int64
	Elem  Element
	Syms  []string
}

func (TensorType) isType() {}

// DType returns the storage dtype of the elements.
func (t TensorType) DType() tensor.DType {
	if t.Elem == nil {
		return tensor.Unknown
	}
	return t.Elem.Storage()
}

// Rank returns the number of dimensions.
func (t TensorType) Rank() int { return len(t.Shape) }

// Static reports whether every dimension is known.
func (t TensorType) Static() bool { return !slices.Contains(t.Shape, DynamicDim) }

// Numel returns the element count, or -1 when a dimension is dynamic.
func (t TensorType) Numel() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return -1
		}
		n *= d
	}
	return n
}

// IsQuantized reports whether the element type is a quantized type.
func (t TensorType) IsQuantized() bool {
	switch t.Elem.(type) {
	case UniformQuantized, UniformQuantizedPerAxis:
		return true
	}
	return false
}

// Equal compares shapes, symbols and element types exactly.
func (t TensorType) Equal(o Type) bool {
	u, ok := o.(TensorType)
	if !ok || !slices.Equal(t.Shape, u.Shape) || (t.Elem == nil) != (u.Elem == nil) {
		return false
	}
	if len(t.Syms) > 0 || len(u.Syms) > 0 {
		if !slices.Equal(t.symbols(), u.symbols()) {
			return false
		}
	}
	return t.Elem == nil || t.Elem.Equal(u.Elem)
}

func (t TensorType) symbols() []string {
	out := make([]string, len(t.Shape))
	for i := range out {
		if i < len(t.Syms) {
			out[i] = t.Syms[i]
		}
	}
	return out
}

// String prints "f32[4, 32]" (dynamic dims by their symbol, or "?"), with a
// quantized element type in MLIR syntax before the shape.
func (t TensorType) String() string {
	var b strings.Builder
	if t.Elem == nil {
		b.WriteString("?")
	} else {
		b.WriteString(t.Elem.String())
	}
	b.WriteByte('[')
	for i, d := range t.Shape {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case d >= 0:
			b.WriteString(strconv.FormatInt(d, 10))
		case i < len(t.Syms) && t.Syms[i] != "":
			b.WriteString(t.Syms[i])
		default:
			b.WriteString("?")
		}
	}
	b.WriteByte(']')
	return b.String()
}

// TupleType is the type of a multi-result op, such as choose_qparams's
// (scale, zero_point).
type TupleType struct{ Elems []Type }

func (TupleType) isType() {}

// Equal compares element-wise.
func (t TupleType) Equal(o Type) bool {
	u, ok := o.(TupleType)
	if !ok || len(t.Elems) != len(u.Elems) {
		return false
	}
	for i := range t.Elems {
		if !TypesEqual(t.Elems[i], u.Elems[i]) {
			return false
		}
	}
	return true
}

// String prints "(f32[1], i32[1])"; a one-element tuple prints "(f32[1],)".
func (t TupleType) String() string {
	parts := make([]string, len(t.Elems))
	for i, e := range t.Elems {
		if e == nil {
			parts[i] = "?"
		} else {
			parts[i] = e.String()
		}
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// PyType is the type of a non-tensor value: "int", "float", "bool", "None",
// "SymInt", "str".
type PyType struct{ Name string }

func (PyType) isType() {}

// Equal compares names.
func (p PyType) Equal(o Type) bool { u, ok := o.(PyType); return ok && u == p }

// String returns the name.
func (p PyType) String() string { return p.Name }

// TypesEqual is Equal that also accepts nil on both sides.
func TypesEqual(a, b Type) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(b)
}

// Plain returns the tensor type with a plain dtype element.
func Plain(d tensor.DType, shape ...int64) TensorType {
	return TensorType{Shape: slices.Clone(shape), Elem: Scalar{d}}
}

// ShapeInts converts a shape of ints to the int64 form types use.
func ShapeInts(shape []int) []int64 {
	out := make([]int64, len(shape))
	for i, s := range shape {
		out[i] = int64(s)
	}
	return out
}

// TypeDiff names the first field in which a and b differ, for error
// messages; it returns "" when they are equal.
func TypeDiff(a, b Type) string {
	if TypesEqual(a, b) {
		return ""
	}
	ta, oka := a.(TensorType)
	tb, okb := b.(TensorType)
	if !oka || !okb {
		return fmt.Sprintf("want %v, got %v", a, b)
	}
	if !slices.Equal(ta.Shape, tb.Shape) {
		return fmt.Sprintf("shape: want %v, got %v", ta.Shape, tb.Shape)
	}
	qa, oka := ta.Elem.(UniformQuantized)
	qb, okb := tb.Elem.(UniformQuantized)
	if oka && okb {
		switch {
		case qa.Scale != qb.Scale:
			return fmt.Sprintf("scale: want %v, got %v", qa.Scale, qb.Scale)
		case qa.ZeroPoint != qb.ZeroPoint:
			return fmt.Sprintf("zero point: want %d, got %d", qa.ZeroPoint, qb.ZeroPoint)
		}
	}
	return fmt.Sprintf("element type: want %v, got %v", ta.Elem, tb.Elem)
}
