package fxgraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Ops of the property test's registry (propRegistry), beyond irRegistry's.
var (
	propMix   = ops.MustOverload("fxtest.mix.default")
	propQAxis = ops.MustOverload("fxtest.qaxis.default")
)

// propRegistry is irRegistry plus two test ops: mix, whose Any arguments
// carry nested payloads (containers, literals of every kind, operators,
// node references) and whose result is self's type; and qaxis, whose
// result is self's shape with a per-axis quantized element built from its
// scales, zero points, axis and dtype.
func propRegistry(t *testing.T) *ops.Registry {
	t.Helper()
	reg := irRegistry(t)
	_, err := reg.RegisterSchema("fxtest::mix(Tensor self, Any payload, *, ScalarType? dtype=None, Device? device=None, "+
		"Layout? layout=None, MemoryFormat? memory_format=None, Any extra=None) -> Tensor",
		func(args []ops.Value) (ops.Type, error) {
			if _, ok := args[0].(ops.TensorType); !ok {
				return nil, fmt.Errorf("arg 0: want a tensor type, got %v", args[0])
			}
			return args[0].(ops.Type), nil
		}, nil)
	require.NoError(t, err)
	_, err = reg.RegisterSchema("fxtest::qaxis(Tensor self, float[] scales, int[] zero_points, int axis, ScalarType dtype) -> Tensor",
		func(args []ops.Value) (ops.Type, error) {
			x, ok := args[0].(ops.TensorType)
			if !ok {
				return nil, fmt.Errorf("arg 0: want a tensor type, got %v", args[0])
			}
			var scales []float64
			for _, s := range ops.AsSequence(args[1]) {
				scales = append(scales, s.(float64))
			}
			var zps []int64
			for _, z := range ops.AsSequence(args[2]) {
				zps = append(zps, z.(int64))
			}
			q, err := ops.NewUniformQuantizedPerAxis(args[4].(tensor.DType), -128, 127, x.DType(), int(args[3].(int64)), scales, zps)
			if err != nil {
				return nil, err
			}
			return ops.TensorType{Shape: x.Shape, Elem: q}, nil
		}, nil)
	require.NoError(t, err)
	return reg
}

// Literal pools of the random payloads. Strings include words that must
// print quoted to read back as strings (a device name, None, spaces).
var (
	propFloats  = []float64{0.1, -0.0, 1e-05, 1e16, 3.0, math.Inf(1), math.Inf(-1), math.NaN(), 1.1920928955078125e-07, -2.5}
	propStrings = []string{"ASYMMETRIC", "per_tensor", "a b", "None", "cpu", "", "it's", "x.y"}
	propDTypes  = []tensor.DType{tensor.Int8, tensor.UInt8, tensor.Float32, tensor.Int32, tensor.BFloat16, tensor.Bool}
	propDevices = []ops.Device{"cpu", "cuda:0", "meta", "cuda"}
	propTargets = []ops.Value{ops.MustOverload("aten.linear.default"), ops.MustPacket("aten.relu"), ops.GetItem}
	propKeys    = []string{"k", "scale", "key two", "zero_point", "x"}
)

// propValue returns a random argument value of nesting depth at most depth,
// whose node references come from ref.
func propValue(rng *rand.Rand, depth int, ref func() *Node) ops.Value {
	leaves, all := 13, 17
	k := rng.IntN(leaves)
	if depth > 0 {
		k = rng.IntN(all)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return int64(rng.IntN(11) - 5)
	case 3:
		return propFloats[rng.IntN(len(propFloats))]
	case 4:
		return propStrings[rng.IntN(len(propStrings))]
	case 5:
		return propDTypes[rng.IntN(len(propDTypes))]
	case 6:
		return propDevices[rng.IntN(len(propDevices))]
	case 7:
		return ops.LayoutStrided
	case 8:
		return []ops.MemoryFormat{ops.ContiguousFormat, ops.ChannelsLast, ops.PreserveFormat}[rng.IntN(3)]
	case 9:
		return propTargets[rng.IntN(len(propTargets))]
	case 10:
		return complex(float64(rng.IntN(3)), float64(rng.IntN(3)-1))
	case 11, 12:
		return ref()
	case 13:
		l := make(ops.List, rng.IntN(4))
		for i := range l {
			l[i] = propValue(rng, depth-1, ref)
		}
		return l
	case 14:
		tu := make(ops.Tuple, rng.IntN(4))
		for i := range tu {
			tu[i] = propValue(rng, depth-1, ref)
		}
		return tu
	case 15:
		var d ops.Dict
		for _, key := range propKeys {
			if rng.IntN(2) == 0 {
				d.Keys = append(d.Keys, key)
				d.Values = append(d.Values, propValue(rng, depth-1, ref))
			}
		}
		return d
	default:
		parts := [3]ops.Value{}
		for i := range parts {
			switch rng.IntN(3) {
			case 0:
				parts[i] = int64(rng.IntN(7) - 3)
			case 1:
				parts[i] = ref()
			}
		}
		return ops.Slice{Start: parts[0], Stop: parts[1], Step: parts[2]}
	}
}

