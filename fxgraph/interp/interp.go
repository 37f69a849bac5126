package interp

import (
	"errors"
	"fmt"

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
	g    *fxgraph.Graph
	reg  *ops.Registry
	opts Options
	env  map[*fxgraph.Node]ops.Value
	cur  *fxgraph.Node
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
	// Position of each node's last user, for Release.
	lastUse := map[*fxgraph.Node]int{}
	if opts.Release {
		for i, n := range nodes {
			for _, in := range n.InputNodes() {
				lastUse[in] = i
			}
		}
	}
	r.env = make(map[*fxgraph.Node]ops.Value, len(nodes))
	for i, n := range nodes {
		r.cur = n
		if n.Op() == fxgraph.Output {
			v, err := r.mapArgs(n.Arg(0))
			if err != nil {
				return nil, r.nodeErr(n, err)
			}
			switch x := v.(type) {
			case ops.Tuple:
				return []ops.Value(x), nil
			case ops.List:
				return []ops.Value(x), nil
			}
			return []ops.Value{v}, nil
		}
		var v ops.Value
		var err error
		if n.Op() == fxgraph.Placeholder {
			var ok bool
			if v, ok = bound[n]; !ok {
				if len(n.Args()) == 0 {
					return nil, r.nodeErr(n, fmt.Errorf("%w: no input given for placeholder %q, one of %d", ErrInputs, n.TargetName(), len(ph)))
				}
				v = n.Arg(0)
			}
		} else {
			if err := r.checkRecorded(n); err != nil {
				return nil, r.nodeErr(n, err)
			}
			v, err = r.eval(n)
			if err != nil {
				return nil, r.nodeErr(n, err)
			}
		}
		r.env[n] = v
		if opts.Hook != nil {
			if err := opts.Hook(n, v); err != nil {
				return nil, r.nodeErr(n, fmt.Errorf("hook: %w", err))
			}
		}
		if opts.Release {
			for _, in := range n.InputNodes() {
				if lastUse[in] == i {
					delete(r.env, in)
				}
			}
			if n.NumUses() == 0 {
				delete(r.env, n)
			}
		}
	}
	r.cur = nil
	return nil, &NodeError{Node: "<graph>", Target: "output", Err: fmt.Errorf("%w: graph has no output node", ErrUnsupported)}
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
		val, ok := r.env[n]
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
		return mod.Forward(args)
	case fxgraph.CallFunction:
		args, kwargs, err := r.mapAll(n)
		if err != nil {
			return nil, err
		}
		switch t := n.Target().(type) {
		case ops.Overload:
			return r.callOverload(t, args, kwargs)
		case ops.Packet:
			return r.callPacket(t, args, kwargs)
		case ops.Callable:
			if t == ops.GetItem {
				return getItem(args, kwargs)
			}
			return nil, fmt.Errorf("%w: callable %s", ErrUnsupported, t)
		}
		return nil, fmt.Errorf("%w: call_function without a target", ErrUnknownTarget)
	}
	return nil, fmt.Errorf("%w: %s nodes cannot be run", ErrUnsupported, n.Op())
}

func (r *runner) callOverload(o ops.Overload, args []ops.Value, kwargs []ops.Kwarg) (ops.Value, error) {
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
	return def.Kernel(full)
}

// callPacket resolves a packet target with [ops.Registry.Resolve] (the
// first overload, in registration order, whose schema accepts the
// arguments) and runs that overload.
func (r *runner) callPacket(p ops.Packet, args []ops.Value, kwargs []ops.Kwarg) (ops.Value, error) {
	o, err := r.reg.Resolve(p, args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownTarget, err)
	}
	return r.callOverload(o, args, kwargs)
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
