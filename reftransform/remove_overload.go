package reftransform

import (
	"context"
	"fmt"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// RemoveTensorOverloadPassName is the name of [RemoveTensorOverloadPass].
const RemoveTensorOverloadPassName = "remove_tensor_overload_for_qdq_ops"

// Packets the reference rewrite matches on.
var (
	pQuantizePerTensor     = ops.Packet{NS: "quantized_decomposed", Name: "quantize_per_tensor"}
	pDequantizePerTensor   = ops.Packet{NS: "quantized_decomposed", Name: "dequantize_per_tensor"}
	pQuantizePerChannel    = ops.Packet{NS: "quantized_decomposed", Name: "quantize_per_channel"}
	pDequantizePerChannel  = ops.Packet{NS: "quantized_decomposed", Name: "dequantize_per_channel"}
	pClamp                 = ops.Packet{NS: "aten", Name: "clamp"}
	removeTensorOverloadOf = map[ops.Target]ops.Packet{
		pQuantizePerTensor.Default():             pQuantizePerTensor,
		pQuantizePerTensor.Overload("tensor"):    pQuantizePerTensor,
		pQuantizePerTensor.Overload("tensor2"):   pQuantizePerTensor,
		pDequantizePerTensor.Default():           pDequantizePerTensor,
		pDequantizePerTensor.Overload("tensor"):  pDequantizePerTensor,
		pDequantizePerTensor.Overload("tensor2"): pDequantizePerTensor,
		pQuantizePerChannel.Default():            pQuantizePerChannel,
		pDequantizePerChannel.Default():          pDequantizePerChannel,
		pClamp.Overload("Tensor"):                pClamp,
	}
)

// RemoveTensorOverloadForQDQOps is torchao's
// remove_tensor_overload_for_qdq_ops (torchao-pt2e.md 6.1): every
// call_function calling quantize_per_tensor.{default,tensor,tensor2},
// dequantize_per_tensor.{default,tensor,tensor2},
// quantize_per_channel.default, dequantize_per_channel.default or
// aten.clamp.Tensor is made to call the packet instead. choose_qparams and
// the torchao ops are not touched. Result.Stats["retargeted"] counts the
// nodes changed. It fails only when a test injects a failure, and then
// leaves g as it was.
func RemoveTensorOverloadForQDQOps(g *fxgraph.Graph) (fxgraph.Result, error) {
	res := fxgraph.Result{Stats: map[string]int{"retargeted": 0}}
	err := g.Atomic(func() error {
		for _, n := range g.Nodes() {
			if n.Op() != fxgraph.CallFunction {
				continue
			}
			if p, ok := removeTensorOverloadOf[n.Target()]; ok {
				if err := step(); err != nil {
					return fmt.Errorf("reftransform: retarget %q: %w", n.Name(), err)
				}
				g.SetTarget(n, p)
				res.Stats["retargeted"]++
				res.Changed = true
			}
		}
		return nil
	})
	return res, err
}

// RemoveTensorOverloadPass returns [RemoveTensorOverloadForQDQOps] as a
// pipeline pass.
func RemoveTensorOverloadPass() fxgraph.Pass {
	return fxgraph.Pass{Name: RemoveTensorOverloadPassName, Run: func(ctx context.Context, g *fxgraph.Graph) (fxgraph.Result, error) {
		if err := ctx.Err(); err != nil {
			return fxgraph.Result{}, err
		}
		return RemoveTensorOverloadForQDQOps(g)
	}}
}
