package pt2

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// Symbolic shapes: programs exported with torch.export.Dim record sizes,
// strides and storage offsets as sympy expressions (SymInt as_expr), list
// each symbol's range in range_constraints and each symbolic scalar node's
// value in sym_int_values. The reader keeps every expr_str as written, so
// that an unchanged tensor's metadata writes back byte for byte; the graph
// gets the symbols (fxgraph.Symbol) and each type its symbolic dimensions
// in readable form (f32[s77, 16]).

// symInt is one serialized SymInt that is an expression: the expression,
// the expr_str text it was read from or will be written as, and its hint.
type symInt struct {
	Expr   *ops.SymExpr
	Text   string
	Hint   *int64
	Assume []ops.SymAssumption // the symbols' srepr assumptions in Text
	Plain  bool                // Text is sympy's str form, not an srepr
}

// symMeta holds the symbolic entries of a tensorMeta, by position; an
// entry whose Expr is nil is the plain int of tensorMeta.
type symMeta struct {
	Sizes, Strides []symInt
	Offset         *symInt
}

// decodeSymExpr reads the SymExpr object {"expr_str": ..., "hint": ...}.
func decodeSymExpr(raw json.RawMessage, path string) (symInt, error) {
	var s symInt
	o, err := decodeObject(raw, path)
	if err != nil {
		return s, err
	}
	if s.Text, err = o.reqString("expr_str"); err != nil {
		return s, err
	}
	var srepr bool
	if s.Expr, s.Assume, srepr, err = ops.ParseSympy(s.Text); err != nil {
		return s, pathErr(o.sub("expr_str"), fmt.Errorf("%w: %w", ErrUnsupported, err))
	}
	s.Plain = !srepr
	if h := o.get("hint"); h != nil && !isNull(h) {
		tag, v, err := union(h, o.sub("hint"))
		if err != nil {
			return s, err
		}
		if tag != "as_int" {
			return s, pathErr(o.sub("hint"), fmt.Errorf("%w: %s hint of a symbolic size", ErrUnsupported, tag))
		}
		n, err := decodeInt(v, dotPath(o.sub("hint"), "as_int"))
		if err != nil {
			return s, err
		}
		s.Hint = &n
	}
	return s, nil
}

// symTexts returns the readable form of each dimension of m's sizes, ""
// for static ones, or nil when every size is static.
func (m tensorMeta) symTexts() []string {
	if m.Sym == nil || m.Sym.Sizes == nil {
		return nil
	}
	out := make([]string, len(m.Sym.Sizes))
	for i, s := range m.Sym.Sizes {
		if s.Expr != nil {
			out[i] = s.Expr.String()
		}
	}
	return out
}

// sameShape reports whether m's sizes are t's shape, symbols included.
func (m tensorMeta) sameShape(t ops.TensorType) bool {
	if !slices.Equal(m.Sizes, t.Shape) {
		return false
	}
	if m.Sym == nil && len(t.Syms) == 0 {
		return true
	}
	return (ops.TensorType{Shape: t.Shape, Syms: m.symTexts()}).Equal(ops.TensorType{Shape: t.Shape, Syms: t.Syms})
}

// namedMeta is a tensor_values entry that has symbolic entries.
type namedMeta struct {
	name string
	m    tensorMeta
}

