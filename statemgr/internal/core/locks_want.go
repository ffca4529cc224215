package core

// StatusWant holds the locked/reserved/reservationDisabled filters of GET /locks/status.
type StatusWant struct {
	Locked, Reserved, Disabled *bool
}

// accepts reports whether a component with this lock state passes w.
func (w StatusWant) accepts(locked, reserved, disabled bool) bool {
	return (w.Locked == nil || *w.Locked == locked) && (w.Reserved == nil || *w.Reserved == reserved) &&
		(w.Disabled == nil || *w.Disabled == disabled)
}
