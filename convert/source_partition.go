package convert

import (
	"github.com/fxquant/fxquant/fxgraph"
)

// A source names what an annotator looks for in torch.fx's
// get_source_partitions: a leaf module class or a Python function.
type source struct {
	// module is the qualified class of a leaf module
	// ("torch.nn.modules.pooling.AdaptiveAvgPool2d"), "" for a function.
	module string
	// fn is the qualified name of a function ("torch.cat"), "" for a module.
	fn string
}

var (
	srcAdaptiveAvgPool2d  = source{module: "torch.nn.modules.pooling.AdaptiveAvgPool2d"}
	srcFAdaptiveAvgPool2d = source{fn: "torch.nn.functional.adaptive_avg_pool2d"}
	srcCat                = source{fn: "torch.cat"}
)

// sourcePartition is one of get_source_partitions' SourcePartitions: the
// nodes one module call or function call became, and those of them with a
// user outside the partition, in graph order.
type sourcePartition struct {
	nodes   []*fxgraph.Node
	outputs []*fxgraph.Node
}

// sourcePartitions is torch 2.14's
// torch.fx.passes.utils.source_matcher_utils.get_source_partitions for the
// sources torchao's XNNPACK annotators ask for. A node belongs to a source
// in one of two ways:
//
//   - its source_fn_stack's last entry names the source (graphs captured
//     with the older APIs, which record source_fn_stack);
//   - it has no source_fn_stack, is a call_function, and the innermost entry
//     of its nn_module_stack is a wanted module class (torch 2.14's
//     fallback for export graphs). A function source never matches this
//     way, and neither does torch_fn: torch compares the function's name
//     with the wanted function objects, which are never equal to a string.
//
// So on a torch 2.14 export, torch.cat and F.adaptive_avg_pool2d give no
// partition, while an nn.AdaptiveAvgPool2d module call does.
//
// Partitions are keyed by the source and then by the name (module path for
// the fallback) in first-seen order, as Python's dicts keep them. The
// partitions of all wanted sources are returned concatenated in that order,
// as torchao's itertools.chain over the dict's values; the caller drops
// those with a node its filter rejects.
func sourcePartitions(g *fxgraph.Graph, wanted []source) []sourcePartition {
	// Sources come in wanted order: each index is registered up front.
	srcs := make([]int, len(wanted))
	for i := range srcs {
		srcs[i] = i
	}
	groups := newPartitionGroups(srcs...)
	for _, n := range g.Nodes() {
		m := n.Meta
		if len(m.SourceFnStack) > 0 {
			last := m.SourceFnStack[len(m.SourceFnStack)-1]
			for i, w := range wanted {
				if (w.module != "" && last.Target == w.module) || (w.fn != "" && last.Target == w.fn) {
					groups.add(i, last.Name, n)
					break
				}
			}
			continue
		}
		if n.Op() != fxgraph.CallFunction || len(m.NNModuleStack) == 0 {
			continue
		}
		inner := m.NNModuleStack[len(m.NNModuleStack)-1]
		for i, w := range wanted {
			if w.module != "" && inner.Type == w.module {
				groups.add(i, inner.Path, n)
				break
			}
		}
	}
	return groups.partitions()
}

// partitionGroups collects get_source_partitions' nodes by source and then
// by name (module path or call name), both in first-added order as
// Python's dicts keep them, unless newPartitionGroups registered the
// sources up front.
type partitionGroups[S comparable] struct {
	srcs  []S
	names map[S][]string
	nodes map[partitionKey[S]][]*fxgraph.Node
}

type partitionKey[S comparable] struct {
	src  S
	name string
}

// newPartitionGroups returns empty groups whose sources come in the order
// of srcs, then any other source in first-added order.
func newPartitionGroups[S comparable](srcs ...S) *partitionGroups[S] {
	pg := &partitionGroups[S]{names: map[S][]string{}, nodes: map[partitionKey[S]][]*fxgraph.Node{}}
	for _, s := range srcs {
		pg.addSource(s)
	}
	return pg
}

func (pg *partitionGroups[S]) addSource(src S) {
	if _, ok := pg.names[src]; !ok {
		pg.srcs = append(pg.srcs, src)
		pg.names[src] = nil
	}
}

func (pg *partitionGroups[S]) add(src S, name string, n *fxgraph.Node) {
	pg.addSource(src)
	k := partitionKey[S]{src, name}
	if _, ok := pg.nodes[k]; !ok {
		pg.names[src] = append(pg.names[src], name)
	}
	pg.nodes[k] = append(pg.nodes[k], n)
}

// partitions lists the partitions, source by source.
func (pg *partitionGroups[S]) partitions() []sourcePartition {
	var out []sourcePartition
	for _, src := range pg.srcs {
		for _, name := range pg.names[src] {
			nodes := pg.nodes[partitionKey[S]{src, name}]
			out = append(out, sourcePartition{nodes: nodes, outputs: partitionOutputs(nodes)})
		}
	}
	return out
}

// partitionOutputs lists the nodes (get_attr excepted) with a user outside
// the partition, in graph order (the nodes are collected in graph order).
func partitionOutputs(nodes []*fxgraph.Node) []*fxgraph.Node {
	in := make(map[*fxgraph.Node]bool, len(nodes))
	for _, n := range nodes {
		in[n] = true
	}
	var outs []*fxgraph.Node
	for _, n := range nodes {
		if n.Op() == fxgraph.GetAttr {
			continue
		}
		for _, u := range n.Users() {
			if !in[u] {
				outs = append(outs, n)
				break
			}
		}
	}
	return outs
}
