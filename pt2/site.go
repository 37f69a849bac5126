package pt2

import (
	"strconv"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/ops"
)

// siteKind says how a site extends its parent.
type siteKind uint8

const (
	siteNode       siteKind = iota // node "n" (overload)
	siteSymNode                    // node "n" (operator.text)
	siteInput                      // input "text"
	siteOutput                     // output i
	siteArg                        // up: argument "text"
	sitePositional                 // up: positional argument i
	siteIndex                      // up[i]
	siteKey                        // up["text"]
)

// site says where the writer is (a node, one of its arguments, an element
// of a list argument) for the errors it gives. The text is built only
// when an error needs it: writing a program formats no location. Sites
// are kept on a stack in the encoder (encoder.sites): child sites name
// their parent by index, and none is allocated on its own.
type site struct {
	up   siteID // the enclosing site, in the encoder's stack; -1 for none
	kind siteKind
	node *fxgraph.Node
	ov   ops.Overload
	text string
	i    int
}

// siteID is a site's index in the encoder's stack of sites.
type siteID int32

// root starts the stack with s, a node, input or output.
func (e *encoder) root(s site) siteID {
	s.up = -1
	e.sites = append(e.sites[:0], s)
	return 0
}

// child pushes s, a part of up.
func (e *encoder) child(up siteID, s site) siteID {
	s.up = up
	e.sites = append(e.sites, s)
	return siteID(len(e.sites) - 1)
}

// drop pops id and the sites above it once its value is written.
func (e *encoder) drop(id siteID) { e.sites = e.sites[:id] }

// loc is the location of id as the errors spell it, for example
// `node "linear" (aten.linear.default): argument "weight"`.
func (e *encoder) loc(id siteID) string { return string(e.appendSite(nil, id)) }

func (e *encoder) appendSite(b []byte, id siteID) []byte {
	s := &e.sites[id]
	switch s.kind {
	case siteNode:
		b = append(b, "node "...)
		b = strconv.AppendQuote(b, s.node.Name())
		b = append(b, " ("...)
		b = append(b, s.ov.String()...)
		return append(b, ')')
	case siteSymNode:
		b = append(b, "node "...)
		b = strconv.AppendQuote(b, s.node.Name())
		b = append(b, " (operator."...)
		b = append(b, s.text...)
		return append(b, ')')
	case siteInput:
		return strconv.AppendQuote(append(b, "input "...), s.text)
	case siteOutput:
		return strconv.AppendInt(append(b, "output "...), int64(s.i), 10)
	case siteArg:
		return strconv.AppendQuote(append(e.appendSite(b, s.up), ": argument "...), s.text)
	case sitePositional:
		return strconv.AppendInt(append(e.appendSite(b, s.up), ": positional argument "...), int64(s.i), 10)
	case siteIndex:
		return append(strconv.AppendInt(append(e.appendSite(b, s.up), '['), int64(s.i), 10), ']')
	case siteKey:
		return append(strconv.AppendQuote(append(e.appendSite(b, s.up), '['), s.text), ']')
	}
	return append(b, '?')
}
