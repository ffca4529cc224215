package scn_test

import (
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestCursorOfDeletedSubscriptionStaysDeleted: a delivery goroutine saving
// its position after its subscription was deleted must not bring the cursor
// back, or the outbox would never be compacted past it.
func TestCursorOfDeletedSubscriptionStaysDeleted(t *testing.T) {
	pg.EachDB(t, testCursorOfDeletedSubscriptionStaysDeleted)
}

func testCursorOfDeletedSubscriptionStaysDeleted(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	sub, err := scn.NewStore(s).CreateSubscription(ctx, hsm.Subscription{Subscriber: "gone", Url: "http://127.0.0.1:1/scn", States: []string{hsm.StateOn}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scn.NewStore(s).DeleteSubscription(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCursor(ctx, scn.SubCursor(sub.ID), 7); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cursor(ctx, scn.SubCursor(sub.ID)); err == nil {
		t.Error("saving the position of a deleted subscription created its cursor again")
	}
	if err := s.SetCursor(ctx, "bus", 7); err != nil {
		t.Fatal(err)
	}
	if cur, err := s.Cursor(ctx, "bus"); err != nil || cur != 7 {
		t.Errorf("bus cursor = %d, %v; want 7", cur, err)
	}
}
