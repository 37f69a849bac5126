package report

import (
	"slices"

	"github.com/fxquant/fxquant/fxgraph"
)

// Layout constants, in SVG user units (pixels).
const (
	layerGap  = 30  // vertical space between layers
	nodeGap   = 16  // horizontal space between neighbours in a layer
	dummyW    = 4   // width of a virtual node carrying a long edge
	margin    = 12  // space around the drawing
	maxSpan   = 40  // longer edges are drawn straight, without virtual nodes
	sweeps    = 4   // barycenter sweeps (down and up) for crossings
	placeIter = 4   // coordinate sweeps (down and up)
	minNodeW  = 64  // narrowest node box
	maxNodeW  = 240 // widest node box
	charW     = 6.6 // average glyph width of the node font (11px sans-serif)
)

// point is a position in the drawing.
type point struct{ x, y float64 }

// layout is a layered (Sugiyama-style) drawing of a graph: nodes are
// assigned to layers by longest path from the inputs (sources sit just
// above their first user), edges longer than one layer get virtual nodes,
// each layer is ordered by barycenter sweeps to reduce crossings, and x
// positions are pulled toward the neighbours' mean, keeping nodes apart.
// Everything depends only on the graph's node order, so the same graph
// always gives the same drawing.
type layout struct {
	nodes  []*fxgraph.Node
	x, y   []float64 // top-left corner of each real node's box
	w, h   []float64 // box size
	edges  [][]point // one polyline per edge, source bottom to target top
	width  float64
	height float64
	// cuts are y positions between layers (in the gaps), ascending: the
	// drawing is cut there into bands for the page.
	cuts []float64
}

// bands splits the drawing at cuts into horizontal bands about maxH
// high (a band is never cut inside a layer) and returns each band's top;
// the last band ends at height.
func (L *layout) bands(maxH float64) []float64 {
	tops := []float64{0}
	for _, c := range L.cuts {
		if c-tops[len(tops)-1] >= maxH && L.height-c >= maxH/4 {
			tops = append(tops, c)
		}
	}
	return tops
}