// symbolTable gathers the graph's symbols: those of range_constraints in
// its order, then those met in the symbolic tensor_values (metas, in
// their order) and sym_int_values, with the hint recorded where a symbol
// stands alone and the assumptions of its srepr. A symbol recorded with
// two different hints is an error.
func symbolTable(rc json.RawMessage, metas []namedMeta, vals []symVal) ([]fxgraph.Symbol, bool, error) {
	var syms []fxgraph.Symbol
	index := map[string]int{}
	hintAt := map[string]string{}
	plain := false
	add := func(name string) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(syms)
		syms = append(syms, fxgraph.Symbol{Name: name})
		return len(syms) - 1
	}
	if !isNull(rc) {
		entries, err := objectEntries(rc, "range_constraints")
		if err != nil {
			return nil, false, err
		}
		for _, e := range entries {
			path := fmt.Sprintf("range_constraints[%q]", e.Key)
			// A key is a symbol ("s77") or, for a derived Dim, an
			// expression of symbols in sympy's str form ("2*s74").
			if k, err := ops.ParseSymExpr(e.Key); err != nil || k.Kind == ops.SymInteger || strings.ContainsAny(e.Key, ":\n") {
				return nil, false, pathErrf(path, "range constraint of %q, which is not a symbol or an expression of symbols", e.Key)
			}
			o, err := decodeObject(e.Val, path)
			if err != nil {
				return nil, false, err
			}
			i := add(e.Key)
			syms[i].Ranged = true
			for _, k := range []string{"min_val", "max_val"} {
				v := o.get(k)
				if v == nil || isNull(v) {
					continue
				}
				n, err := decodeInt(v, o.sub(k))
				if err != nil {
					return nil, false, err
				}
				if k == "min_val" {
					syms[i].Min = &n
				} else {
					syms[i].Max = &n
				}
			}
			// PyTorch 2.14's loader builds a ValueRanges from each entry,
			// which raises ValueRangeError for an empty range.
			if mn, mx := syms[i].Min, syms[i].Max; mn != nil && mx != nil && *mn > *mx {
				return nil, false, pathErrf(path, "empty range: min_val %d is greater than max_val %d", *mn, *mx)
			}
		}
	}
	note := func(s symInt, path string) error {
		plain = plain || s.Plain
		for _, name := range s.Expr.Symbols() {
			add(name)
		}
		for _, a := range s.Assume {
			sym := &syms[index[a.Name]]
			if sym.Assumptions == "" {
				sym.Assumptions = a.Assumptions
			} else if sym.Assumptions != a.Assumptions {
				return pathErrf(path, "symbol %s has assumptions (%s) here and (%s) elsewhere", a.Name, a.Assumptions, sym.Assumptions)
			}
		}
		if s.Expr.Kind == ops.SymSymbol && s.Hint != nil {
			sym := &syms[index[s.Expr.Name]]
			if sym.Hint == nil {
				h := *s.Hint
				sym.Hint = &h
				hintAt[s.Expr.Name] = path
			} else if *sym.Hint != *s.Hint {
				return pathErrf(path, "symbol %s has hint %d here and %d at %s", s.Expr.Name, *s.Hint, *sym.Hint, hintAt[s.Expr.Name])
			}
		}
		return nil
	}
	for _, e := range metas {
		m := e.m
		path := fmt.Sprintf("graph_module.graph.tensor_values[%q]", e.name)
		for i, s := range m.Sym.Sizes {
			if s.Expr != nil {
				if err := note(s, fmt.Sprintf("%s.sizes[%d]", path, i)); err != nil {
					return nil, false, err
				}
			}
		}
		for i, s := range m.Sym.Strides {
			if s.Expr != nil {
				if err := note(s, fmt.Sprintf("%s.strides[%d]", path, i)); err != nil {
					return nil, false, err
				}
			}
		}
		if m.Sym.Offset != nil {
			if err := note(*m.Sym.Offset, path+".storage_offset"); err != nil {
				return nil, false, err
			}
		}
	}
	for _, v := range vals {
		if v.Val.Expr != nil {
			if err := note(v.Val, fmt.Sprintf("graph_module.graph.sym_int_values[%q]", v.Name)); err != nil {
				return nil, false, err
			}
		}
	}
	// A symbol that never stands alone (a derived Dim's s74, seen only as
	// 2*s74) takes its hint from an expression's hint, solved for it.
	for _, e := range metas {
		for _, s := range e.m.Sym.Sizes {
			solveHint(syms, index, s)
		}
	}
	return syms, plain, nil
}

