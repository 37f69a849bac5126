// Package fxgraph is fxquant's graph IR, modelled on torch.fx: a [Graph] is
// an ordered list of [Node]s (program order) whose arguments nest lists,
// tuples, dicts, slices and literals around node references.
//
// # Editing
//
// Every edit goes through Graph methods ([Graph.SetArgs],
// [Graph.ReplaceAllUsesWith], [Graph.Erase], ...), which keep each node's
// use list right: one [Use] per appearance, so add(x, x) gives x two uses
// and one user. Node names are unique and follow torch.fx's naming
// (quantize_per_tensor_default_1).
//
// A graph is not safe for concurrent mutation.
package fxgraph
