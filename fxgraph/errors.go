package fxgraph

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels naming the classes of problem [Verify] reports. Each
// [VerifyError] wraps exactly one of them, so callers test the class with
// errors.Is and get the subject with errors.As.
var (
	// ErrNodeList: the node list is broken (bad links, a length that
	// disagrees with the list, an erased or foreign node linked in, a
	// duplicate or out-of-range id).
	ErrNodeList = errors.New("broken node list")
	// ErrOpKind: a node's opcode is not one of the six FX opcodes.
	ErrOpKind = errors.New("unknown opcode")
	// ErrBadTarget: a call_function node has no target, or another node
	// has no string target.
	ErrBadTarget = errors.New("bad target")
	// ErrDuplicateName: two live nodes share a name.
	ErrDuplicateName = errors.New("duplicate node name")
	// ErrBadName: a name is not an identifier, or the graph's namespace
	// does not reserve it (so a later node could be given the same name).
	ErrBadName = errors.New("bad node name")
	// ErrDangling: an argument refers to an erased node, to a node that is
	// not in the node list, or is a nil node reference.
	ErrDangling = errors.New("dangling node reference")
	// ErrForeignNode: an argument refers to a node of another graph.
	ErrForeignNode = errors.New("reference to a node of another graph")
	// ErrOrder: an argument refers to a node defined later in the list.
	ErrOrder = errors.New("node used before its definition")
	// ErrCycle: nodes depend on themselves, directly or through others.
	ErrCycle = errors.New("cycle")
	// ErrUseList: a stored use list disagrees with a fresh recount of the
	// users' arguments.
	ErrUseList = errors.New("use list out of date")
	// ErrOutput: the graph has no output node, several, or one that is not
	// last.
	ErrOutput = errors.New("bad output node")
	// ErrMissingAttr: a get_attr or call_module target is not in the
	// graph's attribute store, or a call_module attribute is no [Module].
	ErrMissingAttr = errors.New("missing attribute")
	// ErrUnknownTarget: a call_function target is not in the registry and
	// opaque ops are not allowed.
	ErrUnknownTarget = errors.New("unknown target")
	// ErrArity: wrong number of arguments, or unknown, repeated or missing
	// keyword arguments, for the op's schema or opcode.
	ErrArity = errors.New("wrong arguments")
	// ErrArgKind: an argument value is of the wrong kind for its schema
	// type (int for float, a literal for a Tensor, a non-Value Go type...).
	ErrArgKind = errors.New("wrong argument kind")
	// ErrMissingType: a node has no type where one is required.
	ErrMissingType = errors.New("missing type")
	// ErrTypeMismatch: a node's type differs from its op's result-type rule,
	// or the rule rejects the input types.
	ErrTypeMismatch = errors.New("type mismatch")
	// ErrQParam: a quantize, dequantize or choose_qparams node has a bad
	// qparam: a scale that is not finite and > 0, a zero point or bound
	// outside its storage dtype, quant_min > quant_max, or a per-channel
	// axis or qparam length that does not fit the input.
	ErrQParam = errors.New("bad qparam")
	// ErrTooManyProblems marks the summary that stands for the problems
	// left out once [VerifyOptions.MaxErrors] is reached.
	ErrTooManyProblems = errors.New("too many problems")
)

// VerifyError is one problem found by [Verify]: which node, which check,
// which field, what was expected and what was found. Its message reads
//
//	node "linear_1" (aten.linear.default): arg 1: want f32[16, 64], got f32[64, 16]
type VerifyError struct {
	Node   string // node name; "" for a problem of the whole graph
	Target string // the node's printed target; "" for placeholders and graph problems
	Check  error  // the class of problem: one of the Err* sentinels of this package
	Field  string // where in the node: "arg 1 (weight)", "kwarg dtype", "type", "uses", "name"
	Want   string // what was expected; "" when the message is in Got or Err alone
	Got    string // what was found
	Detail string // optional extra, such as the field in which two types differ
	Err    error  // optional underlying error (from the schema normaliser or a result rule)
}

// Error formats the problem on one line, starting with the node.
func (e *VerifyError) Error() string {
	var b strings.Builder
	if e.Node != "" {
		fmt.Fprintf(&b, "node %q", e.Node)
		if e.Target != "" {
			fmt.Fprintf(&b, " (%s)", e.Target)
		}
	} else {
		b.WriteString("graph")
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	switch {
	case e.Want != "":
		fmt.Fprintf(&b, "want %s, got %s", e.Want, e.Got)
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	case e.Got != "":
		fmt.Fprintf(&b, "%v: %s", e.Check, e.Got)
	default:
		fmt.Fprint(&b, e.Check)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, " (%s)", e.Detail)
	}
	return b.String()
}

// Unwrap returns the check's sentinel and, when set, the underlying error.
func (e *VerifyError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Check, e.Err}
	}
	return []error{e.Check}
}

// VerifyErrors returns every *VerifyError inside err (as joined by
// [Verify], possibly wrapped by a [PassError]), in report order.
func VerifyErrors(err error) []*VerifyError {
	var out []*VerifyError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ve, ok := e.(*VerifyError); ok {
			out = append(out, ve)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// PassError reports a pass that failed, or whose result failed
// verification. The graph the pipeline ran on is unchanged.
type PassError struct {
	// Pass names the pass; "" when the pipeline's input failed
	// verification before the first pass.
	Pass string
	// Verify is true when the pass succeeded but the verifier rejected its
	// result (or, with Pass "", the pipeline's input).
	Verify bool
	// Err is the cause: the pass's error, or the verifier's joined
	// *VerifyErrors.
	Err error
}

// Error reads `pass "convert": ...` for a failed pass and
// `after pass "convert": ...` for a rejected result.
func (e *PassError) Error() string {
	switch {
	case e.Verify && e.Pass == "":
		return fmt.Sprintf("before the first pass: %v", e.Err)
	case e.Verify:
		return fmt.Sprintf("after pass %q: %v", e.Pass, e.Err)
	}
	return fmt.Sprintf("pass %q: %v", e.Pass, e.Err)
}

// Unwrap returns the cause.
func (e *PassError) Unwrap() error { return e.Err }

// PassPanicError reports a pass that panicked. The pipeline recovers,
// leaves the graph unchanged and returns this error.
type PassPanicError struct {
	// Pass names the pass that panicked.
	Pass  string
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack
}

// Error names the pass and the panic value (the stack is in Stack).
func (e *PassPanicError) Error() string {
	return fmt.Sprintf("pass %q panicked: %v", e.Pass, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PassPanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