// symVal is one entry of sym_int_values: an int (Expr nil, Int) or an
// expression.
type symVal struct {
	Name string
	Val  symInt
	Int  int64
}

// decodeSymIntValues reads graph.sym_int_values.
func decodeSymIntValues(raw json.RawMessage, path string) ([]symVal, error) {
	entries, err := objectEntries(raw, path)
	if err != nil {
		return nil, err
	}
	out := make([]symVal, 0, len(entries))
	for _, e := range entries {
		n, expr, err := decodeSymInt(e.Val, keyPath(path, e.Key))
		if err != nil {
			return nil, err
		}
		sv := symVal{Name: e.Key}
		if expr != nil {
			sv.Val = *expr
		} else {
			sv.Int = n
		}
		out = append(out, sv)
	}
	return out, nil
}

// --- writing --------------------------------------------------------------

// symWriter renders new symbolic values for one write: expr_str texts in
// the program's style with each symbol's assumptions, and hints from the
// symbols' hints.
type symWriter struct {
	syms  map[string]fxgraph.Symbol
	plain bool
}

func newSymWriter(g *fxgraph.Graph, plain bool) *symWriter {
	w := &symWriter{syms: map[string]fxgraph.Symbol{}, plain: plain}
	for _, s := range g.Symbols() {
		w.syms[s.Name] = s
	}
	return w
}

// value returns the symInt of e: an int when e is an integer.
func (sw *symWriter) value(e *ops.SymExpr) (symInt, int64, error) {
	if e.Kind == ops.SymInteger {
		return symInt{}, e.Int, nil
	}
	for _, name := range e.Symbols() {
		if _, ok := sw.syms[name]; !ok {
			return symInt{}, 0, fmt.Errorf("symbol %s is not declared by the graph", name)
		}
	}
	s := symInt{Expr: e}
	if sw.plain {
		s.Text = e.String()
	} else {
		s.Text = e.Srepr(func(n string) string { return sw.syms[n].Assumptions })
	}
	if h, err := e.Eval(func(n string) (int64, bool) {
		if p := sw.syms[n].Hint; p != nil {
			return *p, true
		}
		return 0, false
	}); err == nil {
		s.Hint = &h
	}
	return s, 0, nil
}

// meta builds the TensorMeta of a value of symbolic type t, as
// encoder.defineTensor writes static ones: its sizes, contiguous strides
// (products in sympy's order: 8*s77, 16*s27*s77), offset 0, on the CPU.
// torch.export writes other strides for views (a transpose, Min(8, 8*s77)
// after one); a tensor read from a file keeps the metadata it had.
func (sw *symWriter) meta(t ops.TensorType, requiresGrad bool) (tensorMeta, error) {
	d := t.DType()
	if d.SerdeCode() == 0 {
		return tensorMeta{}, fmt.Errorf("dtype %s has no ScalarType in the export format", d)
	}
	n := len(t.Shape)
	m := tensorMeta{DType: d, Sizes: slices.Clone(t.Shape), Strides: make([]int64, n), RequiresGrad: requiresGrad,
		DeviceType: "cpu", Layout: int64(ops.LayoutStrided), Sym: &symMeta{Sizes: make([]symInt, n), Strides: make([]symInt, n)}}
	dims := make([]*ops.SymExpr, n)
	for i, size := range t.Shape {
		if size >= 0 {
			dims[i] = ops.SymInt(size)
			continue
		}
		if i >= len(t.Syms) || t.Syms[i] == "" {
			return tensorMeta{}, fmt.Errorf("dimension %d of %s has no symbol", i, t)
		}
		e, err := ops.ParseSymExpr(t.Syms[i])
		if err != nil {
			return tensorMeta{}, fmt.Errorf("dimension %d: %w", i, err)
		}
		dims[i] = e
		if m.Sym.Sizes[i], _, err = sw.value(e); err != nil {
			return tensorMeta{}, fmt.Errorf("dimension %d: %w", i, err)
		}
	}
	acc := ops.SymInt(1)
	for i := n - 1; i >= 0; i-- {
		s, v, err := sw.value(acc)
		if err != nil {
			return tensorMeta{}, err
		}
		if s.Expr != nil {
			m.Strides[i], m.Sym.Strides[i] = ops.DynamicDim, s
		} else {
			m.Strides[i] = v
		}
		d := dims[i]
		if d.Kind == ops.SymInteger && d.Int < 1 {
			d = ops.SymInt(1)
		}
		acc = symMul(acc, d)
	}
	return m, nil
}

