package ops

// opRow is one op of the built-in registry, as data: the qualified
// PyTorch schema string exactly as PyTorch declares it, the result-type
// rule, the DCE and view flags, and a one-line description. buildDefault
// parses and registers every row; the tables are oprows_quant.go and
// oprows_aten.go.
type opRow struct {
	schema string   // "ns::op.overload(args) -> returns"
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
	rows = append(rows, hopRows()...)
	rows = append(rows, symshapeRows...)
	return rows
}
