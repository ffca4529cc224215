package power

// EventKind says what an Event reports.
type EventKind int

// The events a Service reports through Config.OnEvent.
const (
	// EventTask: a transition's task changed status or description.
	EventTask EventKind = iota + 1
	// EventTransitionDone: a transition ended (completed or aborted).
	EventTransitionDone
	// EventCapDone: a power-cap task completed.
	EventCapDone
	// EventReported: HSM took the power state (Status, HSM's "Off" or
	// "On") of Xnames.
	EventReported
)

// Event is a change in the engine a caller may wait on (tests, `hms
// power`'s progress) instead of polling the API.
type Event struct {
	Kind EventKind
	// ID is the transition's or the power-cap task's.
	ID string
	// Xname, Status and Description are the task's (EventTask), or
	// Status is the transition's (EventTransitionDone).
	Xname, Status, Description string
	// Xnames are the components HSM was told of (EventReported).
	Xnames []string
}

// emit reports ev to Config.OnEvent, if set. It is called without locks
// held; OnEvent must not block for long.
func (s *Service) emit(ev Event) {
	if s.cfg.OnEvent != nil {
		s.cfg.OnEvent(ev)
	}
}
