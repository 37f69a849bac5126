package match

// Test-only hooks into the rewriter.

// FullRecheck makes the rewriter recheck every match in full.
func FullRecheck() Option { return func(o *options) { o.fullRecheck = true } }

// TwoPhase makes ReplacePattern find every match before it replaces any.
func TwoPhase() Option { return func(o *options) { o.twoPhase = true } }

// RecheckStats counts a rewrite's rechecks.
type RecheckStats = recheckStats

// WithRecheckStats makes the rewriter count its rechecks into st.
func WithRecheckStats(st *RecheckStats) Option { return func(o *options) { o.stats = st } }

// Counts returns the number of incremental and of full rechecks.
func (st *recheckStats) Counts() (incremental, full int) { return st.incremental, st.full }

// OnePass returns the number of matches replaced in one pass and the
// number of matches collected for the two-phase rest.
func (st *recheckStats) OnePass() (replaced, rest int) { return st.onePass, st.onePassRest }

// FailAt makes a rewrite fail at its k-th edit step (k >= 1): before a
// node is created, a returning node's uses are rewired or a matched node
// is erased.
func FailAt(k int) Option { return func(o *options) { o.failAt = k } }

// ErrInjected is the failure FailAt injects.
var ErrInjected = errInjected
