package ops

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// TestSchemaTableRoundTrips parses every schema of PyTorch 2.14.1's
// operator table (ops/schemas/torch-2.14.1-ops.json, str(FunctionSchema) of
// each overload) and prints each back to PyTorch's exact text.
func TestSchemaTableRoundTrips(t *testing.T) {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(schemaTableJSON))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(strings.TrimSpace(sc.Text()), ",")
		if !strings.HasPrefix(line, `{"op"`) {
			continue
		}
		var e struct {
			Op     string   `json:"op"`
			Schema string   `json:"schema"`
			Tags   []string `json:"tags"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		n++
		ns, s, err := ParseQualifiedSchema(e.Schema)
		if err != nil {
			t.Errorf("%s: %v", e.Op, err)
			continue
		}
		if got := ns + "::" + s.String(); got != e.Schema {
			t.Errorf("%s: round trip\n got %s\nwant %s", e.Op, got, e.Schema)
		}
	}
	if n != 3932 {
		t.Errorf("read %d schemas, want 3932", n)
	}
}
