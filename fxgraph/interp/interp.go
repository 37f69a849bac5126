package interp

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
	"github.com/fxquant/fxquant/ops/tensor"
)

// Sentinel errors wrapped by [NodeError].
var (
	// ErrNoKernel: the target's registry row has no kernel.
	ErrNoKernel = errors.New("op has no kernel")
	// ErrUnknownTarget: the target is not in the registry, or no overload
	// of a packet accepts the arguments.
	ErrUnknownTarget = errors.New("unknown target")
	// ErrInputs: the inputs do not match the placeholders.
	ErrInputs = errors.New("bad inputs")
	// ErrAttr: a get_attr or call_module path names no usable attribute.
	ErrAttr = errors.New("bad attribute")
	// ErrUnsupported: a node kind or callable the interpreter cannot run.
	ErrUnsupported = errors.New("unsupported node")
	// ErrPanic: a kernel or module panicked; the message carries the value.
	ErrPanic = errors.New("panic")
	// ErrTooLarge: a node's recorded result is over Options.MaxTensorBytes
	// or its size overflows.
	ErrTooLarge = errors.New("result too large")
)

// NodeError reports the failure of one node.
type NodeError struct {
	Node   string // node name, e.g. "linear_1"
	Target string // printed target; the input name for placeholders
	Err    error  // the cause
}

// Error returns `interp: node "name" (target): cause`.
func (e *NodeError) Error() string {
	return fmt.Sprintf("interp: node %q (%s): %v", e.Node, e.Target, e.Err)
}

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

// Options configures a run. The zero value uses [ops.Default], no hook and
// keeps every value until the end.
type Options struct {
	// Registry supplies schemas and kernels; nil means ops.Default().
	Registry *ops.Registry
	// Hook, when set, is called with every node's value in program order
	// (the output node excluded). A non-nil error stops the run and is
	// returned wrapped in a NodeError for that node.
	Hook func(n *fxgraph.Node, v ops.Value) error
	// HookAnyOrder lets a run with Release and a Hook still compute
	// constant nodes (see deferred.go) when their first user needs them:
	// the Hook then sees each of those when it is computed, which may be
	// after later nodes. Without it a Hook keeps program order, and every
	// constant node (a converted graph's dequantized weights) is live at
	// once.
	HookAnyOrder bool
	// CallModule, when set, runs every call_module node in place of the
	// module's Forward: it gets the node, the module and the node's
	// argument values (node references replaced), and returns the node's
	// value. convert.Calibrate uses it to put the observers' updates of
	// batches run at once in batch order.
	CallModule func(n *fxgraph.Node, m fxgraph.Module, args []ops.Value) (ops.Value, error)
	// Release drops each node's value right after its last user has run,
	// so peak memory follows the live values rather than the whole graph.
	Release bool
	// MaxTensorBytes bounds the bytes of one tensor a node records as its
	// result (its static type): a node over the bound is refused before
	// its kernel runs, with [ErrTooLarge]. It is a bound per value, not a
	// total. Zero means [DefaultMaxTensorBytes]; negative means no bound.
	MaxTensorBytes int64
}

// DefaultMaxTensorBytes is the default of [Options.MaxTensorBytes]: 4 GiB.
const DefaultMaxTensorBytes int64 = 4 << 30

// Run evaluates g with the positional inputs bound to the placeholders in
// order (a placeholder without an input takes its default, args[0], when
// it has one) and returns the output node's values: the elements of a
// returned tuple or list, or a one-element slice. Values are
// *tensor.Tensor, literals, or tuples of them. Inputs are not modified.
func Run(g *fxgraph.Graph, inputs []*tensor.Tensor, opts Options) ([]ops.Value, error) {
	vals := make([]ops.Value, len(inputs))
	for i, t := range inputs {
		vals[i] = t
	}
	return run(g, func(ph []*fxgraph.Node) (map[*fxgraph.Node]ops.Value, error) {
		if len(vals) > len(ph) {
			return nil, &NodeError{Node: "<inputs>", Target: "placeholder", Err: fmt.Errorf("%w: %d inputs for %d placeholders", ErrInputs, len(vals), len(ph))}
		}
		m := make(map[*fxgraph.Node]ops.Value, len(ph))
		for i, p := range ph {
			if i < len(vals) {
				m[p] = vals[i]
			}
		}
		return m, nil
	}, opts)
}

