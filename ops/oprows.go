package ops

// opRow is one hand-written op of the built-in registry: what fxquant adds
// to PyTorch's operator table (ops/schemas), namely the result-type rule,
// the DCE and view flags and a one-line description. Kernels live in the
// kernel tables, keyed by overload name. buildDefault
// parses and registers every row; the tables are oprows_quant.go and
// oprows_aten.go.
type opRow struct {
	// op names an overload of the operator table, "aten.relu_.default"; the
	// row then takes its schema and tags from the table.
	op string
	// schema is the qualified schema "ns::op.overload(args) -> returns": the
	// only source for an op the table lacks (higher_order::out_dtype); for a
	// table op it may be given too and must then print as the table's.
	schema string
	result TypeFunc // result-type rule
	impure bool     // keep under DCE even when unused (assertions, randomness)
	view   bool     // result aliases argument 0; typed rewrites keep the element type
	doc    string   // one-line semantics
}

// allRows returns every built-in row in registration order: the
// quantization ops first, then aten, then the higher-order ops.
func allRows() []opRow {
	var rows []opRow
	rows = append(rows, quantRows...)
	rows = append(rows, atenRows...)
	rows = append(rows, structRows...)
	rows = append(rows, elemRows...)
	rows = append(rows, hopRows()...)
	rows = append(rows, symshapeRows...)
	return rows
}
