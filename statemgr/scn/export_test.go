package scn

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// What the black-box tests of this package look at inside.

// SubCursor is the outbox cursor of subscription id.
var SubCursor = subCursor

// BusMaxMessages caps the messages of one Publish.
const BusMaxMessages = busMaxMessages

// Publish publishes rows to the bus as the relay does.
func (r *Relay) Publish(ctx context.Context, rows []core.OutboxRow) (int64, error) {
	return r.publish(ctx, rows)
}

// Skipped, Expired and DeadLetters are the relay's counters (Skipped and
// DeadLetters by subscriber label).
func (r *Relay) Skipped(sub string) prometheus.Counter { return r.m.skipped.WithLabelValues(sub) }
func (r *Relay) Expired() prometheus.Counter           { return r.m.expired }
func (r *Relay) DeadLetters(sub string) prometheus.Counter {
	return r.m.deadLetters.WithLabelValues(sub)
}

// Dropped is the counter of subscriptions dropped for failing deliveries.
func (r *Relay) Dropped() prometheus.Counter { return r.m.dropped }

// Subscriptions returns every subscription.
func (s *Store) Subscriptions(ctx context.Context) ([]hsm.Subscription, error) {
	return s.subscriptions(ctx)
}