// RunNamed is [Run] with inputs given by placeholder name (the
// placeholder's target). An input naming no placeholder is an error.
func RunNamed(g *fxgraph.Graph, inputs map[string]ops.Value, opts Options) ([]ops.Value, error) {
	return run(g, func(ph []*fxgraph.Node) (map[*fxgraph.Node]ops.Value, error) {
		m := make(map[*fxgraph.Node]ops.Value, len(ph))
		used := 0
		for _, p := range ph {
			if v, ok := inputs[p.TargetName()]; ok {
				m[p] = v
				used++
			}
		}
		if used != len(inputs) {
			for _, name := range sortedKeys(inputs) {
				found := false
				for _, p := range ph {
					found = found || p.TargetName() == name
				}
				if !found {
					return nil, &NodeError{Node: "<inputs>", Target: "placeholder", Err: fmt.Errorf("%w: input %q names no placeholder", ErrInputs, name)}
				}
			}
		}
		return m, nil
	}, opts)
}

func sortedKeys(m map[string]ops.Value) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

type runner struct {
	g        *fxgraph.Graph
	reg      *ops.Registry
	opts     Options
	env      *env
	cur      *fxgraph.Node
	deferred []bool // by node ID: constant nodes not computed yet (see deferred.go)
	// With Release, by node ID: each node's position in the run and the
	// position of its last user.
	position, lastUse []int32
}

func run(g *fxgraph.Graph, bind func([]*fxgraph.Node) (map[*fxgraph.Node]ops.Value, error), opts Options) (outs []ops.Value, err error) {
	if g == nil {
		return nil, &NodeError{Node: "<graph>", Err: fmt.Errorf("%w: nil graph", ErrInputs)}
	}
	r := &runner{g: g, reg: opts.Registry, opts: opts}
	defer func() {
		if p := recover(); p != nil {
			name, target := "<graph>", ""
			if r.cur != nil {
				name, target = r.cur.Name(), r.cur.TargetName()
			}
			outs, err = nil, &NodeError{Node: name, Target: target, Err: fmt.Errorf("%w: %v", ErrPanic, p)}
		}
	}()
	if r.reg == nil {
		r.reg = ops.Default()
	}
	nodes := g.Nodes()
	var ph []*fxgraph.Node
	for _, n := range nodes {
		if n.Op() == fxgraph.Placeholder {
			ph = append(ph, n)
		}
	}
	bound, err := bind(ph)
	if err != nil {
		return nil, err
	}
	if _, err := bindSymbols(g, ph, bound); err != nil {
		return nil, err
	}
	r.env = newEnv(nodes)
	// Position of each node and of its last user, by node ID, for Release.
	if opts.Release {
		r.lastUse = make([]int32, len(r.env.vals))
		r.position = make([]int32, len(r.env.vals))
		for i, n := range nodes {
			r.position[n.ID()] = int32(i)
			n.VisitInputs(func(in *fxgraph.Node) {
				if k, ok := r.env.slot(in); ok {
					r.lastUse[k] = int32(i)
				}
			})
		}
	}
	r.deferred = r.deferrable(nodes)
	for i, n := range nodes {
		if r.isDeferred(n) {
			continue
		}
		r.cur = n
		if n.Op() == fxgraph.Output {
			v, err := r.mapArgs(n.Arg(0))
			if err != nil {
				return nil, r.ownError(n, err)
			}
			switch x := v.(type) {
			case ops.Tuple:
				return []ops.Value(x), nil
			case ops.List:
				return []ops.Value(x), nil
			}
			return []ops.Value{v}, nil
		}
		if n.Op() == fxgraph.Placeholder {
			v, ok := bound[n]
			if !ok {
				if len(n.Args()) == 0 {
					return nil, r.nodeErr(n, fmt.Errorf("%w: no input given for placeholder %q, one of %d", ErrInputs, n.TargetName(), len(ph)))
				}
				v = n.Arg(0)
			}
			if err := r.record(n, v); err != nil {
				return nil, err
			}
		} else if _, err := r.compute(n); err != nil {
			return nil, err
		}
		if opts.Release {
			r.releaseInputs(n, int32(i))
			if n.NumUses() == 0 {
				r.env.del(n)
			}
		}
	}
	r.cur = nil
	return nil, &NodeError{Node: "<graph>", Target: "output", Err: fmt.Errorf("%w: graph has no output node", ErrUnsupported)}
}

// releaseInputs drops the values of n's inputs whose last user is n, at
// position i.
func (r *runner) releaseInputs(n *fxgraph.Node, i int32) {
	n.VisitInputs(func(in *fxgraph.Node) {
		if k, ok := r.env.slot(in); ok && r.lastUse[k] == i {
			r.env.del(in)
		}
	})
}

// compute runs node n (neither a placeholder nor the output) and records
// its value; an error is n's, or that of a deferred node n needed.
func (r *runner) compute(n *fxgraph.Node) (ops.Value, error) {
	if err := r.checkRecorded(n); err != nil {
		return nil, r.nodeErr(n, err)
	}
	v, err := r.eval(n)
	if err != nil {
		return nil, r.ownError(n, err)
	}
	return v, r.record(n, v)
}

