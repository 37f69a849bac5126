package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/fxquant/fxquant/fxgraph"
	"github.com/fxquant/fxquant/fxgraph/match"
	"github.com/fxquant/fxquant/ops"
)

// cmdMatch finds the graph of a pattern program in a graph and prints each
// match on one line, then the count.
func cmdMatch(e *env, args []string) error {
	fs := flag.NewFlagSet("match", flag.ContinueOnError)
	pattern := fs.String("pattern", "", "the pattern program (.pt2, .json or .txt)")
	matchOutput := fs.Bool("match-output", false, "let the pattern's output node match")
	matchPlaceholder := fs.Bool("match-placeholder", false, "pattern placeholders match only placeholders")
	keepOverlapping := fs.Bool("keep-overlapping", false, "keep matches that share nodes")
	ignoreLiterals := fs.Bool("ignore-literals", false, "literal arguments of the pattern match anything")
	allowOpaque := fs.Bool("allow-opaque", false, "read operators the registry does not know")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if *pattern == "" {
		return usagef("missing --pattern PATTERN")
	}
	if err := wantArgs(pos, 1, 1, "FILE"); err != nil {
		return err
	}
	pin, err := loadFile(*pattern, *allowOpaque)
	if err != nil {
		return err
	}
	in, err := loadFile(pos[0], *allowOpaque)
	if err != nil {
		return err
	}
	p, err := match.FromGraph(pin.graph, nil, nil)
	if err != nil {
		return fmt.Errorf("pattern %s: %w", pin.name, err)
	}
	ms, err := match.Find(in.graph, p,
		match.MatchOutput(*matchOutput),
		match.MatchPlaceholder(*matchPlaceholder),
		match.RemoveOverlappingMatches(!*keepOverlapping),
		match.IgnoreLiterals(*ignoreLiterals),
	)
	if err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	for i, m := range ms {
		fmt.Fprintf(e.stdout, "match %d: %s\n", i+1, formatMatch(m))
	}
	fmt.Fprintf(e.stdout, "%d match%s\n", len(ms), pluralES(len(ms)))
	return nil
}

// formatMatch prints a match as the graph nodes it covers, in pattern
// order, then what each pattern placeholder bound:
//
//	[%linear, %relu] x=%x w=%p_fc1_weight
func formatMatch(m *match.Match) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range m.GraphNodes() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("%" + n.Name())
	}
	b.WriteByte(']')
	phs := m.Pattern().Placeholders()
	for i, v := range m.PlaceholderNodes {
		if i >= len(phs) {
			break
		}
		fmt.Fprintf(&b, " %s=%s", phs[i].Name(), valueText(v))
	}
	return b.String()
}

// valueText prints a bound value: a node as %name, a literal as Go prints it.
func valueText(v ops.Value) string {
	switch x := v.(type) {
	case *fxgraph.Node:
		return "%" + x.Name()
	case nil:
		return "None"
	case float64:
		return fxgraph.PyFloat(x)
	}
	return fmt.Sprint(v)
}

func pluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}
