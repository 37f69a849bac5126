package ops

import (
	"testing"

	"github.com/fxquant/fxquant/ops/tensor"
)

func BenchmarkBuildDefault(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildDefault(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildDefaultCold is the default registry's cost to a fresh
// process: index the embedded operator table, then parse the hand rows
// (each a table entry decoded for the first time).
func BenchmarkBuildDefaultCold(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		table, err := indexTable(schemaTableJSON)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := buildDefaultFrom(table); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSchemaTable parses every schema of the table: the cost the
// lazy look-up avoids.
func BenchmarkParseSchemaTable(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		table, err := indexTable(schemaTableJSON)
		if err != nil {
			b.Fatal(err)
		}
		for k := range table.len() {
			if e := table.entry(k); e.err != nil {
				b.Fatal(e.err)
			}
		}
	}
}

func BenchmarkParseType(b *testing.B) {
	const s = "!quant.uniform<i8:f32:1, {0.1,0.2:3,0.3,0.4}>[16, 4, 3, 3]"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseType(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolveAndResult(b *testing.B) {
	r := Default()
	add := MustPacket("aten.add")
	x := Plain(tensor.Float32, 4, 32)
	b.ReportAllocs()
	for b.Loop() {
		o, err := r.Resolve(add, []Value{x, 1.5}, nil)
		if err != nil {
			b.Fatal(err)
		}
		def, _ := r.Op(o)
		full, err := def.Schema.Normalize([]Value{x, 1.5}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := def.Result(full); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpLookup looks up a hand-written row and a table op (after its
// first look-up built the row).
func BenchmarkOpLookup(b *testing.B) {
	r := Default()
	for _, name := range []string{"aten.linear.default", "aten.hardswish_.default"} {
		o := MustOverload(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := r.Op(o); !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}
