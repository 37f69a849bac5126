package fxgraph

import "github.com/fxquant/fxquant/ops"

// Module is an attribute that call_module nodes call, such as an observer
// inserted by prepare. Forward receives the node's positional arguments
// with node references replaced by their run-time values (*tensor.Tensor,
// ...) and returns the node's value.
type Module interface {
	// Forward computes the call_module node's value from its positional
	// arguments (node references already replaced by their values). It
	// may update the module's own state (an observer records min/max) but
	// must not modify args; an error stops the run and is reported for
	// the node.
	Forward(args []ops.Value) (ops.Value, error)
}
