package fxgraph

import (
	"fmt"
	"math"
	"strings"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// The qparam checks of [Verify]: every quantize, dequantize,
// choose_qparams and fake_quant call of the quantized_decomposed and
// torchao namespaces has its qparams checked where they enter the graph.
// Literal scalars are checked directly; tensors are checked by value when
// they are constants: a get_attr of the graph's attribute store, or a
// placeholder listed in [VerifyOptions.Lifted]. Values computed by the
// graph (choose_qparams results) are left to run time.
//
// The arguments are found by their schema names, so every overload
// (.default, .tensor, .tensor2, per_channel, per_channel_group,
// per_token, the torchao *_affine ops) is covered by the same checks:
//
//   - scale, scales: finite and > 0;
//   - zero_point, zero_points: within the storage dtype's range (finite
//     for floating-point zero points);
//   - quant_min, quant_max: within the storage dtype's range, and
//     quant_min <= quant_max;
//   - axis: within the input's rank, with scales and zero_points of the
//     length of the input along it;
//   - eps: finite and >= 0; group_size > 0.
//
// A node with a bad qparam is not given to its result-type rule, which
// checks some of the same things, so each problem is reported once.

// qparamOp reports whether o is an op whose qparams are checked.
func qparamOp(o ops.Overload) bool {
	switch o.Packet.NS {
	case "quantized_decomposed", "torchao":
	default:
		return false
	}
	name := o.Packet.Name
	return strings.HasPrefix(name, "quantize_") || strings.HasPrefix(name, "dequantize_") ||
		strings.HasPrefix(name, "choose_qparams") || strings.HasPrefix(name, "fake_quant")
}

// storageBounds returns the range of values of the storage dtype d: an
// integer type's range, or the largest finite magnitude of the float8
// types the decomposed ops accept.
func storageBounds(d tensor.DType) (lo, hi int64, ok bool) {
	if lo, hi, ok := d.IntRange(); ok {
		return lo, hi, true
	}
	switch d {
	case tensor.Float8E4M3FN:
		return -448, 448, true
	case tensor.Float8E5M2:
		return -57344, 57344, true
	}
	return 0, 0, false
}

// qparamLayout is where an op's qparam arguments are in its schema
// (-1: absent).
type qparamLayout struct {
	scale, zp, qmin, qmax, axis, eps, group int
	dtype                                   int // the storage dtype argument
}

// layoutOf finds the qparam arguments of o's schema s by name. It is a
// few [ops.Schema.ArgIndex] scans of a short argument list, done only for
// q/dq nodes, so it is not cached.
func layoutOf(o ops.Overload, s *ops.Schema) qparamLayout {
	idx := func(names ...string) int {
		for _, name := range names {
			if name == "" {
				continue
			}
			if i := s.ArgIndex(name); i >= 0 {
				return i
			}
		}
		return -1
	}
	// The storage dtype: "dtype", or torchao's target_dtype, input_dtype
	// (dequantize_affine) or output_dtype (quantize_affine).
	// dequantize_per_token's output_dtype is its float result, so "dtype"
	// comes first.
	third := ""
	switch {
	case strings.HasPrefix(o.Packet.Name, "dequantize_"):
		third = "input_dtype"
	case strings.HasPrefix(o.Packet.Name, "quantize_"):
		third = "output_dtype"
	}
	return qparamLayout{
		scale: idx("scale", "scales"), zp: idx("zero_point", "zero_points"),
		qmin: idx("quant_min"), qmax: idx("quant_max"), axis: idx("axis"),
		eps: idx("eps"), group: idx("group_size"),
		dtype: idx("dtype", "target_dtype", third),
	}
}

// qparamCheck is the state of one node's qparam check.
type qparamCheck struct {
	v        *verifier
	n        *Node
	s        *ops.Schema
	l        qparamLayout
	full     []ops.Value
	problems int
}

// checkQParams checks n's qparams (n calls o, whose schema s gave the
// normalised arguments full) and reports whether it found a problem.
func (v *verifier) checkQParams(n *Node, o ops.Overload, s *ops.Schema, full []ops.Value) bool {
	if !qparamOp(o) {
		return false
	}
	c := &qparamCheck{v: v, n: n, s: s, l: layoutOf(o, s), full: full}
	d, haveDType := c.storageDType()

	if i := c.index(c.l.scale); i >= 0 {
		c.scale(i)
	}
	if i := c.index(c.l.zp); i >= 0 && haveDType {
		c.zeroPoint(i, d)
	}
	c.quantRange(d, haveDType)
	if i := c.index(c.l.axis); i >= 0 {
		c.axis(i)
	}
	if i := c.index(c.l.eps); i >= 0 {
		if f, ok := asFloat(c.arg(i)); ok && (math.IsNaN(f) || math.IsInf(f, 0) || f < 0) {
			c.report(i, "a finite eps >= 0", fmt.Sprint(f), "")
		}
	}
	if i := c.index(c.l.group); i >= 0 {
		if g, ok := c.arg(i).(int64); ok && g <= 0 {
			c.report(i, "a group_size > 0", fmt.Sprint(g), "")
		}
	}
	return c.problems > 0
}

// index returns the layout position i when the normalised arguments
// hold it, or -1.
func (c *qparamCheck) index(i int) int {
	if i >= len(c.full) {
		return -1
	}
	return i
}

func (c *qparamCheck) arg(i int) ops.Value { return c.full[i] }

// storageDType returns the dtype the op stores quantized values in.
func (c *qparamCheck) storageDType() (tensor.DType, bool) {
	if i := c.index(c.l.dtype); i >= 0 {
		if d, ok := c.arg(i).(tensor.DType); ok && d.Valid() {
			return d, true
		}
	}
	return tensor.Unknown, false
}

// report records a problem with argument i.
func (c *qparamCheck) report(i int, want, got, detail string) {
	e := c.v.nodeErr(c.n, ErrQParam, fmt.Sprintf("arg %d (%s)", i, c.s.Args[i].Name), want, got)
	e.Detail = detail
	c.v.report(e)
	c.problems++
}

// constOf returns the value of a constant tensor argument, or nil for a
// value the graph computes.
func (v *verifier) constOf(x *Node) *tensor.Tensor {
	if x == nil {
		return nil
	}
	switch x.op {
	case GetAttr:
		if a, ok := v.g.Attr(x.targetName); ok {
			if t, ok := a.(*tensor.Tensor); ok {
				return t
			}
		}
	case Placeholder:
		return v.opts.Lifted[x.name]
	}
	return nil
}

// constSource says where constOf found x's value, for messages ("" for
// nil: a literal).
func constSource(x *Node) string {
	if x == nil {
		return ""
	}
	if x.op == GetAttr {
		return fmt.Sprintf("get_attr %q", x.targetName)
	}
	return fmt.Sprintf("lifted input %q", x.name)
}

// asFloat reads a literal number.
func asFloat(val ops.Value) (float64, bool) {
	switch x := val.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// scale checks a scale: a literal, or a constant tensor by value.
func (c *qparamCheck) scale(i int) {
	const want = "a finite scale > 0"
	switch x := c.arg(i).(type) {
	case *Node:
		t := c.v.constOf(x)
		if t == nil {
			return
		}
		vals, err := t.Float64s()
		if err != nil {
			c.report(i, "a float tensor of scales", t.DType().String(), constSource(x))
			return
		}
		bad, first := 0, -1
		for k, f := range vals {
			if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
				if bad == 0 {
					first = k
				}
				bad++
			}
		}
		if bad > 0 {
			c.report(i, "finite scales > 0", elementGot(t, first, fmt.Sprint(vals[first]), bad), constSource(x))
		}
	default:
		if f, ok := asFloat(x); ok && (math.IsNaN(f) || math.IsInf(f, 0) || f <= 0) {
			c.report(i, want, fmt.Sprint(f), "")
		}
	}
}

// elementGot describes the first bad element of t (at flat index k) and
// how many there are.
func elementGot(t *tensor.Tensor, k int, val string, bad int) string {
	if t.Numel() == 1 {
		return val
	}
	s := fmt.Sprintf("element %d = %s", k, val)
	if bad > 1 {
		s += fmt.Sprintf(" (%d of %d elements bad)", bad, t.Numel())
	}
	return s
}

// zeroPoint checks a zero point against the storage dtype d's range.
func (c *qparamCheck) zeroPoint(i int, d tensor.DType) {
	lo, hi, ok := storageBounds(d)
	if !ok {
		return
	}
	want := func() string { return fmt.Sprintf("a zero point in %s's range [%d, %d]", d, lo, hi) }
	switch x := c.arg(i).(type) {
	case int64:
		if x < lo || x > hi {
			c.report(i, want(), fmt.Sprint(x), "")
		}
	case float64:
		if math.IsNaN(x) || x < float64(lo) || x > float64(hi) {
			c.report(i, want(), fmt.Sprint(x), "")
		}
	case *Node:
		t := c.v.constOf(x)
		if t == nil {
			return
		}
		if t.DType().IsFloat() {
			// torchao's float zero-point domain: finite values.
			vals, err := t.Float64s()
			if err != nil {
				return
			}
			for k, f := range vals {
				if math.IsNaN(f) || math.IsInf(f, 0) {
					c.report(i, "finite zero points", elementGot(t, k, fmt.Sprint(f), 1), constSource(x))
					return
				}
			}
			return
		}
		vals, err := t.Int64s()
		if err != nil {
			c.report(i, "an integer or float tensor of zero points", t.DType().String(), constSource(x))
			return
		}
		bad, first := 0, -1
		for k, z := range vals {
			if z < lo || z > hi {
				if bad == 0 {
					first = k
				}
				bad++
			}
		}
		if bad > 0 {
			c.report(i, fmt.Sprintf("zero points in %s's range [%d, %d]", d, lo, hi), elementGot(t, first, fmt.Sprint(vals[first]), bad), constSource(x))
		}
	}
}

// boundValue reads a quant_min/quant_max argument: a literal, or a
// one-element constant tensor (the .tensor2 overloads). ok is false when
// the value is absent or computed; bad names a malformed one. src is the
// constant it came from (nil for a literal).
func (c *qparamCheck) boundValue(i int) (val float64, ok bool, src *Node, bad string) {
	switch x := c.arg(i).(type) {
	case *Node:
		t := c.v.constOf(x)
		if t == nil {
			return 0, false, nil, ""
		}
		if t.Numel() != 1 {
			return 0, false, x, fmt.Sprintf("%d elements", t.Numel())
		}
		vals, err := t.Float64s()
		if err != nil {
			return 0, false, x, t.DType().String()
		}
		return vals[0], true, x, ""
	default:
		f, ok := asFloat(x)
		return f, ok, nil, ""
	}
}

// quantRange checks quant_min and quant_max against the storage dtype d
// (when known) and against each other.
func (c *qparamCheck) quantRange(d tensor.DType, haveDType bool) {
	iMin, iMax := c.index(c.l.qmin), c.index(c.l.qmax)
	if iMin < 0 || iMax < 0 {
		return
	}
	lo, hi, bounded := storageBounds(d)
	bounded = bounded && haveDType
	qmin, okMin, srcMin, badMin := c.boundValue(iMin)
	qmax, okMax, srcMax, badMax := c.boundValue(iMax)
	if badMin != "" {
		c.report(iMin, "one number", badMin, constSource(srcMin))
	}
	if badMax != "" {
		c.report(iMax, "one number", badMax, constSource(srcMax))
	}
	problems := c.problems
	if okMin && (math.IsNaN(qmin) || bounded && (qmin < float64(lo) || qmin > float64(hi))) {
		c.report(iMin, fmt.Sprintf("a quant_min in %s's range [%d, %d]", d, lo, hi), fmt.Sprint(qmin), constSource(srcMin))
	}
	if okMax && (math.IsNaN(qmax) || bounded && (qmax < float64(lo) || qmax > float64(hi))) {
		c.report(iMax, fmt.Sprintf("a quant_max in %s's range [%d, %d]", d, lo, hi), fmt.Sprint(qmax), constSource(srcMax))
	}
	if c.problems == problems && okMin && okMax && qmin > qmax {
		c.report(iMin, fmt.Sprintf("quant_min <= quant_max (%v)", qmax), fmt.Sprint(qmin), constSource(srcMin))
	}
}

// shapeOf returns the shape of a tensor argument: its recorded type's, or
// a constant's. ok is false when neither is known.
func (c *qparamCheck) shapeOf(val ops.Value) ([]int64, bool) {
	x, isNode := val.(*Node)
	if !isNode || x == nil {
		return nil, false
	}
	if tt, ok := x.typ.(ops.TensorType); ok {
		return tt.Shape, true
	}
	if t := c.v.constOf(x); t != nil {
		return ops.ShapeInts(t.Shape()), true
	}
	return nil, false
}

// axis checks a per-channel axis against the input's rank, and the
// lengths of scales and zero_points against the input along it.
func (c *qparamCheck) axis(i int) {
	axis, ok := c.arg(i).(int64)
	if !ok {
		return
	}
	in, ok := c.shapeOf(c.arg(0))
	if !ok {
		return
	}
	if axis < 0 || axis >= int64(len(in)) {
		c.report(i, fmt.Sprintf("an axis in [0, %d) (the input's rank)", len(in)), fmt.Sprint(axis), "")
		return
	}
	n := in[axis]
	if n < 0 {
		return // a symbolic size
	}
	for _, j := range [2]int{c.index(c.l.scale), c.index(c.l.zp)} {
		if j < 0 {
			continue
		}
		sh, ok := c.shapeOf(c.arg(j))
		if !ok {
			continue
		}
		if len(sh) != 1 || (sh[0] >= 0 && sh[0] != n) {
			c.report(j, fmt.Sprintf("[%d] (the input's size along axis %d)", n, axis), fmt.Sprint(sh), "")
		}
	}
}
