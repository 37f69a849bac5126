// Package golden compares test output with golden files and rewrites them
// under the -update flag, as go/printer's tests do.
//
// # Golden files
//
// [Check] compares bytes with a file; run the tests with
//
//	go test ./... -update
//
// to rewrite the files with the current output instead. The flag is
// registered by this package: test packages that import it read it with
// [Update] and must not register their own -update flag.
//
// # Txtar cases
//
// A case file is a txtar archive (the format of golang.org/x/tools/txtar,
// read here without that dependency): a free-form comment, then sections
// each introduced by a line "-- name --". [ParseArchive] reads one,
// [Archive.Format] writes it back, and [CheckSection] compares one section
// with the output and, under -update, rewrites that section in place.
// fxquant's cases use the sections "input", "want" and "want.err".
package golden
