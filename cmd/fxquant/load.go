package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/pt2"
)

// input is a file read by a subcommand: its graph and, for .pt2 and .json
// inputs, the program around it.
type input struct {
	name    string // the file name as given (or "<embedded mlp.float.pt2>")
	graph   *fxgraph.Graph
	program *pt2.Program // nil for a text graph
}

// fileKind says how a file is read.
type fileKind int

const (
	kindPT2     fileKind = iota // PT2 archive or legacy zip
	kindJSON                    // bare export JSON program
	kindText                    // golden text format (graph():)
	kindListing                 // fixture listing (name | op | target | args | kwargs)
)

// sniff decides how to read data: by extension first, then by content.
func sniff(name string, data []byte) fileKind {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch strings.ToLower(filepath.Ext(name)) {
	case ".pt2", ".zip":
		return kindPT2
	case ".json":
		return kindJSON
	}
	switch {
	case bytes.HasPrefix(data, []byte("PK")):
		return kindPT2
	case bytes.HasPrefix(trimmed, []byte("{")):
		return kindJSON
	case bytes.HasPrefix(trimmed, []byte("graph(")):
		return kindText
	case len(trimmed) > 0 && bytes.Contains(firstLine(trimmed), []byte(" | ")):
		return kindListing
	}
	return kindText
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// loadFile reads the graph stored in name. allowOpaque lets programs use
// operators the registry does not know.
func loadFile(name string, allowOpaque bool) (*input, error) {
	archive, err := probeInput(name)
	if err != nil {
		return nil, err
	}
	if archive {
		// Mapped: the weights stay in the page cache, outside the Go
		// heap, and the graph's tensors are views of them (issue 15).
		p, err := pt2.ReadFile(name, &pt2.Options{AllowOpaque: allowOpaque, MapFile: true})
		if err != nil {
			return nil, err
		}
		return &input{name: name, program: p, graph: p.Graph}, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return loadBytes(name, data, allowOpaque)
}

// probeInput looks at name before it is read. It refuses a file larger
// than the reader's total limit (pt2.DefaultMaxTotalBytes), or, unless it
// is a zip, larger than the JSON limit (pt2.DefaultMaxJSONBytes): a
// program JSON or a text graph is decoded whole. archive reports whether
// name is read as a PT2 archive: sniff's verdict on its extension and
// first bytes. A file it cannot open or stat passes: reading it reports
// the problem.
func probeInput(name string) (archive bool, err error) {
	f, err := os.Open(name)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if st, err := f.Stat(); err == nil {
		if st.Size() > pt2.DefaultMaxTotalBytes {
			return false, fmt.Errorf("%s: file is %d bytes, more than the %d fxquant reads", name, st.Size(), pt2.DefaultMaxTotalBytes)
		}
		if len(head) >= 2 && !bytes.HasPrefix(head, []byte("PK")) && st.Size() > pt2.DefaultMaxJSONBytes {
			return false, fmt.Errorf("%s: file is %d bytes and not a zip, more than the %d fxquant reads as JSON or text", name, st.Size(), pt2.DefaultMaxJSONBytes)
		}
	}
	return sniff(name, head) == kindPT2, nil
}

// loadBytes reads a graph from data; name is used for the format and in
// error messages.
func loadBytes(name string, data []byte, allowOpaque bool) (*input, error) {
	opts := &pt2.Options{AllowOpaque: allowOpaque}
	in := &input{name: name}
	switch sniff(name, data) {
	case kindPT2:
		p, err := pt2.Read(data, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		in.program, in.graph = p, p.Graph
	case kindJSON:
		p, err := pt2.ReadJSON(data, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		in.program, in.graph = p, p.Graph
	case kindText:
		g, err := fxgraph.Parse(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		in.graph = g
	case kindListing:
		rows, err := fxgraph.ParseListing(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		g, err := fxgraph.GraphFromListing(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		in.graph = g
	}
	if in.graph == nil {
		return nil, fmt.Errorf("%s: %w", name, errors.New("no graph"))
	}
	if in.program == nil && !allowOpaque {
		// The pt2 reader refuses unknown operators itself; text does not.
		if err := knownTargets(in.graph); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return in, nil
}