// layoutGraph lays g out; width and height give each node's box size,
// by the node's position in g's order.
func layoutGraph(g *fxgraph.Graph, width, height func(i int) float64) *layout {
	nodes := g.Nodes()
	n := len(nodes)
	index := make(map[*fxgraph.Node]int, n)
	for i, nd := range nodes {
		index[nd] = i
	}
	preds := make([][]int, n)
	succs := make([][]int, n)
	for i, nd := range nodes {
		for _, in := range nd.InputNodes() {
			j, ok := index[in]
			if !ok || j == i {
				continue
			}
			preds[i] = append(preds[i], j)
			succs[j] = append(succs[j], i)
		}
	}

	// Layers: longest path from the sources, in graph order (topological).
	layer := make([]int, n)
	for i := range nodes {
		l := 0
		for _, p := range preds[i] {
			if p < i {
				l = max(l, layer[p]+1)
			}
		}
		layer[i] = l
	}
	// Constant subgraphs (weights and what is computed from them alone,
	// such as a weight's quantize chain) sit just above their first user,
	// so a weight used at layer 500 is not drawn at the top: in reverse
	// order, each constant node with users moves to one layer above its
	// earliest user. Placeholders and what depends on them stay put.
	constant := make([]bool, n)
	for i, nd := range nodes {
		c := nd.Op() != fxgraph.Placeholder && nd.Op() != fxgraph.Output
		for _, p := range preds[i] {
			c = c && constant[p]
		}
		constant[i] = c
	}
	for i := n - 1; i >= 0; i-- {
		if !constant[i] || len(succs[i]) == 0 {
			continue
		}
		l := layer[succs[i][0]]
		for _, s := range succs[i][1:] {
			l = min(l, layer[s])
		}
		layer[i] = l - 1
	}
	if n > 0 {
		low := slices.Min(layer)
		for i := range layer {
			layer[i] -= low
		}
	}

	// Virtual nodes for edges spanning several layers.
	type vertex struct {
		up, down []int // neighbours in the layer above and below
		w        float64
		layer    int
		side     bool // a constant node, or a virtual node on its edge
	}
	verts := make([]vertex, n, n+n/2)
	for i := range nodes {
		verts[i] = vertex{w: width(i), layer: layer[i], side: constant[i]}
	}
	var chains [][]int // per edge, its vertices from source to target
	for i := range nodes {
		for _, s := range succs[i] {
			span := layer[s] - layer[i]
			chain := []int{i}
			if span > 1 && span <= maxSpan {
				for l := layer[i] + 1; l < layer[s]; l++ {
					verts = append(verts, vertex{w: dummyW, layer: l, side: constant[i]})
					chain = append(chain, len(verts)-1)
				}
			}
			chain = append(chain, s)
			for k := 0; k+1 < len(chain); k++ {
				a, b := chain[k], chain[k+1]
				if verts[b].layer == verts[a].layer+1 {
					verts[a].down = append(verts[a].down, b)
					verts[b].up = append(verts[b].up, a)
				}
			}
			chains = append(chains, chain)
		}
	}

	nLayers := 0
	for _, v := range verts {
		nLayers = max(nLayers, v.layer+1)
	}
	order := make([][]int, nLayers)
	for v := range verts {
		order[verts[v].layer] = append(order[verts[v].layer], v)
	}
	pos := make([]float64, len(verts)) // index within the layer
	setPos := func(l int) {
		for k, v := range order[l] {
			pos[v] = float64(k)
		}
	}
	for l := range order {
		setPos(l)
	}

	// neighbours are v's neighbours in the layer above (up) or below.
	neighbours := func(v int, up bool) []int {
		if up {
			return verts[v].up
		}
		return verts[v].down
	}

	// Crossing reduction: barycenter sweeps, stable for determinism.
	key := make([]float64, len(verts))
	sortLayer := func(l int, up bool) {
		for _, v := range order[l] {
			nb := neighbours(v, up)
			if len(nb) == 0 {
				key[v] = pos[v]
				continue
			}
			s := 0.0
			for _, u := range nb {
				s += pos[u]
			}
			key[v] = s / float64(len(nb))
		}
		slices.SortStableFunc(order[l], func(a, b int) int {
			switch {
			case key[a] < key[b]:
				return -1
			case key[a] > key[b]:
				return 1
			}
			return 0
		})
		setPos(l)
	}
	for range sweeps {
		for l := 1; l < nLayers; l++ {
			sortLayer(l, true)
		}
		for l := nLayers - 2; l >= 0; l-- {
			sortLayer(l, false)
		}
	}

	// x coordinates (centres): pack, then pull toward the neighbours.
	cx := make([]float64, len(verts))
	for l := range order {
		x := 0.0
		for _, v := range order[l] {
			cx[v] = x + verts[v].w/2
			x += verts[v].w + nodeGap
		}
	}
	// A node on the data path follows its data-path neighbours only, so
	// the main chain of a deep network is drawn straight with its weights
	// beside it.
	want := make([]float64, len(verts))
	type pool struct {
		w, wt float64 // total weight, total weight x target
		n     int
	}
	var blocks []pool
	offs := make([]float64, len(verts))
	place := func(l int, up bool) {
		vs := order[l]
		if len(vs) == 0 {
			return
		}
		for _, v := range vs {
			nb := neighbours(v, up)
			s, k := 0.0, 0
			for _, u := range nb {
				if !verts[u].side || verts[v].side {
					s += cx[u]
					k++
				}
			}
			if k == 0 {
				for _, u := range nb {
					s += cx[u]
					k++
				}
			}
			if k == 0 {
				want[v] = cx[v]
				continue
			}
			want[v] = s / float64(k)
		}
		// The positions closest to the wishes (least squares, data-path
		// nodes weighing far more than side nodes) that keep the layer's
		// order and gaps: with off the packed offsets, y = x - off must
		// be non-decreasing, a weighted isotonic regression, solved in
		// linear time by pooling adjacent violators.
		off := 0.0
		blocks = blocks[:0]
		for k, v := range vs {
			if k > 0 {
				off += verts[vs[k-1]].w/2 + nodeGap + verts[v].w/2
			}
			offs[k] = off
			wt := 1.0
			if !verts[v].side {
				wt = 1e6
			}
			blocks = append(blocks, pool{w: wt, wt: wt * (want[v] - off), n: 1})
			for len(blocks) > 1 {
				a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
				if a.wt/a.w <= b.wt/b.w {
					break
				}
				blocks = blocks[:len(blocks)-2]
				blocks = append(blocks, pool{w: a.w + b.w, wt: a.wt + b.wt, n: a.n + b.n})
			}
		}
		k := 0
		for _, bl := range blocks {
			y := bl.wt / bl.w
			for range bl.n {
				cx[vs[k]] = y + offs[k]
				k++
			}
		}
	}
	for range placeIter {
		for l := 1; l < nLayers; l++ {
			place(l, true)
		}
		for l := nLayers - 2; l >= 0; l-- {
			place(l, false)
		}
	}

	// Layer heights, y positions, and the drawing's extent.
	layerH := make([]float64, nLayers)
	for i := range nodes {
		layerH[layer[i]] = max(layerH[layer[i]], height(i))
	}
	layerY := make([]float64, nLayers)
	y := float64(margin)
	for l := range nLayers {
		layerY[l] = y
		y += layerH[l] + layerGap
	}
	var cuts []float64
	for l := 1; l < nLayers; l++ {
		cuts = append(cuts, round1(layerY[l]-layerGap/2))
	}
	minX := 0.0
	maxX := 0.0
	for v := range verts {
		if v == 0 || cx[v]-verts[v].w/2 < minX {
			minX = cx[v] - verts[v].w/2
		}
		if v == 0 || cx[v]+verts[v].w/2 > maxX {
			maxX = cx[v] + verts[v].w/2
		}
	}
	off := margin - minX
	L := &layout{
		nodes:  nodes,
		x:      make([]float64, n),
		y:      make([]float64, n),
		w:      make([]float64, n),
		h:      make([]float64, n),
		width:  round1(maxX - minX + 2*margin),
		height: round1(max(y-layerGap+margin, 2*margin)),
		cuts:   cuts,
	}
	for i := range nodes {
		L.w[i] = verts[i].w
		L.h[i] = height(i)
		L.x[i] = round1(cx[i] - verts[i].w/2 + off)
		// Centre the box vertically in its layer.
		L.y[i] = round1(layerY[layer[i]] + (layerH[layer[i]]-L.h[i])/2)
	}
	for _, chain := range chains {
		s, t := chain[0], chain[len(chain)-1]
		pts := make([]point, 0, len(chain))
		pts = append(pts, point{L.x[s] + L.w[s]/2, L.y[s] + L.h[s]})
		for _, v := range chain[1 : len(chain)-1] {
			pts = append(pts, point{round1(cx[v] + off), round1(layerY[verts[v].layer] + layerH[verts[v].layer]/2)})
		}
		pts = append(pts, point{L.x[t] + L.w[t]/2, L.y[t]})
		L.edges = append(L.edges, pts)
	}
	return L
}

// round1 rounds to a tenth, so the SVG's numbers are short.
func round1(v float64) float64 {
	if v < 0 {
		return -float64(int64(-v*10+0.5)) / 10
	}
	return float64(int64(v*10+0.5)) / 10
}
