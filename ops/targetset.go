package ops

import (
	"slices"
	"strings"
)

// TargetSet is a set of targets for the lists that must keep working on
// graphs holding either form of an op: which weight quantize nodes convert
// folds, constant folding's don't-fold list, metadata porting.
//
// Its rule for each form is explicit:
//   - an Overload added with [TargetSet.AddOverload] matches exactly that
//     overload;
//   - a Packet added with [TargetSet.AddPacket] matches the packet itself;
//   - a Packet added with [TargetSet.AddPacketAndOverloads] matches the
//     packet and every overload of it;
//   - a Callable matches itself.
//
// Matchers never use a TargetSet implicitly: they compare targets with ==.
// The zero value is an empty set ready to use.
type TargetSet struct {
	exact    map[Target]bool
	families map[Packet]bool
	order    []string // insertion order of the rules, for String
}

// NewTargetSet returns a set holding the given targets exactly (each
// packet as itself, each overload as itself).
func NewTargetSet(ts ...Target) *TargetSet {
	s := &TargetSet{}
	for _, t := range ts {
		s.Add(t)
	}
	return s
}

// Add adds t to be matched exactly.
func (s *TargetSet) Add(t Target) {
	if s.exact == nil {
		s.exact = map[Target]bool{}
	}
	if !s.exact[t] {
		s.exact[t] = true
		s.order = append(s.order, t.String())
	}
}

// AddOverload adds overload o, matched exactly.
func (s *TargetSet) AddOverload(o Overload) { s.Add(o) }

// AddPacket adds packet p, matched as the packet only.
func (s *TargetSet) AddPacket(p Packet) { s.Add(p) }

// AddPacketAndOverloads adds p and every overload of p: the "both forms"
// rule used for torchao.quantize_affine and friends.
func (s *TargetSet) AddPacketAndOverloads(p Packet) {
	if s.families == nil {
		s.families = map[Packet]bool{}
	}
	if !s.families[p] {
		s.families[p] = true
		s.order = append(s.order, p.String()+".*")
	}
}

// Remove removes a rule: the exact entry for t and, if t is a Packet, its
// family rule.
func (s *TargetSet) Remove(t Target) {
	delete(s.exact, t)
	if p, ok := t.(Packet); ok {
		delete(s.families, p)
	}
	s.rebuildOrder()
}

func (s *TargetSet) rebuildOrder() {
	// Order is informative only; rebuild deterministically.
	var names []string
	for t := range s.exact {
		names = append(names, t.String())
	}
	for p := range s.families {
		names = append(names, p.String()+".*")
	}
	slices.Sort(names)
	s.order = names
}

// Clear empties the set.
func (s *TargetSet) Clear() {
	s.exact, s.families, s.order = nil, nil, nil
}

// Has reports whether t is in the set under the rules above.
func (s *TargetSet) Has(t Target) bool {
	if s == nil || t == nil {
		return false
	}
	if s.exact[t] {
		return true
	}
	if len(s.families) > 0 {
		if p, ok := PacketOf(t); ok && s.families[p] {
			return true
		}
	}
	return false
}

// Len returns the number of rules.
func (s *TargetSet) Len() int { return len(s.exact) + len(s.families) }

// Clone returns an independent copy.
func (s *TargetSet) Clone() *TargetSet {
	c := &TargetSet{}
	for t := range s.exact {
		c.Add(t)
	}
	for p := range s.families {
		c.AddPacketAndOverloads(p)
	}
	c.rebuildOrder()
	return c
}

// String lists the rules, "ns.op.*" standing for a packet and its overloads.
func (s *TargetSet) String() string {
	return "{" + strings.Join(s.order, ", ") + "}"
}
