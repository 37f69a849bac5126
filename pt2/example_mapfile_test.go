package pt2_test

import (
	"fmt"
	"sort"

	"github.com/fxquant/fxquant/pt2"
)

// Read a program with its weights mapped from the file: the tensors
// (here by placeholder name, with the shapes of the fixture's
// Linear(32, 64) and Linear(64, 16)) are views of the archive's stored
// entries, not copies, and stay valid for the life of the process.
func ExampleReadFile_mapFile() {
	p, err := pt2.ReadFile("../tests/testdata/pt2e/mlp.float.pt2", &pt2.Options{MapFile: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	attrs := p.LiftedAttrs()
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Println(name, attrs[name].Shape())
	}
	// Output:
	// p_fc1_bias [64]
	// p_fc1_weight [64 32]
	// p_fc2_bias [16]
	// p_fc2_weight [16 64]
}
