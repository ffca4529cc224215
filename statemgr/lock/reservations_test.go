package lock_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/lock"
	"github.com/hmsuite/hms/statemgr/migrations"
)

func TestReservationExpiry(t *testing.T) { pg.EachDB(t, testReservationExpiry) }

func testReservationExpiry(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	s, srv := hsmtest.OpenAPIOn(t, db, clock.Now)
	gs := &glServer{srv: srv}
	hsmtest.AddComponents(t, s, glN0, glN1)
	res := glDecode[hsm.ReservationResult](t, glPost(t, gs, "/locks/service/reservations", 200,
		hsm.LockRequest{ComponentIDs: []string{glN0, glN1}, ReservationDuration: 1}))
	first := res.Success[0]

	steps := []struct {
		name         string
		advance      time.Duration
		wantReserved bool
	}{
		{name: "just before expiry", advance: 59 * time.Second, wantReserved: true},
		{name: "at expiry", advance: time.Second, wantReserved: false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clock.Add(st.advance)
			status := glDecode[hsm.LockStatusList](t, glPost(t, gs, "/locks/status", 200, hsm.ComponentIDsRequest{ComponentIDs: []string{glN0}}))
			if got := status.Components[0].Reserved; got != st.wantReserved {
				t.Errorf("Reserved = %v, want %v", got, st.wantReserved)
			}
			check := glDecode[hsm.CheckResult](t, glPost(t, gs, "/locks/service/reservations/check", 200,
				hsm.DeputyKeysRequest{DeputyKeys: []hsm.KeyedID{{ID: glN0, Key: first.DeputyKey}}}))
			if got := len(check.Success) == 1; got != st.wantReserved {
				t.Errorf("deputy key valid = %v, want %v", got, st.wantReserved)
			}
		})
	}
	t.Run("expired key cannot renew", func(t *testing.T) {
		glPost(t, gs, "/locks/service/reservations/renew", 400,
			hsm.ReservationKeysRequest{ReservationKeys: []hsm.KeyedID{{ID: glN0, Key: first.ReservationKey}}})
	})
	t.Run("expired reservation is replaced before the reaper runs", func(t *testing.T) {
		again := glDecode[hsm.ReservationResult](t, glPost(t, gs, "/locks/service/reservations", 200, hsm.LockRequest{ComponentIDs: []string{glN0}}))
		if again.Success[0].ReservationKey == first.ReservationKey {
			t.Errorf("new reservation reused the old key")
		}
	})
	t.Run("reaper deletes only expired rows", func(t *testing.T) {
		n, err := lock.ReapReservations(s, t.Context())
		if err != nil || n != 1 {
			t.Fatalf("reaped %d, %v; want 1 (the reservation of %s)", n, err, glN1)
		}
		var ids []string
		rows, err := s.DB.R.Query(`SELECT component_id FROM reservations`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			rows.Scan(&id)
			ids = append(ids, id)
		}
		if d := cmp.Diff([]string{glN0}, ids); d != "" {
			t.Errorf("reservations left (-want +got):\n%s", d)
		}
	})
}

func TestRunReservationReaper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := core.Open(t.Context(), filepath.Join(t.TempDir(), "hsm.db"), migrations.FS, core.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		hsmtest.AddComponents(t, s, glN0, glN1)
		ctx, cancel := context.WithCancel(t.Context())
		if err := lock.ReserveService(s, ctx, []string{glN0}, time.Minute); err != nil {
			t.Fatal(err)
		}
		done := make(chan error)
		go func() {
			done <- lock.RunReservationReaper(ctx, lock.NewStore(s), 30*time.Second, slog.New(slog.DiscardHandler))
		}()
		count := func() int {
			var n int
			if err := s.DB.R.QueryRow(`SELECT COUNT(*) FROM reservations`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		time.Sleep(31 * time.Second) // fake time inside the bubble
		synctest.Wait()
		if n := count(); n != 1 {
			t.Errorf("after 31s: %d reservations, want 1", n)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if n := count(); n != 0 {
			t.Errorf("after 61s: %d reservations, want 0", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("reaper returned %v after cancel", err)
		}
	})
}

func TestRunReservationReaperRejectsBadInterval(t *testing.T) {
	pg.EachDB(t, testRunReservationReaperRejectsBadInterval)
}

func testRunReservationReaperRejectsBadInterval(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.OpenAPIOn(t, db, nil)
	if err := lock.RunReservationReaper(t.Context(), lock.NewStore(s), 0, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("interval 0 accepted")
	}
}