// symMul multiplies two expressions as sympy orders a product: the
// integer coefficient first (left out when it is 1), then the other
// factors sorted by their text (symbol names: s27 before s77).
func symMul(a, b *ops.SymExpr) *ops.SymExpr {
	coef, factors := symOperands(ops.SymMul, a, b, 1, func(x, y int64) int64 { return x * y })
	if coef == 0 || len(factors) == 0 {
		return ops.SymInt(coef)
	}
	slices.SortStableFunc(factors, func(x, y *ops.SymExpr) int { return strings.Compare(x.String(), y.String()) })
	if coef != 1 {
		factors = append([]*ops.SymExpr{ops.SymInt(coef)}, factors...)
	}
	if len(factors) == 1 {
		return factors[0]
	}
	return &ops.SymExpr{Kind: ops.SymMul, Args: factors}
}

// symAdd adds two expressions as sympy orders a sum: the other terms in
// order, the integer constant last (left out when it is 0).
func symAdd(a, b *ops.SymExpr) *ops.SymExpr {
	c, terms := symOperands(ops.SymAdd, a, b, 0, func(x, y int64) int64 { return x + y })
	if c != 0 || len(terms) == 0 {
		terms = append(terms, ops.SymInt(c))
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return &ops.SymExpr{Kind: ops.SymAdd, Args: terms}
}

// symOperands flattens a and b, each an expression of kind (its
// arguments) or one operand, into their integers, folded by fold from id
// in order, and their other operands, in order.
func symOperands(kind ops.SymKind, a, b *ops.SymExpr, id int64, fold func(x, y int64) int64) (int64, []*ops.SymExpr) {
	c := id
	var rest []*ops.SymExpr
	for _, x := range []*ops.SymExpr{a, b} {
		parts := []*ops.SymExpr{x}
		if x.Kind == kind {
			parts = x.Args
		}
		for _, p := range parts {
			if p.Kind == ops.SymInteger {
				c = fold(c, p.Int)
			} else {
				rest = append(rest, p)
			}
		}
	}
	return c, rest
}

// symNodeExpr derives the value of a symbolic scalar node that was not
// read from a file: aten.sym_size.int of a tensor's dimension, or
// operator add, sub, mul and floordiv of such values and ints.
func symNodeExpr(n *fxgraph.Node, memo map[*fxgraph.Node]*ops.SymExpr) (*ops.SymExpr, error) {
	if e, ok := memo[n]; ok {
		return e, nil
	}
	arg := func(v ops.Value) (*ops.SymExpr, error) {
		switch x := v.(type) {
		case int64:
			return ops.SymInt(x), nil
		case *fxgraph.Node:
			return symNodeExpr(x, memo)
		}
		return nil, fmt.Errorf("argument %v is not an int or a symbolic node", v)
	}
	var e *ops.SymExpr
	switch t := n.Target().(type) {
	case ops.Overload:
		if t.Packet.NS != "aten" || t.Packet.Name != "sym_size" || t.Name != "int" || len(n.Args()) != 2 {
			return nil, fmt.Errorf("node %s: the value of %s is not derived", n.Name(), t)
		}
		src, ok := n.Arg(0).(*fxgraph.Node)
		dim, ok2 := n.Arg(1).(int64)
		if !ok || !ok2 {
			return nil, fmt.Errorf("node %s: want sym_size.int(tensor, dim)", n.Name())
		}
		tt, ok := src.Type().(ops.TensorType)
		if !ok {
			return nil, fmt.Errorf("node %s: input %s has no tensor type", n.Name(), src.Name())
		}
		if dim < 0 {
			dim += int64(tt.Rank())
		}
		if dim < 0 || dim >= int64(tt.Rank()) {
			return nil, fmt.Errorf("node %s: dim %d out of range for %s", n.Name(), n.Arg(1), tt)
		}
		if tt.Shape[dim] >= 0 {
			e = ops.SymInt(tt.Shape[dim])
		} else {
			var err error
			if dim >= int64(len(tt.Syms)) || tt.Syms[dim] == "" {
				return nil, fmt.Errorf("node %s: dimension %d of %s has no symbol", n.Name(), dim, tt)
			}
			if e, err = ops.ParseSymExpr(tt.Syms[dim]); err != nil {
				return nil, fmt.Errorf("node %s: %w", n.Name(), err)
			}
		}
	case ops.Callable:
		if t.Module != "operator" && t.Module != "_operator" || len(n.Args()) != 2 {
			return nil, fmt.Errorf("node %s: the value of %s is not derived", n.Name(), t)
		}
		a, err := arg(n.Arg(0))
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name(), err)
		}
		b, err := arg(n.Arg(1))
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name(), err)
		}
		switch t.Name {
		case "add":
			e = symAdd(a, b)
		case "sub":
			e = symAdd(a, symMul(ops.SymInt(-1), b))
		case "mul":
			e = symMul(a, b)
		case "floordiv":
			e = &ops.SymExpr{Kind: ops.SymFloorDiv, Args: []*ops.SymExpr{a, b}}
			if a.Kind == ops.SymInteger && b.Kind == ops.SymInteger {
				v, err := e.Eval(nil)
				if err != nil {
					return nil, fmt.Errorf("node %s: %w", n.Name(), err)
				}
				e = ops.SymInt(v)
			}
		default:
			return nil, fmt.Errorf("node %s: the value of operator.%s is not derived", n.Name(), t.Name)
		}
	default:
		return nil, fmt.Errorf("node %s: the value of a %s node is not derived", n.Name(), n.Op())
	}
	memo[n] = e
	return e, nil
}

