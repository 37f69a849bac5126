package fxgraph

import (
	"fmt"
	"math"
	"strings"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// checkSchema runs the registry checks on one node: the target is known,
// the arguments fit the schema, and the node's type agrees with the op's
// result-type rule.
func (v *verifier) checkSchema(n *Node) {
	v.missingDone = false
	if !v.opts.SkipTypes && v.opts.RequireTypes && n.typ == nil {
		switch n.op {
		case Placeholder, GetAttr, CallFunction:
			// A call's rule, when it has one, reports the type it wants.
			defer func() {
				if !v.missingDone {
					v.report(v.nodeErr(n, ErrMissingType, "type", "a type", "none"))
				}
			}()
		}
	}
	if n.op != CallFunction || n.target == nil {
		return
	}
	switch t := n.target.(type) {
	case ops.Overload:
		def, ok := v.op(t)
		if !ok {
			if !v.opts.AllowOpaque {
				v.report(v.nodeErr(n, ErrUnknownTarget, "target", "an op in the registry", t.String()))
			}
			return
		}
		full, problems := v.bind(n, def.Schema)
		for _, p := range problems {
			v.report(p)
		}
		if len(problems) == 0 && !v.checkQParams(n, t, def.Schema, full) {
			v.checkResult(n, def, full)
		}
	case ops.Packet:
		overloads := v.reg.Overloads(t)
		if len(overloads) == 0 {
			if !v.opts.AllowOpaque {
				v.report(v.nodeErr(n, ErrUnknownTarget, "target", "a packet with overloads in the registry", t.String()))
			}
			return
		}
		var tried []string
		var first []*VerifyError
		for _, o := range overloads {
			def, ok := v.op(o)
			if !ok {
				continue
			}
			full, problems := v.bind(n, def.Schema)
			if len(problems) == 0 {
				if !v.checkQParams(n, o, def.Schema, full) {
					v.checkResult(n, def, full)
				}
				return
			}
			if first == nil {
				first = problems
			}
			if len(tried) < maxListed {
				tried = append(tried, o.Name)
			}
		}
		e := v.nodeErr(n, ErrArity, "args", "arguments that fit an overload of "+t.String(),
			"none fits (tried "+strings.Join(tried, ", ")+")")
		if len(first) > 0 {
			e.Check = first[0].Check
			e.Detail = fmt.Sprintf("%s: %s", overloads[0].Name, strings.TrimPrefix(first[0].Error(), fmt.Sprintf("node %q (%s): ", n.name, t)))
		}
		v.report(e)
	case ops.Callable:
		if t == ops.GetItem {
			v.checkGetItem(n)
			return
		}
		if arity, ok := ops.SymScalarArity(t); ok {
			v.checkSymScalar(n, arity)
			return
		}
		if !v.reg.Known(t) && !v.opts.AllowOpaque {
			v.report(v.nodeErr(n, ErrUnknownTarget, "target", "a callable the registry knows", t.String()))
		}
	}
}

// opCacheSize bounds the verifier's cache of recent overload lookups. A
// graph calls few distinct overloads, and each cached entry is found by
// comparing strings that usually share their bytes (one pointer compare),
// which is cheaper than hashing three strings for the registry's map.
const opCacheSize = 8

type opCacheEntry struct {
	o   ops.Overload
	def *ops.OpDef
	ok  bool
}

// op looks o up in the registry through a small most-recent-first cache.
func (v *verifier) op(o ops.Overload) (*ops.OpDef, bool) {
	for i := range v.opCache {
		if e := &v.opCache[i]; e.o == o {
			if i > 0 {
				hit := *e
				copy(v.opCache[1:i+1], v.opCache[:i])
				v.opCache[0] = hit
			}
			return v.opCache[0].def, v.opCache[0].ok
		}
	}
	def, ok := v.reg.Op(o)
	if len(v.opCache) < opCacheSize {
		v.opCache = append(v.opCache, opCacheEntry{})
	}
	copy(v.opCache[1:], v.opCache[:len(v.opCache)-1])
	v.opCache[0] = opCacheEntry{o: o, def: def, ok: ok}
	return def, ok
}

// normalize is [ops.Schema.Normalize] for the common well-formed call
// (no "..." arguments, no error), filling the verifier's reusable buffer
// instead of allocating; the result is valid until the next call. Any
// call it does not handle, errors included, goes to Normalize itself, so
// the result and the error text are Normalize's.
func (v *verifier) normalize(s *ops.Schema, args []ops.Value, kwargs []Kwarg) ([]ops.Value, error) {
	k := len(s.Args)
	if s.VarArgs || len(args) > k {
		return s.Normalize(args, kwargs)
	}
	if cap(v.full) < k {
		v.full = make([]ops.Value, k)
		v.set = make([]bool, k)
	}
	out, set := v.full[:k], v.set[:k]
	clear(set)
	for i, a := range args {
		if s.Args[i].KwargOnly {
			return s.Normalize(args, kwargs)
		}
		out[i], set[i] = a, true
	}
	for _, kw := range kwargs {
		i := s.ArgIndex(kw.Name)
		if i < 0 || set[i] {
			return s.Normalize(args, kwargs)
		}
		out[i], set[i] = kw.Value, true
	}
	for i := range s.Args {
		if set[i] {
			continue
		}
		a := &s.Args[i]
		if !a.HasDefault {
			return s.Normalize(args, kwargs)
		}
		out[i] = a.Default
	}
	return out, nil
}

// bind normalises n's arguments against s and checks the kind of every
// value the node gives (defaults come from the schema and are trusted).
// The returned slice is valid until the next bind.
func (v *verifier) bind(n *Node, s *ops.Schema) ([]ops.Value, []*VerifyError) {
	full, err := v.normalize(s, n.args, n.Kwargs())
	if err != nil {
		e := v.nodeErr(n, ErrArity, "args", "", "")
		e.Err = err
		return nil, []*VerifyError{e}
	}
	var problems []*VerifyError
	wrap := numbersAsTensors(n.target)
	// The field name is built only for a message: pos >= 0 names
	// positional argument pos, otherwise the keyword kw.
	check := func(pos int, kw string, val ops.Value, a ops.Argument) {
		if wrap && !a.Type.List && a.Type.Base == "Tensor" && ops.IsWrappedNumber(val) {
			return // a wrapped number: PyTorch makes it a 0-dim tensor
		}
		if ok, got := argFits(val, a.Type); !ok {
			field := "kwarg " + kw
			if pos >= 0 {
				field = fmt.Sprintf("arg %d (%s)", pos, a.Name)
			}
			problems = append(problems, v.nodeErr(n, ErrArgKind, field, argTypeString(a.Type), got))
		}
	}
	for i, a := range n.args {
		if i >= len(s.Args) {
			break // VarArgs
		}
		check(i, "", a, s.Args[i])
	}
	for _, kw := range n.Kwargs() {
		if i := s.ArgIndex(kw.Name); i >= 0 {
			check(-1, kw.Name, kw.Value, s.Args[i])
		}
	}
	return full, problems
}

// numbersAsTensors reports whether the target's Tensor arguments accept a
// Python number (bool, int or float), as PyTorch's Python binding does for
// the ops of [ops.AllowsNumbersAsTensors] (aten add, sub, mul, div, ...).
func numbersAsTensors(t ops.Target) bool {
	switch x := t.(type) {
	case ops.Overload:
		return ops.AllowsNumbersAsTensors(x.Packet)
	case ops.Packet:
		return ops.AllowsNumbersAsTensors(x)
	}
	return false
}

// checkResult applies def's result-type rule to the normalised arguments
// (node references replaced by their types) and compares with n's type.
func (v *verifier) checkResult(n *Node, def *ops.OpDef, full []ops.Value) {
	if v.opts.SkipTypes {
		return
	}
	if def.Result == nil {
		// An op without a rule keeps its recorded type; what its schema
		// says about the result is that a written argument comes back.
		v.checkWritten(n, def, full)
		return
	}
	if n.typ == nil && !v.opts.RequireTypes {
		return
	}
	untyped := false
	if cap(v.typed) < len(full) {
		v.typed = make([]ops.Value, len(full))
	}
	typed := v.typed[:len(full)]
	defer clear(typed) // keep no references past the call
	for i, a := range full {
		switch x := a.(type) {
		case *Node: // the common case, without MapValue's closure
			if x == nil || x.typ == nil {
				return
			}
			typed[i] = x.typ
			continue
		case ops.List, ops.Tuple, ops.Dict, ops.Slice:
		default:
			typed[i] = a
			continue
		}
		m, err := ops.MapValue(a, func(x ops.Value) (ops.Value, error) {
			if ref, ok := x.(*Node); ok {
				if ref == nil || ref.typ == nil {
					untyped = true
					return nil, nil
				}
				return ref.typ, nil
			}
			return x, nil
		})
		if err != nil || untyped {
			return // an input without a type: reported on that input when types are required
		}
		typed[i] = m
	}
	var want ops.Type
	var err error
	if v.opts.ResultType != nil {
		want, err = v.opts.ResultType(n, def, typed)
	} else if m := v.memo(def, typed); m != nil && m.ok {
		want, err = m.want, m.err
	} else {
		want, err = ops.ApplyRule(def.Result, typed)
		if m != nil {
			m.store(def, typed, want, err)
		}
	}
	if err != nil {
		e := v.nodeErr(n, ErrTypeMismatch, "", "", "")
		e.Err = err
		v.report(e)
		return
	}
	if want == nil {
		return
	}
	v.compareType(n, want)
}

// checkWritten checks, for an op without a result-type rule, that every
// result the schema declares as a written argument ("add_.Tensor(Tensor(a!)
// self, ...) -> Tensor(a!)", an out= form's "out") has that argument's type.
func (v *verifier) checkWritten(n *Node, def *ops.OpDef, full []ops.Value) {
	if n.typ == nil {
		return
	}
	s := def.Schema
	for i, r := range s.Returns {
		if !r.Type.Write || r.Type.List {
			continue
		}
		k := s.AliasedArg(i)
		if k < 0 || k >= len(full) {
			continue
		}
		src, ok := full[k].(*Node)
		if !ok || src == nil || src.typ == nil {
			continue
		}
		got := n.typ
		if len(s.Returns) != 1 {
			tt, ok := n.typ.(ops.TupleType)
			if !ok || i >= len(tt.Elems) || tt.Elems[i] == nil {
				continue
			}
			got = tt.Elems[i]
		}
		if !ops.TypesEqual(src.typ, got) {
			field := "type"
			if len(s.Returns) != 1 {
				field = fmt.Sprintf("type (result %d)", i)
			}
			e := v.nodeErr(n, ErrTypeMismatch, field, src.typ.String()+" (the type of "+s.Args[k].Name+", which it writes and returns)", got.String())
			v.report(e)
		}
	}
}

func (v *verifier) compareType(n *Node, want ops.Type) {
	if n.typ == nil {
		if v.opts.RequireTypes {
			v.missingDone = true
			v.report(v.nodeErr(n, ErrMissingType, "type", want.String(), "none"))
		}
		return
	}
	if !ops.TypesEqual(want, n.typ) && !ops.TypeAccepts(want, n.typ) {
		e := v.nodeErr(n, ErrTypeMismatch, "type", want.String(), n.typ.String())
		if d := ops.TypeDiff(want, n.typ); d != "" && !strings.HasPrefix(d, "want ") {
			e.Detail = d
		}
		v.report(e)
	}
}

// checkGetItem checks operator.getitem(node, int): the shape FX gives tuple
// unpacking of multi-result ops, and its type against the tuple element.
func (v *verifier) checkGetItem(n *Node) {
	if len(n.args) != 2 || len(n.Kwargs()) != 0 {
		v.report(v.nodeErr(n, ErrArity, "args", "2 args (a node and an index), no kwargs", fmt.Sprintf("%d args, %d kwargs", len(n.args), len(n.Kwargs()))))
		return
	}
	src, ok := n.args[0].(*Node)
	if !ok {
		v.report(v.nodeErr(n, ErrArgKind, "arg 0", "a node", describe(n.args[0])))
	}
	idx, ok := n.args[1].(int64)
	if !ok {
		v.report(v.nodeErr(n, ErrArgKind, "arg 1", "int", describe(n.args[1])))
		return
	}
	if src == nil || v.opts.SkipTypes || src.typ == nil {
		return
	}
	tt, ok := src.typ.(ops.TupleType)
	if !ok {
		return
	}
	if idx < 0 || idx >= int64(len(tt.Elems)) {
		v.report(v.nodeErr(n, ErrTypeMismatch, "arg 1", fmt.Sprintf("an index in [0, %d)", len(tt.Elems)), fmt.Sprint(idx)))
		return
	}
	if tt.Elems[idx] != nil {
		v.compareType(n, tt.Elems[idx])
	}
}

// argTypeString prints a schema type as PyTorch writes it: "Tensor?",
// "int[2]", "Tensor?[]".
func argTypeString(t ops.ArgType) string {
	s := t.Base
	if t.List {
		if t.ElemOptional {
			s += "?"
		}
		if t.ListLen > 0 {
			s += fmt.Sprintf("[%d]", t.ListLen)
		} else {
			s += "[]"
		}
	}
	if t.Optional {
		s += "?"
	}
	return s
}

// describe names a value's kind and value for messages: "int 3",
// "float 0.5", "None", "node %x (f32[2])", "list of 2",
// "OpOverload aten.linear.default".
func describe(val ops.Value) string {
	switch x := val.(type) {
	case nil:
		return "None"
	case *Node:
		if x == nil {
			return "a nil node"
		}
		if x.typ != nil {
			return fmt.Sprintf("node %s (%s)", x, x.typ)
		}
		return "node " + x.String()
	case bool:
		return fmt.Sprintf("bool %v", x)
	case int64:
		return fmt.Sprintf("int %d", x)
	case float64:
		return fmt.Sprintf("float %v", x)
	case string:
		return fmt.Sprintf("str %q", x)
	case complex128:
		return fmt.Sprintf("complex %v", x)
	case tensor.DType:
		return "ScalarType " + x.String()
	case ops.Device:
		return fmt.Sprintf("Device %q", string(x))
	case ops.Layout:
		return "Layout " + x.String()
	case ops.MemoryFormat:
		return "MemoryFormat " + x.String()
	case ops.List:
		return fmt.Sprintf("list of %d", len(x))
	case ops.Tuple:
		return fmt.Sprintf("tuple of %d", len(x))
	case ops.Dict:
		return fmt.Sprintf("dict of %d", len(x.Keys))
	case ops.Slice:
		return "slice"
	case ops.Overload:
		return "OpOverload " + x.String()
	case ops.Packet:
		return "OpOverloadPacket " + x.String()
	case ops.Callable:
		return "function " + x.String()
	}
	return fmt.Sprintf("Go type %T", val)
}

// argFits reports whether val may be passed for a schema argument of type
// t, and if not, describes what was found.
func argFits(val ops.Value, t ops.ArgType) (bool, string) {
	if val == nil {
		if t.Optional || t.Base == "Any" || t.Base == "Generator" {
			return true, ""
		}
		return false, "None"
	}
	if t.List {
		elems, isSeq := ops.Sequence(val)
		if !isSeq {
			// "int[2] stride=1": PyTorch broadcasts one int to the list.
			if t.ListLen > 0 {
				if ok, _ := scalarFits(val, t.Base); ok {
					return true, ""
				}
			}
			return false, describe(val)
		}
		// The N of "int[N]" lets a bare int stand for the list but does
		// not fix its length: "int[1]? dim" takes [2, 3].
		for i, e := range elems {
			if e == nil && t.ElemOptional {
				continue
			}
			if ok, got := scalarFits(e, t.Base); !ok {
				return false, fmt.Sprintf("element %d: %s", i, got)
			}
		}
		return true, ""
	}
	return scalarFits(val, t.Base)
}

// scalarFits checks one non-list value against a base type, and if it
// does not fit, describes what was found.
func scalarFits(val ops.Value, base string) (bool, string) {
	if scalarFitsOK(val, base) {
		return true, ""
	}
	return false, describe(val)
}

// scalarFitsOK checks one non-list value against a base type. Node
// references fit when their type is unknown or of the right sort.
func scalarFitsOK(val ops.Value, base string) bool {
	if n, ok := val.(*Node); ok {
		if n == nil || n.typ == nil {
			return true
		}
		_, isTensor := n.typ.(ops.TensorType)
		py, isPy := n.typ.(ops.PyType)
		switch base {
		case "Tensor":
			return isTensor
		case "int", "SymInt":
			return isPy && (py.Name == "int" || py.Name == "SymInt")
		case "float", "SymFloat":
			return isPy && (py.Name == "float" || py.Name == "SymFloat")
		case "bool", "SymBool":
			return isPy && (py.Name == "bool" || py.Name == "SymBool")
		case "Scalar":
			return isPy
		case "Any", "t":
			return true
		}
		return !isTensor
	}
	if _, isOp := val.(ops.Target); isOp {
		// An operator passed as an argument (out_dtype's op) fits only
		// an untyped argument.
		return base == "Any" || base == "t"
	}
	ok := false
	switch base {
	case "Tensor":
		ok = false
	case "int", "SymInt":
		_, ok = val.(int64)
	case "float", "SymFloat":
		_, ok = val.(float64)
	case "bool", "SymBool":
		_, ok = val.(bool)
	case "complex":
		_, ok = val.(complex128)
	case "Scalar":
		switch val.(type) {
		case int64, float64, bool, complex128:
			ok = true
		}
	case "str", "Dimname":
		_, ok = val.(string)
	case "ScalarType":
		_, ok = val.(tensor.DType)
	case "Layout":
		_, ok = val.(ops.Layout)
	case "MemoryFormat":
		_, ok = val.(ops.MemoryFormat)
	case "Device":
		switch val.(type) {
		case ops.Device, string:
			ok = true
		}
	default:
		ok = true // Any, Generator, Storage, ...: not checked
	}
	return ok
}

// resultMemo remembers one op's last result-rule call. Rules are pure
// functions of their typed arguments, so a node whose typed arguments are
// the same values as the remembered call's (types sharing their shape
// arrays and equal element types, equal literals) gets the remembered
// answer; its own type is still compared with it.
type resultMemo struct {
	def  *ops.OpDef
	args []ops.Value
	want ops.Type
	err  error
	ok   bool
}

// memo returns the memo slot for def with ok set when typed matches it, or
// nil when typed holds a value memo cannot compare cheaply.
func (v *verifier) memo(def *ops.OpDef, typed []ops.Value) *resultMemo {
	for _, a := range typed {
		if !memoizable(a) {
			return nil
		}
	}
	var slot *resultMemo
	for i := range v.memos {
		if v.memos[i].def == def {
			slot = &v.memos[i]
			break
		}
	}
	if slot == nil {
		slot = &v.memos[v.memoNext%len(v.memos)]
		v.memoNext++
		slot.def = nil
	}
	slot.ok = slot.def == def && len(slot.args) == len(typed)
	if slot.ok {
		for i, a := range typed {
			if !sameArg(slot.args[i], a) {
				slot.ok = false
				break
			}
		}
	}
	return slot
}

func (m *resultMemo) store(def *ops.OpDef, typed []ops.Value, want ops.Type, err error) {
	m.def = def
	m.args = append(m.args[:0], typed...)
	m.want, m.err = want, err
}

func memoizable(a ops.Value) bool {
	switch x := a.(type) {
	case nil, bool, int64, float64, string, tensor.DType:
		return true
	case ops.TensorType:
		switch x.Elem.(type) {
		case nil, ops.Scalar, ops.UniformQuantized:
			return true
		}
	}
	return false
}

// sameArg reports whether two memoizable values are the same for a rule:
// floats bit for bit, tensor types by shape array identity and element.
func sameArg(a, b ops.Value) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool, int64, string, tensor.DType:
		return a == b
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case ops.TensorType:
		y, ok := b.(ops.TensorType)
		if !ok || len(x.Shape) != len(y.Shape) || (len(x.Shape) > 0 && &x.Shape[0] != &y.Shape[0]) {
			return false
		}
		switch ex := x.Elem.(type) {
		case nil:
			return y.Elem == nil
		case ops.Scalar:
			ey, ok := y.Elem.(ops.Scalar)
			return ok && ex == ey
		case ops.UniformQuantized:
			ey, ok := y.Elem.(ops.UniformQuantized)
			return ok && ex.StorageType == ey.StorageType && ex.StorageMin == ey.StorageMin && ex.StorageMax == ey.StorageMax &&
				ex.Expressed == ey.Expressed && math.Float64bits(ex.Scale) == math.Float64bits(ey.Scale) && ex.ZeroPoint == ey.ZeroPoint
		}
	}
	return false
}
