package ops

import "fmt"

// ParseSchema parses an unqualified schema "op.overload(args) -> returns".
// TEMPORARY: replaced by the full parser.
func ParseSchema(text string) (*Schema, error) {
	return nil, fmt.Errorf("ops: schema parser not yet implemented")
}

// ParseQualifiedSchema parses "ns::op.overload(args) -> returns".
func ParseQualifiedSchema(text string) (string, *Schema, error) {
	return "", nil, fmt.Errorf("ops: schema parser not yet implemented")
}

func buildDefault() (*Registry, error) { return NewRegistry(), nil }
