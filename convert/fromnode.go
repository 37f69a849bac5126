package convert

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
)

// ReplaceObserverPassName is the pass name convert records in the
// from_node metadata of the quantize and dequantize nodes it inserts for an
// observer, as torchao does.
const ReplaceObserverPassName = "replace_observer_with_quantize_dequantize_node"

// NodeSource is one entry of a node's from_node provenance record, laid
// out as torch.fx.traceback.NodeSource.to_dict and the pt2 archive write
// it: the source node's name and printed target, the id of its graph, the
// pass that created the node, the actions joined with "+" ("create",
// "create+replace") and the source node's own from_node record.
type NodeSource struct {
	// Name is the source node's name.
	Name string `json:"name"`
	// Target is the source node's printed target.
	Target string `json:"target"`
	// GraphID is the id of the source node's graph.
	GraphID int64 `json:"graph_id"`
	// PassName is the pass that created the node.
	PassName string `json:"pass_name"`
	// Action is the actions joined with "+" ("create", "create+replace").
	Action string `json:"action"`
	// FromNode is the source node's own from_node record.
	FromNode []NodeSource `json:"from_node"`
}

// ParseFromNode decodes a from_node record (fxgraph.Meta.FromNode). An
// empty string is an empty record.
func ParseFromNode(s string) ([]NodeSource, error) {
	if s == "" {
		return nil, nil
	}
	var out []NodeSource
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("from_node: %w", err)
	}
	return out, nil
}

// FormatFromNode encodes a from_node record as PyTorch's json.dumps does
// (", " and ": " separators, keys in NodeSource order, non-ASCII escaped),
// the form the pt2 archive stores in node metadata.
func FormatFromNode(src []NodeSource) string {
	var b strings.Builder
	writeSources(&b, src)
	return b.String()
}

func writeSources(b *strings.Builder, src []NodeSource) {
	b.WriteByte('[')
	for i, s := range src {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"name": `)
		writePyString(b, s.Name)
		b.WriteString(`, "target": `)
		writePyString(b, s.Target)
		b.WriteString(`, "graph_id": `)
		b.WriteString(strconv.FormatInt(s.GraphID, 10))
		b.WriteString(`, "pass_name": `)
		writePyString(b, s.PassName)
		b.WriteString(`, "action": `)
		writePyString(b, s.Action)
		b.WriteString(`, "from_node": `)
		writeSources(b, s.FromNode)
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

// writePyString writes s as Python's json.dumps with ensure_ascii=True.
func writePyString(b *strings.Builder, s string) {
	b.Write(fxgraph.AppendPyJSONString(nil, s))
}

// observerFromNode is the from_node record of a q or dq node that replaces
// observer node obs: [NodeSource(obs, ReplaceObserverPassName, [CREATE])],
// carrying obs's own record (an output observer copies the observed node's)
// as its from_node. A record of obs that does not decode is dropped.
func observerFromNode(obs *fxgraph.Node, graphID int64) string {
	prev, err := ParseFromNode(obs.Meta.FromNode)
	if err != nil {
		prev = nil
	}
	return FormatFromNode([]NodeSource{{
		Name: obs.Name(), Target: obs.TargetName(), GraphID: graphID,
		PassName: ReplaceObserverPassName, Action: "create", FromNode: prev,
	}})
}