// record binds n's value v and shows it to the Hook.
func (r *runner) record(n *fxgraph.Node, v ops.Value) error {
	r.env.set(n, v)
	if r.opts.Hook != nil {
		if err := r.opts.Hook(n, v); err != nil {
			return r.nodeErr(n, fmt.Errorf("hook: %w", err))
		}
	}
	return nil
}

func (r *runner) nodeErr(n *fxgraph.Node, err error) error {
	var ne *NodeError
	if errors.As(err, &ne) && ne.Node == n.Name() {
		return err
	}
	return &NodeError{Node: n.Name(), Target: n.TargetName(), Err: err}
}

// mapArgs replaces node references in v by their values.
func (r *runner) mapArgs(v ops.Value) (ops.Value, error) {
	return ops.MapValue(v, func(x ops.Value) (ops.Value, error) {
		n, ok := x.(*fxgraph.Node)
		if !ok {
			return x, nil
		}
		val, ok := r.env.get(n)
		if !ok && r.isDeferred(n) {
			return r.evalDeferred(n)
		}
		if !ok {
			return nil, fmt.Errorf("%w: argument %q has no value (defined later, erased, or released)", ErrInputs, n.Name())
		}
		return val, nil
	})
}

func (r *runner) mapAll(n *fxgraph.Node) ([]ops.Value, []ops.Kwarg, error) {
	args := make([]ops.Value, len(n.Args()))
	for i, a := range n.Args() {
		v, err := r.mapArgs(a)
		if err != nil {
			return nil, nil, fmt.Errorf("args[%d]: %w", i, err)
		}
		args[i] = v
	}
	var kwargs []ops.Kwarg
	for _, kw := range n.Kwargs() {
		v, err := r.mapArgs(kw.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("kwarg %q: %w", kw.Name, err)
		}
		kwargs = append(kwargs, ops.Kwarg{Name: kw.Name, Value: v})
	}
	return args, kwargs, nil
}

func (r *runner) eval(n *fxgraph.Node) (ops.Value, error) {
	switch n.Op() {
	case fxgraph.GetAttr:
		v, ok := r.g.Attr(n.TargetName())
		if !ok {
			return nil, fmt.Errorf("%w: graph has no attribute %q", ErrAttr, n.TargetName())
		}
		return v, nil
	case fxgraph.CallModule:
		m, ok := r.g.Attr(n.TargetName())
		if !ok {
			return nil, fmt.Errorf("%w: graph has no module %q", ErrAttr, n.TargetName())
		}
		mod, ok := m.(fxgraph.Module)
		if !ok {
			return nil, fmt.Errorf("%w: attribute %q is a %T, want an fxgraph.Module", ErrAttr, n.TargetName(), m)
		}
		args, kwargs, err := r.mapAll(n)
		if err != nil {
			return nil, err
		}
		if len(kwargs) > 0 {
			return nil, fmt.Errorf("%w: call_module with keyword arguments", ErrUnsupported)
		}
		if r.opts.CallModule != nil {
			return r.opts.CallModule(n, mod, args)
		}
		return mod.Forward(args)
	case fxgraph.CallFunction:
		args, kwargs, err := r.mapAll(n)
		if err != nil {
			return nil, err
		}
		switch t := n.Target().(type) {
		case ops.Overload:
			return r.callOverload(n, t, args, kwargs)
		case ops.Packet:
			o, err := r.reg.Resolve(t, args, kwargs)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrUnknownTarget, err)
			}
			return r.callOverload(n, o, args, kwargs)
		case ops.Callable:
			if t == ops.GetItem {
				return getItem(args, kwargs)
			}
			if v, ok, err := symScalar(t, args, kwargs); ok {
				return v, err
			}
			return nil, fmt.Errorf("%w: callable %s", ErrUnsupported, t)
		}
		return nil, fmt.Errorf("%w: call_function without a target", ErrUnknownTarget)
	}
	return nil, fmt.Errorf("%w: %s nodes cannot be run", ErrUnsupported, n.Op())
}

// callOverload runs n's overload o and gives an in-place op its
// mutation (see mutated).
func (r *runner) callOverload(n *fxgraph.Node, o ops.Overload, args []ops.Value, kwargs []ops.Kwarg) (ops.Value, error) {
	def, ok := r.reg.Op(o)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not registered", ErrUnknownTarget, o)
	}
	if def.Kernel == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoKernel, o)
	}
	full, err := def.Schema.Normalize(args, kwargs)
	if err != nil {
		return nil, err
	}
	v, err := def.Kernel(full)
	if err != nil {
		return nil, err
	}
	if def.Schema.IsMutable() {
		r.mutated(n, def.Schema, v)
	}
	return v, nil
}

