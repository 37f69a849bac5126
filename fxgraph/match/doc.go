// Package match finds subgraphs of an [fxgraph.Graph] that look like a
// pattern and rewrites them, with the semantics of torch.fx's
// SubgraphMatcher and replace_pattern_with_filters (spec/fx-graph.md
// sections 4 and 5), in time linear in the graph for ordinary patterns.
//
// # Patterns
//
// A [Pattern] is a small graph. Write it as a Go function over a [Builder]
// (the way torchao traces a Python function into a pattern) with
// [NewPattern], or wrap an existing graph with [FromGraph]. Placeholders are
// the pattern's inputs; literals fix argument values; [Builder.Name] names a
// node for the caller (SubgraphMatcherWithNameNodeMap's name_node_map);
// [Builder.AnyTarget] lets one node match every target of an
// [ops.TargetSet]. Otherwise targets compare with ==, so a packet never
// matches one of its overloads. A pattern whose placeholder nothing uses
// is rejected when it is built.
//
// # Matching
//
// [NewMatcher] takes the options [MatchOutput], [MatchPlaceholder],
// [RemoveOverlappingMatches] (on by default), [IgnoreLiterals],
// [NodeNameMatch] and [WithRegistry]. [Matcher.Match] anchors the search on
// the pattern's returning nodes, takes anchor candidates in program order
// (or from a prebuilt [Index], with [Matcher.MatchIndex]), and walks
// backwards from each candidate.
// A placeholder binds one graph node or one literal; two pattern nodes never
// bind the same graph node. Arguments of an [ops.Overload] target compare
// after schema normalisation. Matches whose inner nodes have users outside
// the match, or whose fusion would create a cycle, are dropped; overlapping
// matches are dropped greedily in discovery (graph) order.
//
// # Rewriting
//
// [ReplacePatternWithFilters] replaces every surviving match with a copy of
// a replacement graph (or the graph a callback returns for the match). It
// validates every replacement before it changes anything, so a rewrite that
// cannot go through returns an error and leaves the graph as it was. Each
// match is checked again right before it is replaced; a match that an
// earlier replacement invalidated is skipped.
//
// Replacement nodes take their names from the replacement graph (made
// unique in the target graph). A node that replaces a returned value takes
// that value's type, and the replaced node's metadata when the replacement
// node has none; every other new node keeps the type and metadata the
// replacement graph gives it.
//
// # Cost
//
// [Matcher.Match] makes one O(N) pass that numbers the nodes in program
// order. A single-anchor pattern is searched inside that pass, at each
// candidate as the pass reaches it, for O(P) per candidate plus a cycle
// check bounded by program order; patterns with k anchors collect their
// candidates in the pass and explore the product of the lists, as torch.fx
// does. Match records are allocated in chunks.
//
// A rewrite reuses the order numbers and its scratch buffers from one
// replacement to the next, so it costs O(N) plus O(P + R) per match for a
// replacement of R nodes. For a pattern that returns one node, the
// recheck before each replacement re-reads only the nodes that earlier
// replacements rewired. [ReplacePattern] with such a pattern and a
// replacement that computes one untyped node from all its inputs goes
// further: no replacement can then fail its checks, so each match is
// replaced as soon as the search finds it, in the same pass, while its
// nodes are still in the cache; the result is the same.
package match
