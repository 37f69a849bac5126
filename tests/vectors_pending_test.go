package tests

func init() {
	// fx_static_linear needs prepare, calibration and convert (the
	// prepare/convert issue); until it lands its cases are listed as pending.
	pendingCategories["fx_static_linear"] = "needs prepare/calibrate/convert (convert package)"
}