// TestRandomEditsKeepGraphValid applies seeded random sequences of edits
// (create at random insertion points, replace all uses, erase dead nodes,
// move within the legal range, set args and kwargs, DCE, clone, plus
// nodes whose arguments nest lists, tuples, dicts and slices around
// dtypes, devices, layouts, memory formats, operators and node references,
// get_attr nodes over stored tensors, and per-tensor and per-axis
// quantized types) and requires after every edit that Verify passes, that
// a clone is structurally equal, and every few edits that the printed
// form parses back to a structurally equal graph that prints the same and
// verifies.
func TestRandomEditsKeepGraphValid(t *testing.T) {
	reg := propRegistry(t)
	opts := VerifyOptions{Registry: reg, RequireTypes: true}
	const steps = 400
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			g := New()
			x := g.Placeholder("x", irF32)
			g.Placeholder("y", irF32)
			out := g.SetOutput(ops.Tuple{x})
			var log []string
			for step := range steps {
				nodes := g.Nodes()
				pos := make(map[*Node]int, len(nodes))
				for i, n := range nodes {
					pos[n] = i
				}
				// f32Before returns a random f32[2, 3] node at a position
				// < limit (x, at 0, always is one); anyBefore any value node.
				f32Before := func(limit int) *Node {
					var c []*Node
					for _, n := range nodes[:limit] {
						if n.Type() != nil && n.Type().Equal(irF32) {
							c = append(c, n)
						}
					}
					return c[rng.IntN(len(c))]
				}
				anyBefore := func(limit int) *Node { return nodes[rng.IntN(limit)] }
				isF32 := func(n *Node) bool { return n.Type() != nil && n.Type().Equal(irF32) }
				calls := slices.DeleteFunc(slices.Clone(nodes), func(n *Node) bool { return n.Op() != CallFunction })
				f32Calls := slices.DeleteFunc(slices.Clone(calls), func(n *Node) bool { return !isF32(n) })
				p := rng.IntN(len(nodes) - 1) // a non-output anchor: new nodes go right after it
				var what string
				switch op := rng.IntN(12); {
				case op <= 1: // create relu or add after a random node
					restore := g.InsertingAfter(nodes[p])
					var n *Node
					if rng.IntN(2) == 0 {
						n = g.Call(irRelu, f32Before(p+1))
					} else {
						n = g.CallKw(irAdd, []ops.Value{f32Before(p + 1), f32Before(p + 1)}, []Kwarg{{Name: "alpha", Value: int64(rng.IntN(3))}})
					}
					restore()
					n.SetType(irF32)
					what = "create " + n.Name()
				case op == 2 && len(f32Calls) > 0: // replace all uses with an earlier node of the same type
					n := f32Calls[rng.IntN(len(f32Calls))]
					m := f32Before(pos[n])
					g.ReplaceAllUsesWith(n, m, nil)
					what = fmt.Sprintf("rauw %s -> %s", n, m)
				case op == 3: // erase a dead node
					for _, n := range calls {
						if n.NumUses() == 0 {
							require.NoError(t, g.Erase(n))
							what = "erase " + n.Name()
							break
						}
					}
				case op == 4 && len(calls) > 0: // move within the legal range
					n := calls[rng.IntN(len(calls))]
					lo, hi := moveRange(n, nodes, pos)
					anchor := nodes[lo+rng.IntN(hi-lo+1)]
					if anchor != n {
						require.NoError(t, g.MoveBefore(n, anchor))
					}
					what = fmt.Sprintf("move %s before %s", n, anchor)
				case op == 5 && len(calls) > 0: // set an f32 node arg, or a mix payload or kwarg
					n := calls[rng.IntN(len(calls))]
					switch n.Target() {
					case propMix:
						if rng.IntN(2) == 0 {
							require.NoError(t, g.SetArg(n, 1, propValue(rng, 3, func() *Node { return anyBefore(pos[n]) })))
							what = "set payload of " + n.Name()
						} else {
							g.SetKwarg(n, "extra", propValue(rng, 2, func() *Node { return anyBefore(pos[n]) }))
							what = "set kwarg extra of " + n.Name()
						}
					default:
						i := slices.IndexFunc(n.Args(), func(a ops.Value) bool { m, ok := a.(*Node); return ok && isF32(m) })
						if i < 0 {
							what = "set nothing"
							break
						}
						i += rng.IntN(len(n.Args()) - i)
						if m, ok := n.Arg(i).(*Node); !ok || !isF32(m) {
							what = "set nothing"
							break
						}
						require.NoError(t, g.SetArg(n, i, f32Before(pos[n])))
						if n.Target() == irAdd && rng.IntN(2) == 0 {
							g.SetKwarg(n, "alpha", int64(rng.IntN(5)))
						}
						what = fmt.Sprintf("set arg %d of %s", i, n)
					}
				case op == 6: // return some node
					if len(calls) > 0 {
						g.SetArgs(out, ops.Tuple{calls[rng.IntN(len(calls))], ops.Dict{Keys: []string{"x"}, Values: []ops.Value{x}}})
					}
					what = "set output"
				case op == 7: // mix: nested payload and random kwargs
					restore := g.InsertingAfter(nodes[p])
					ref := func() *Node { return anyBefore(p + 1) }
					self := anyBefore(p + 1)
					var kw []Kwarg
					for _, k := range []struct {
						name string
						val  func() ops.Value
					}{
						{"dtype", func() ops.Value { return propDTypes[rng.IntN(len(propDTypes))] }},
						{"device", func() ops.Value { return propDevices[rng.IntN(len(propDevices))] }},
						{"layout", func() ops.Value { return ops.LayoutStrided }},
						{"memory_format", func() ops.Value { return ops.ChannelsLast }},
						{"extra", func() ops.Value { return propValue(rng, 2, ref) }},
					} {
						if rng.IntN(2) == 0 {
							kw = append(kw, Kwarg{Name: k.name, Value: k.val()})
						}
					}
					n := g.CallKw(propMix, []ops.Value{self, propValue(rng, 3, ref)}, kw)
					restore()
					n.SetType(self.Type())
					what = "create " + n.Name()
				case op == 8: // quantize per tensor: i8 with a hand-built quantized type
					restore := g.InsertingAfter(nodes[p])
					scale := []float64{0.02, 0.1, 1.5e-3}[rng.IntN(3)]
					zp := int64(rng.IntN(11) - 5)
					n := g.Call(irQuant, f32Before(p+1), scale, zp, int64(-128), int64(127), tensor.Int8)
					restore()
					q, err := ops.NewUniformQuantized(tensor.Int8, -128, 127, tensor.Float32, scale, zp)
					require.NoError(t, err)
					n.SetType(ops.TensorType{Shape: []int64{2, 3}, Elem: q})
					what = "create " + n.Name()
				case op == 9: // quantize per axis 0 (two channels)
					restore := g.InsertingAfter(nodes[p])
					scales := []float64{0.5, []float64{0.25, 1e-05}[rng.IntN(2)]}
					zps := []int64{0, int64(rng.IntN(5))}
					n := g.Call(propQAxis, f32Before(p+1), ops.List{scales[0], scales[1]}, ops.List{zps[0], zps[1]}, int64(0), tensor.Int8)
					restore()
					q, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -128, 127, tensor.Float32, 0, scales, zps)
					require.NoError(t, err)
					n.SetType(ops.TensorType{Shape: []int64{2, 3}, Elem: q})
					what = "create " + n.Name()
				case op == 10: // get_attr over a stored tensor: f32, or i8 typed per-axis quantized
					restore := g.InsertingAfter(nodes[p])
					var n *Node
					if rng.IntN(2) == 0 {
						path := g.FreshAttrName("_param")
						g.SetAttr(path, tensor.MustZeros(tensor.Float32, 2, 3))
						n = g.GetAttr(path, irF32)
					} else {
						path := g.FreshAttrName("_qweight")
						g.SetAttr(path, tensor.MustZeros(tensor.Int8, 2, 3))
						q, err := ops.NewUniformQuantizedPerAxis(tensor.Int8, -127, 127, tensor.Float32, 1, []float64{0.1, 0.2, 0.3}, []int64{0, 0, 0})
						require.NoError(t, err)
						n = g.GetAttr(path, ops.TensorType{Shape: []int64{2, 3}, Elem: q})
					}
					restore()
					what = "create " + n.Name()
				default:
					if rng.IntN(4) == 0 {
						ref, _ := g.Clone()
						want := fxDCE(ref, reg)
						got := g.EliminateDeadCode(reg, nil)
						require.Equal(t, want, got, "dce at step %d: whether anything was erased", step)
						require.Equal(t, irNames(ref.Nodes()), irNames(g.Nodes()), "dce at step %d: the nodes left", step)
						what = "dce"
					} else {
						c, _ := g.Clone()
						g.ReplaceWith(c)
						out = g.Last()
						x = g.First()
						what = "clone and swap"
					}
				}
				log = append(log, what)
				if err := Verify(g, opts); err != nil {
					t.Fatalf("step %d (%s): %v\nlast edits: %v", step, what, err, log[max(0, len(log)-5):])
				}
				require.True(t, sweepAccepts(g, opts), "Verify's one-sweep check rejects the valid graph at step %d (%s)", step, what)
				c, _ := g.Clone()
				require.NoError(t, propStructEqual(g, c), "clone at step %d (%s)", step, what)
				if step%20 == 0 || step == steps-1 {
					propRoundTrip(t, g, opts)
				}
			}
			kinds := map[string]int{}
			for _, w := range log {
				k, _, _ := strings.Cut(w, " ")
				kinds[k]++
			}
			t.Logf("%d nodes after %d edits: %v", g.Len(), steps, kinds)
			require.Greater(t, kinds["create"], steps/10, "the sequence creates nodes")
			require.Greater(t, kinds["rauw"]+kinds["move"]+kinds["set"], steps/10, "and rewires them")
			var mixes, quants, attrs int
			for n := range g.All() {
				switch {
				case n.Target() == propMix:
					mixes++
				case n.Target() == irQuant || n.Target() == propQAxis:
					quants++
				case n.Op() == GetAttr:
					attrs++
				}
			}
			t.Logf("final graph: %d mix, %d quantize, %d get_attr nodes", mixes, quants, attrs)
		})
	}
}