// writeSymInt writes one SymInt: {"as_int": v} or {"as_expr": {...}}.
func (w *pyWriter) writeSymInt(s *symInt, v int64) {
	w.beginObject()
	if s == nil || s.Expr == nil {
		w.keyLit("as_int")
		w.int(v)
		w.endObject()
		return
	}
	w.keyLit("as_expr")
	w.beginObject()
	w.keyLit("expr_str")
	w.str(s.Text)
	w.keyLit("hint")
	if s.Hint == nil {
		w.null()
	} else {
		w.beginObject()
		w.keyLit("as_int")
		w.int(*s.Hint)
		w.endObject()
	}
	w.endObject()
	w.endObject()
}

// rangeConstraints writes range_constraints from the graph's symbols.
func (w *pyWriter) rangeConstraints(syms []fxgraph.Symbol) {
	w.beginObject()
	for _, s := range syms {
		if !s.Ranged {
			continue
		}
		w.key(s.Name)
		w.beginObject()
		for i, b := range []*int64{s.Min, s.Max} {
			w.key([]string{"min_val", "max_val"}[i])
			if b == nil {
				w.null()
			} else {
				w.int(*b)
			}
		}
		w.endObject()
	}
	w.endObject()
}

// symbols gives the graph its symbol table and keeps sym_int_values for
// the writer.
func (b *builder) symbols(metas []namedMeta, vals []symVal) error {
	table, plain, err := symbolTable(b.p.RangeConstraints, metas, vals)
	if err != nil {
		return err
	}
	if err := b.g.SetSymbols(table); err != nil {
		return pathErr("range_constraints", err)
	}
	b.p.symPlain = plain
	if len(vals) > 0 {
		b.p.symVals = make(map[string]symVal, len(vals))
		for _, v := range vals {
			b.p.symVals[v.Name] = v
		}
	}
	return nil
}