// mutated gives in-place ops PyTorch's semantics. Kernels never write into
// their arguments; for an op whose schema marks an argument as written
// (Tensor(a!)), the node passed there is rebound to the op's result, so
// every later user of that node sees the mutated value, as in PyTorch (x =
// relu_(y): later users of y see relu(y)). A packet target is resolved with
// [ops.Registry.Resolve] (the first overload, in registration order, whose
// schema accepts the arguments) before this. Other live views of the
// mutated tensor are updated too (see rebind).
func (r *runner) mutated(n *fxgraph.Node, s *ops.Schema, v ops.Value) {
	t, isTensor := v.(*tensor.Tensor)
	if !isTensor {
		return
	}
	for i, a := range s.Args {
		if !a.Type.Write || a.Type.List {
			continue
		}
		var passed ops.Value
		if i < len(n.Args()) {
			passed = n.Arg(i)
		} else {
			for _, kw := range n.Kwargs() {
				if kw.Name == a.Name {
					passed = kw.Value
				}
			}
		}
		if src, isNode := passed.(*fxgraph.Node); isNode {
			if old, live := r.env.get(src); live {
				r.rebind(src, old, t)
			}
		}
	}
}

// rebind binds src to t, the new value of the tensor old that an in-place
// op wrote. When other live values share old's storage (views of it, or
// tensors it is a view of), t's elements are written into a copy of that
// storage at old's positions and every one of them, src included, is
// rebuilt over the copy with its own shape, strides and offset: later
// users see the mutation through every alias, as in PyTorch, while the
// caller's tensors stay untouched.
func (r *runner) rebind(src *fxgraph.Node, old ops.Value, t *tensor.Tensor) {
	r.env.set(src, t)
	o, ok := old.(*tensor.Tensor)
	if !ok || o == t || o.DType() != t.DType() || !slices.Equal(o.Shape(), t.Shape()) {
		return
	}
	var aliases []*fxgraph.Node
	for _, n := range r.env.live {
		v, _ := r.env.get(n)
		if x, isT := v.(*tensor.Tensor); isT && n != src && sameStorage(x, o) {
			aliases = append(aliases, n)
		}
	}
	if len(aliases) == 0 {
		return
	}
	n := reflect.ValueOf(o.Storage()).Len()
	whole, err := o.NewView([]int{n}, []int{1}, 0)
	if err != nil {
		return
	}
	raw, vals, size := whole.Bytes(), t.Bytes(), o.DType().Size()
	if len(raw) != n*size || len(vals) != t.Numel()*size {
		return
	}
	k := 0
	o.Indices(func(si int) {
		copy(raw[si*size:(si+1)*size], vals[k*size:(k+1)*size])
		k++
	})
	base, err := tensor.FromBytes(o.DType(), []int{n}, nil, 0, raw, false)
	if err != nil {
		return
	}
	if nv, err := base.NewView(o.Shape(), o.Strides(), o.Offset()); err == nil {
		r.env.set(src, nv)
	}
	for _, a := range aliases {
		v, _ := r.env.get(a)
		x := v.(*tensor.Tensor)
		if nv, err := base.NewView(x.Shape(), x.Strides(), x.Offset()); err == nil {
			r.env.set(a, nv)
		}
	}
}

// sameStorage reports whether a and b are views of one storage.
func sameStorage(a, b *tensor.Tensor) bool {
	va, vb := reflect.ValueOf(a.Storage()), reflect.ValueOf(b.Storage())
	return va.Kind() == reflect.Slice && vb.Kind() == reflect.Slice && va.Len() > 0 &&
		va.Len() == vb.Len() && va.Pointer() == vb.Pointer()
}

// getItem implements operator.getitem(container, index) for tuple and
// list values (a negative index counts from the end) and for a tensor
// indexed by an int (the first-dim select).
func getItem(args []ops.Value, kwargs []ops.Kwarg) (ops.Value, error) {
	if len(args) != 2 || len(kwargs) != 0 {
		return nil, fmt.Errorf("%w: operator.getitem takes 2 positional arguments, got %d and %d keywords", ErrInputs, len(args), len(kwargs))
	}
	idx, ok := args[1].(int64)
	if !ok {
		return nil, fmt.Errorf("%w: operator.getitem: index: want an int, got %T", ErrUnsupported, args[1])
	}
	var seq []ops.Value
	switch c := args[0].(type) {
	case ops.Tuple:
		seq = c
	case ops.List:
		seq = c
	case *tensor.Tensor:
		return c.Select(0, int(idx))
	default:
		return nil, fmt.Errorf("%w: operator.getitem: container: want a tuple, list or tensor, got %T", ErrUnsupported, args[0])
	}
	i := int(idx)
	if i < 0 {
		i += len(seq)
	}
	if i < 0 || i >= len(seq) {
		return nil, fmt.Errorf("%w: operator.getitem: index %d out of range for %d values", ErrInputs, idx, len(seq))
	}
	return seq[i], nil
}