// propRoundTrip requires that Parse(Format(g)) is structurally equal to g,
// prints the same, and verifies once g's attributes (which the text does
// not carry) are stored in it.
func propRoundTrip(t *testing.T, g *Graph, opts VerifyOptions) {
	t.Helper()
	text := Format(g)
	h, err := ParseString(text)
	require.NoError(t, err, "parse of printed graph:\n%s", text)
	require.NoError(t, propStructEqual(g, h), "parsed graph:\n%s", text)
	require.Equal(t, text, Format(h))
	for _, path := range g.AttrNames() {
		a, _ := g.Attr(path)
		h.SetAttr(path, a)
	}
	require.NoError(t, Verify(h, opts), "parsed graph:\n%s", text)
}

// propStructEqual compares two graphs structurally, blind to node IDs and
// pointers: the same live node sequence with, position by position, equal
// names, opcodes, targets (call targets by ==, string targets by text),
// types (Type.Equal, both nil or neither), use and user counts, and
// arguments and keyword arguments equal value by value, where a node
// reference stands for its position in the sequence and floats compare by
// bits. It returns the first difference, or nil.
func propStructEqual(a, b *Graph) error {
	an, bn := a.Nodes(), b.Nodes()
	if len(an) != len(bn) {
		return fmt.Errorf("node count: %d vs %d", len(an), len(bn))
	}
	apos := make(map[*Node]int, len(an))
	bpos := make(map[*Node]int, len(bn))
	for i := range an {
		apos[an[i]] = i
		bpos[bn[i]] = i
	}
	for i := range an {
		x, y := an[i], bn[i]
		where := fmt.Sprintf("node %d (%s)", i, x.Name())
		switch {
		case x.Name() != y.Name():
			return fmt.Errorf("%s: name %q vs %q", where, x.Name(), y.Name())
		case x.Op() != y.Op():
			return fmt.Errorf("%s: op %v vs %v", where, x.Op(), y.Op())
		case x.Target() != y.Target():
			return fmt.Errorf("%s: target %v vs %v", where, x.Target(), y.Target())
		case x.TargetName() != y.TargetName():
			return fmt.Errorf("%s: target name %q vs %q", where, x.TargetName(), y.TargetName())
		case (x.Type() == nil) != (y.Type() == nil) || x.Type() != nil && !x.Type().Equal(y.Type()):
			return fmt.Errorf("%s: type %v vs %v", where, x.Type(), y.Type())
		case len(x.Args()) != len(y.Args()):
			return fmt.Errorf("%s: %d args vs %d", where, len(x.Args()), len(y.Args()))
		case len(x.Kwargs()) != len(y.Kwargs()):
			return fmt.Errorf("%s: %d kwargs vs %d", where, len(x.Kwargs()), len(y.Kwargs()))
		}
		for j := range x.Args() {
			if err := propValueEqual(x.Arg(j), y.Arg(j), apos, bpos); err != nil {
				return fmt.Errorf("%s: arg %d: %w", where, j, err)
			}
		}
		for j, kw := range x.Kwargs() {
			ky := y.Kwargs()[j]
			if kw.Name != ky.Name {
				return fmt.Errorf("%s: kwarg %d: name %q vs %q", where, j, kw.Name, ky.Name)
			}
			if err := propValueEqual(kw.Value, ky.Value, apos, bpos); err != nil {
				return fmt.Errorf("%s: kwarg %s: %w", where, kw.Name, err)
			}
		}
	}
	// Use counts follow from the arguments; checked last so that a
	// differing argument is the reported difference.
	for i := range an {
		x, y := an[i], bn[i]
		if x.NumUses() != y.NumUses() || x.NumUsers() != y.NumUsers() {
			return fmt.Errorf("node %d (%s): uses/users %d/%d vs %d/%d", i, x.Name(), x.NumUses(), x.NumUsers(), y.NumUses(), y.NumUsers())
		}
	}
	return nil
}