func (e *encoder) symbolic() *symWriter {
	if e.syms == nil {
		e.syms = newSymWriter(e.p.Graph, e.p.symPlain)
	}
	return e.syms
}

// symIntValues writes sym_int_values: one entry per symbolic int node of
// the graph, in program order, with the value read for it or, for a node
// the file did not have, the value derived from its inputs.
func (e *encoder) symIntValues() error {
	w := e.w
	w.beginObject()
	memo := map[*fxgraph.Node]*ops.SymExpr{}
	for n := range e.p.Graph.All() {
		if pt, ok := n.Type().(ops.PyType); !ok || pt.Name != "SymInt" {
			continue
		}
		name := e.name(n)
		if v, ok := e.p.symVals[n.Name()]; ok {
			w.key(name)
			w.writeSymInt(&v.Val, v.Int)
			continue
		}
		if n.Op() == fxgraph.Placeholder {
			return fmt.Errorf("symbolic input %q has no recorded value", n.Name())
		}
		x, err := symNodeExpr(n, memo)
		if err != nil {
			return err
		}
		s, v, err := e.symbolic().value(x)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name(), err)
		}
		w.key(name)
		w.writeSymInt(&s, v)
	}
	w.endObject()
	return nil
}

// symScalarNode reads a node whose target is _operator.<op>: its inputs
// (named after the Python parameters, a and b) are SymInts or ints, and
// its one output an as_sym_int name.
func (b *builder) symScalarNode(o *object, op string) error {
	want, ok := ops.SymScalarArity(ops.Callable{Module: "operator", Name: op})
	if !ok {
		return pathErr(o.sub("target"), fmt.Errorf("%w: symbolic-scalar operator _operator.%s", ErrUnsupported, op))
	}
	items, err := o.reqArray("inputs")
	if err != nil {
		return err
	}
	if len(items) != want {
		return pathErrf(o.sub("inputs"), "_operator.%s takes %d inputs, got %d", op, want, len(items))
	}
	var args []ops.Value
	for i, r := range items {
		ip := indexPath(o.sub("inputs"), i)
		io, err := decodeObject(r, ip)
		if err != nil {
			return err
		}
		name, err := io.reqString("name")
		if err != nil {
			return err
		}
		if wantName := "ab"[i : i+1]; name != wantName {
			return pathErrf(io.sub("name"), "input %d of _operator.%s is named %q, want %q", i, op, name, wantName)
		}
		ar, err := io.req("arg")
		if err != nil {
			return err
		}
		tag, v, err := b.argument(ar, io.sub("arg"))
		if err != nil {
			return err
		}
		switch tag {
		case "as_sym_int", "as_int":
		default:
			return pathErrf(io.sub("arg"), "input of _operator.%s: want as_sym_int or as_int, got %s", op, tag)
		}
		if k := io.get("kind"); k != nil {
			kind, err := decodeInt(k, io.sub("kind"))
			if err != nil {
				return err
			}
			if kind != 1 {
				return pathErrf(io.sub("kind"), "input of _operator.%s: want kind 1 (positional), got %d", op, kind)
			}
		}
		args = append(args, v)
	}
	meta, err := nodeMeta(o)
	if err != nil {
		return err
	}
	outs, err := o.reqArray("outputs")
	if err != nil {
		return err
	}
	if len(outs) != 1 {
		return pathErrf(o.sub("outputs"), "_operator.%s has one output, got %d", op, len(outs))
	}
	out0 := catPath(o.sub("outputs"), "[0]")
	tag, v, err := union(outs[0], out0)
	if err != nil {
		return err
	}
	if tag != "as_sym_int" {
		return pathErrf(out0, "output of _operator.%s: want as_sym_int, got %s", op, tag)
	}
	name, typ, err := b.namedValue(tag, v, dotPath(out0, "as_sym_int"))
	if err != nil {
		return err
	}
	n := b.g.CreateNode(fxgraph.CallFunction, ops.Callable{Module: "operator", Name: op}, "", args, nil, name, typ)
	*n.Meta = meta
	return b.define(name, n, out0)
}

