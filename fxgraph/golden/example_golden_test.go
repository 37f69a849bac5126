package golden_test

import (
	"fmt"

	"github.com/fxquant/fxquant/fxgraph/golden"
)

// A case file is a txtar archive: a comment, then "-- name --" sections.
// A test reads the input section, runs the code under test and compares
// the output with the want section (golden.CheckSection does the
// comparison and, under -update, rewrites the section).
func ExampleParseArchive() {
	a := golden.ParseArchive([]byte(`DCE removes the dead relu.
-- input --
relu(x) unused
-- want --
x
`))
	fmt.Printf("comment: %q\n", a.Comment)
	for _, f := range a.Files {
		fmt.Printf("%s: %q\n", f.Name, f.Data)
	}
	a.Set("want", []byte("x\nrelu\n"))
	fmt.Print(string(a.Format()))
	// Output:
	// comment: "DCE removes the dead relu.\n"
	// input: "relu(x) unused\n"
	// want: "x\n"
	// DCE removes the dead relu.
	// -- input --
	// relu(x) unused
	// -- want --
	// x
	// relu
}

// Diff marks lines only in want with "- " and lines only in got with "+ ".
func ExampleDiff() {
	fmt.Print("diff:\n" + golden.Diff("a\nb\nc\n", "a\nB\nc\n"))
	// Output:
	// diff:
	//   a
	// - b
	// + B
	//   c
}