// propValueEqual compares two argument values: same Go kind, containers
// element by element (dict keys in order), nodes by position, floats and
// complex parts by bits, every other literal by ==.
func propValueEqual(x, y ops.Value, apos, bpos map[*Node]int) error {
	if fmt.Sprintf("%T", x) != fmt.Sprintf("%T", y) {
		return fmt.Errorf("kind %T (%v) vs %T (%v)", x, x, y, y)
	}
	seq := func(xs, ys []ops.Value) error {
		if len(xs) != len(ys) {
			return fmt.Errorf("length %d vs %d", len(xs), len(ys))
		}
		for i := range xs {
			if err := propValueEqual(xs[i], ys[i], apos, bpos); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	}
	switch xv := x.(type) {
	case *Node:
		pa, oka := apos[xv]
		pb, okb := bpos[y.(*Node)]
		if !oka || !okb || pa != pb {
			return fmt.Errorf("node %v at %d (live %v) vs %v at %d (live %v)", xv, pa, oka, y, pb, okb)
		}
	case float64:
		if math.Float64bits(xv) != math.Float64bits(y.(float64)) {
			return fmt.Errorf("float %v vs %v", xv, y)
		}
	case complex128:
		yv := y.(complex128)
		if math.Float64bits(real(xv)) != math.Float64bits(real(yv)) || math.Float64bits(imag(xv)) != math.Float64bits(imag(yv)) {
			return fmt.Errorf("complex %v vs %v", xv, yv)
		}
	case ops.List:
		return seq(xv, y.(ops.List))
	case ops.Tuple:
		return seq(xv, y.(ops.Tuple))
	case ops.Dict:
		yv := y.(ops.Dict)
		if !slices.Equal(xv.Keys, yv.Keys) {
			return fmt.Errorf("dict keys %q vs %q", xv.Keys, yv.Keys)
		}
		return seq(xv.Values, yv.Values)
	case ops.Slice:
		yv := y.(ops.Slice)
		return seq([]ops.Value{xv.Start, xv.Stop, xv.Step}, []ops.Value{yv.Start, yv.Stop, yv.Step})
	default:
		if x != y {
			return fmt.Errorf("value %#v vs %#v", x, y)
		}
	}
	return nil
}

// TestStructEqualDetectsDifferences checks the property test's comparator
// itself: each one-field change to a graph is reported.
func TestStructEqualDetectsDifferences(t *testing.T) {
	build := func() (*Graph, map[string]*Node) {
		g := New()
		x := g.Placeholder("x", irF32)
		y := g.Placeholder("y", irF32)
		m := g.CallKw(propMix, []ops.Value{x, ops.List{ops.Tuple{x, y}, ops.Dict{Keys: []string{"k"}, Values: []ops.Value{0.5}}, ops.Slice{Stop: int64(2)}}},
			[]Kwarg{{Name: "dtype", Value: tensor.Int8}})
		m.SetType(irF32)
		g.SetOutput(ops.Tuple{m})
		return g, map[string]*Node{"x": x, "y": y, "mix": m}
	}
	a, _ := build()
	b, _ := build()
	require.NoError(t, propStructEqual(a, b))
	tests := []struct {
		name string
		edit func(g *Graph, n map[string]*Node)
		want string
	}{
		{"node ref by position", func(g *Graph, n map[string]*Node) {
			require.NoError(t, g.SetArg(n["mix"], 0, n["y"]))
		}, "arg 0: node %x at 0 (live true) vs %y at 1"},
		{"nested ref", func(g *Graph, n map[string]*Node) {
			require.NoError(t, g.SetArg(n["mix"], 1, ops.List{ops.Tuple{n["y"], n["y"]}, ops.Dict{Keys: []string{"k"}, Values: []ops.Value{0.5}}, ops.Slice{Stop: int64(2)}}))
		}, "arg 1: [0]: [0]: node"},
		{"list vs tuple", func(g *Graph, n map[string]*Node) {
			require.NoError(t, g.SetArg(n["mix"], 1, ops.List{ops.List{n["x"], n["y"]}, ops.Dict{Keys: []string{"k"}, Values: []ops.Value{0.5}}, ops.Slice{Stop: int64(2)}}))
		}, "kind ops.Tuple"},
		{"float bits", func(g *Graph, n map[string]*Node) {
			require.NoError(t, g.SetArg(n["mix"], 1, ops.List{ops.Tuple{n["x"], n["y"]}, ops.Dict{Keys: []string{"k"}, Values: []ops.Value{0.5000000000000001}}, ops.Slice{Stop: int64(2)}}))
		}, "float 0.5 vs 0.5000000000000001"},
		{"int vs float", func(g *Graph, n map[string]*Node) {
			require.NoError(t, g.SetArg(n["mix"], 1, ops.List{ops.Tuple{n["x"], n["y"]}, ops.Dict{Keys: []string{"k"}, Values: []ops.Value{0.5}}, ops.Slice{Stop: 2.0}}))
		}, "kind int64"},
		{"kwarg value", func(g *Graph, n map[string]*Node) { g.SetKwarg(n["mix"], "dtype", tensor.UInt8) }, "kwarg dtype"},
		{"type", func(g *Graph, n map[string]*Node) { n["mix"].SetType(ops.Plain(tensor.Float32, 3, 2)) }, "type f32[2, 3] vs f32[3, 2]"},
		{"name", func(g *Graph, n map[string]*Node) { g.Rename(n["mix"], "other") }, `name "mix_default" vs "other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, n := build()
			tt.edit(g, n)
			err := propStructEqual(a, g)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// fxDCE is torch.fx's eliminate_dead_code, written as FX writes it: one
// walk over the whole list, last node first, erasing each pure node
// without users. EliminateDeadCode visits only its candidates and must
// erase the same nodes.
func fxDCE(g *Graph, reg *ops.Registry) bool {
	changed := false
	nodes := g.Nodes()
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		if n.NumUsers() == 0 && !n.IsImpure(reg) {
			if err := g.Erase(n); err != nil {
				panic(err)
			}
			changed = true
		}
	}
	return changed
}
