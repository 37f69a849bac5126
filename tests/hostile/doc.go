// Package hostile runs fxquant's command line on a corpus of malformed and
// crafted inputs (testdata/, listed with the error each must give in
// testdata/manifest.json) under a stated memory bound. The corpus is
// built from the real fixture archives by gen.go:
//
//	go generate ./tests/hostile
//
// It has no non-test code of its own.
package hostile

//go:generate go run gen.go