// symScalarNode writes a node of an operator-module function on SymInts
// as torch.export does.
func (e *encoder) symScalarNode(n *fxgraph.Node, c ops.Callable) error {
	w := e.w
	where := e.root(site{kind: siteSymNode, node: n, text: c.Name})
	w.beginObject()
	w.keyLit("target")
	w.str("_operator." + c.Name)
	w.keyLit("inputs")
	w.beginArray()
	if arity, _ := ops.SymScalarArity(c); len(n.Args()) != arity || len(n.Kwargs()) > 0 {
		return fmt.Errorf("%s: want %d positional arguments", e.loc(where), arity)
	}
	for i, a := range n.Args() {
		w.beginObject()
		w.keyLit("name")
		w.str("ab"[i : i+1])
		w.keyLit("arg")
		switch x := a.(type) {
		case int64:
			w.writeSymInt(nil, x)
		case *fxgraph.Node:
			if !isSym(x.Type()) {
				return fmt.Errorf("%s: argument %d: %s is not a symbolic int", e.loc(where), i, x.Name())
			}
			if err := e.nodeRef(x, where); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: argument %d: want an int or a SymInt node, got %v", e.loc(where), i, a)
		}
		w.keyLit("kind")
		w.int(1)
		w.endObject()
	}
	w.endArray()
	w.keyLit("outputs")
	w.beginArray()
	writeSymName(w, "as_sym_int", e.name(n))
	w.endArray()
	writeNodeMeta(w, n)
	w.keyLit("is_hop_single_tensor_return")
	w.null()
	w.keyLit("name")
	w.str(e.name(n))
	w.endObject()
	return nil
}

// contiguousAt reports whether m's strides, with each symbol at its value
// in hints, are the contiguous strides of its sizes (a size below 1
// counting as 1); false when a symbol has no value.
func (m tensorMeta) contiguousAt(hints map[string]int64) bool {
	var syms *symMeta
	if syms = m.Sym; syms == nil {
		syms = &symMeta{}
	}
	ok := true
	at := func(i int, ints []int64, exprs []symInt) int64 {
		if i < len(exprs) && exprs[i].Expr != nil {
			v, err := exprs[i].Expr.Eval(func(n string) (int64, bool) { h, ok := hints[n]; return h, ok })
			if err != nil {
				ok = false
			}
			return v
		}
		return ints[i]
	}
	acc := int64(1)
	for i := len(m.Sizes) - 1; i >= 0; i-- {
		if at(i, m.Strides, syms.Strides) != acc || !ok {
			return false
		}
		acc *= max(at(i, m.Sizes, syms.Sizes), 1)
	}
	return ok
}

// solveHint gives the one symbol of s's expression that has no hint the
// value that makes the expression its hint, when that is an integer.
func solveHint(syms []fxgraph.Symbol, index map[string]int, s symInt) {
	if s.Expr == nil || s.Hint == nil {
		return
	}
	hint := func(n string) (int64, bool) {
		if i, ok := index[n]; ok && syms[i].Hint != nil {
			return *syms[i].Hint, true
		}
		return 0, false
	}
	var missing []string
	for _, n := range s.Expr.Symbols() {
		if _, ok := hint(n); !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) != 1 {
		return
	}
	if x, ok := s.Expr.SolveFor(missing[0], hint, *s.Hint); ok {
		syms[index[missing[0]]].Hint = &x
	}
}
