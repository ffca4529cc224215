package heartbeat

import "time"

// Record is a node's persisted state: what the tracker last decided about it.
type Record struct {
	XName string
	State State
	// LastHB is the time stamp of the node's last heartbeat before the change.
	LastHB time.Time
	// ChangedAt is when the tracker made the change.
	ChangedAt time.Time
	// Prev is the state before the change.
	Prev State
	// PendingHSM and PendingBus say HSM or the bus has not confirmed the change.
	PendingHSM, PendingBus bool
}

// change is the transition r records.
func (r Record) change() Change {
	return Change{XName: r.XName, From: r.Prev, To: r.State, LastHB: r.LastHB, At: r.ChangedAt}
}

// Restore loads persisted records; call it before Run. Nodes that were alive or
// warned count as heard from now, so none is declared dead before Errtime has
// passed (the incumbent's "stale keys" problem); dead nodes stay dead until they
// beat again, which is then a restart.
func (t *Tracker) Restore(recs []Record) {
	now := t.now().UnixNano()
	warn, errt := t.warn.Load(), t.errt.Load()
	for _, r := range recs {
		sh := t.shard(r.XName)
		sh.mu.Lock()
		idx, ok := sh.index[r.XName]
		if !ok {
			idx = sh.add(r.XName)
		}
		n := &sh.nodes[idx]
		n.sent = r.LastHB.UnixNano()
		n.last = now
		sh.setState(n, r.State)
		switch r.State {
		case Alive:
			sh.schedule(idx, now+warn)
		case Warned:
			sh.schedule(idx, now+errt)
		}
		sh.mu.Unlock()
	}
}
