package statemgr

import "github.com/hmsuite/hms/statemgr/hsm"

// Transitional names for filter.go, which another change is rewriting; they
// go away once it refers to package hsm directly.
var (
	States  = hsm.States
	Flags   = hsm.Flags
	Arches  = hsm.Arches
	Classes = hsm.Classes
)
