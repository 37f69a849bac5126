package fxgraph

import "github.com/fxquant/fxquant/ops"

// Module is an attribute that call_module nodes call, such as an observer
// inserted by prepare. Forward receives the node's positional arguments
// with node references replaced by their run-time values (*tensor.Tensor,
// ...) and returns the node's value.
type Module interface {
	Forward(args []ops.Value) (ops.Value, error)
}
