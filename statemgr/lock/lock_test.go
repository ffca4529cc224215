package lock_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

const (
	glN0 = "x0c0s0b0n0"
	glN1 = "x0c0s0b0n1"
	glN2 = "x0c0s1b0n0"
	glN3 = "x0c0s1b0n1"
)

// glColumns returns components.locked and reservation_disabled of id.
func glColumns(t *testing.T, s *core.Store, id string) (locked, disabled bool) {
	t.Helper()
	if err := s.DB.R.QueryRow(`SELECT locked, reservation_disabled FROM components WHERE id = ?`, id).Scan(&locked, &disabled); err != nil {
		t.Fatal(err)
	}
	return locked, disabled
}

func TestLockUnlockRepairDisable(t *testing.T) { pg.EachDB(t, testLockUnlockRepairDisable) }

func testLockUnlockRepairDisable(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.AddComponents(t, s, glN0, glN1, glN2, glN3, "x0c0s0b0")
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "lock", Method: "POST", Path: "/locks/lock", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n0","x0c0s0b0n1"]}`,
			Want: `{"Counts":{"Total":2,"Success":2,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0n0","x0c0s0b0n1"]},"Failure":[]}`},
		{Name: "lock again rigid", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "x0c0s0b0n0 (Locked)",
			Body: `{"ComponentIDs":["x0c0s1b0n0","x0c0s0b0n0"]}`},
		{Name: "rigid applied nothing", Method: "POST", Path: "/locks/status", Status: 200, Body: `{"ComponentIDs":["x0c0s1b0n0"]}`,
			Want: `{"Components":[{"ID":"x0c0s1b0n0","Locked":false,"Reserved":false,"ReservationDisabled":false}]}`},
		{Name: "lock flexible", Method: "POST", Path: "/locks/lock", Status: 200,
			Body: `{"ComponentIDs":["x0c0s1b0n0","x0c0s0b0n0","x9c0s0b0n0"],"ProcessingModel":"Flexible"}`,
			Want: `{"Counts":{"Total":3,"Success":1,"Failure":2},"Success":{"ComponentIDs":["x0c0s1b0n0"]},
				"Failure":[{"ID":"x0c0s0b0n0","Reason":"Locked"},{"ID":"x9c0s0b0n0","Reason":"NotFound"}]}`},
		{Name: "unknown id rigid", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "NotFound", Body: `{"ComponentIDs":["x9c0s0b0n0","x0c0s1b0n1"]}`},
		{Name: "nothing found flexible", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "Component not found",
			Body: `{"ComponentIDs":["x9c0s0b0n0"],"ProcessingModel":"flexible"}`},
		{Name: "filter finds nothing", Method: "POST", Path: "/locks/disable", Status: 400, Detail: "Component not found", Body: `{"Type":["CabinetPDU"]}`},
		{Name: "filter finds nothing unlock", Method: "POST", Path: "/locks/unlock", Status: 400, Detail: "Component not found", Body: `{"Type":["CabinetPDU"]}`},
		{Name: "bad model", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "ProcessingModel", Body: `{"ComponentIDs":["x0c0s1b0n1"],"ProcessingModel":"loose"}`},
		{Name: "bad xname", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "ComponentIDs[1]", Body: `{"ComponentIDs":["x0c0s1b0n1","n1"]}`},
		{Name: "no selector", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "ComponentIDs", Body: `{}`},
		{Name: "malformed", Method: "POST", Path: "/locks/lock", Status: 400, Body: `{"ComponentIDs":[`},
		{Name: "bad filter value", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "State", Body: `{"State":["sleepy"]}`},
		{Name: "lock by filter", Method: "POST", Path: "/locks/lock", Status: 200, Body: `{"Type":["NodeBMC"]}`,
			Want: `{"Counts":{"Total":1,"Success":1,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0"]},"Failure":[]}`},
		{Name: "unlock", Method: "POST", Path: "/locks/unlock", Status: 200, Body: `{"ComponentIDs":["x0c0s1b0n0","x0c0s0b0"]}`,
			Want: `{"Counts":{"Total":2,"Success":2,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0","x0c0s1b0n0"]},"Failure":[]}`},
		{Name: "unlock unlocked", Method: "POST", Path: "/locks/unlock", Status: 400, Detail: "Unlocked", Body: `{"ComponentIDs":["x0c0s1b0n0"]}`},
		{Name: "disable", Method: "POST", Path: "/locks/disable", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n1","x0c0s1b0n1"]}`,
			Want: `{"Counts":{"Total":2,"Success":2,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0n1","x0c0s1b0n1"]},"Failure":[]}`},
		{Name: "disable is idempotent", Method: "POST", Path: "/locks/disable", Status: 200, Body: `{"ComponentIDs":["x0c0s1b0n1"]}`},
		{Name: "status get locked", Method: "GET", Path: "/locks/status?locked=true", Status: 200, Want: `{"Components":[
			{"ID":"x0c0s0b0n0","Locked":true,"Reserved":false,"ReservationDisabled":false},
			{"ID":"x0c0s0b0n1","Locked":true,"Reserved":false,"ReservationDisabled":true}]}`},
		{Name: "status get disabled nodes", Method: "GET", Path: "/locks/status?reservationDisabled=true&locked=false&type=Node", Status: 200,
			Want: `{"Components":[{"ID":"x0c0s1b0n1","Locked":false,"Reserved":false,"ReservationDisabled":true}]}`},
		{Name: "status get bad bool", Method: "GET", Path: "/locks/status?locked=maybe", Status: 400, Detail: "bad 'Locked' query parameter"},
		{Name: "status post", Method: "POST", Path: "/locks/status", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n1","x7c0s0b0n0"]}`,
			Want: `{"Components":[{"ID":"x0c0s0b0n1","Locked":true,"Reserved":false,"ReservationDisabled":true}],"NotFound":["x7c0s0b0n0"]}`},
		{Name: "status post empty", Method: "POST", Path: "/locks/status", Status: 400, Detail: "ComponentIDs", Body: `{"ComponentIDs":[]}`},
		// Only unknown IDs: 400, as the shipped HSM answers.
		{Name: "status post unknown", Method: "POST", Path: "/locks/status", Status: 400, Detail: "Component not found", Body: `{"ComponentIDs":["x7c0s0b0n0"]}`},
		{Name: "status get none", Method: "GET", Path: "/locks/status?type=CabinetPDU", Status: 200, Want: `{"Components":[]}`},
		{Name: "repair", Method: "POST", Path: "/locks/repair", Status: 200, Body: `{"ComponentIDs":["x0c0s1b0n1"]}`,
			Want: `{"Counts":{"Total":1,"Success":1,"Failure":0},"Success":{"ComponentIDs":["x0c0s1b0n1"]},"Failure":[]}`},
	})
	t.Run("components columns hold the lock state", func(t *testing.T) {
		for _, c := range []struct {
			id               string
			locked, disabled bool
		}{{glN0, true, false}, {glN1, true, true}, {glN2, false, false}, {glN3, false, false}} {
			l, d := glColumns(t, s, c.id)
			if l != c.locked || d != c.disabled {
				t.Errorf("%s: locked=%v reservation_disabled=%v, want %v %v", c.id, l, d, c.locked, c.disabled)
			}
		}
	})
}

func glPost(t *testing.T, s *glServer, path string, status int, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, body := hsmtest.Do(t, s.srv, "POST", path, string(b))
	if got != status {
		t.Fatalf("POST %s %s: status %d, want %d: %s", path, b, got, status, body)
	}
	return body
}

func glDecode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

func TestReservations(t *testing.T) { pg.EachDB(t, testReservations) }

func testReservations(t *testing.T, db testpeer.DB) {
	clock := hsmtest.NewClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	s, srv := hsmtest.OpenAPIOn(t, db, clock.Now)
	gs := &glServer{srv: srv}
	hsmtest.AddComponents(t, s, glN0, glN1, glN2, glN3)
	glPost(t, gs, "/locks/lock", 200, hsm.LockRequest{ComponentIDs: []string{glN0}})
	var svc hsm.ReservationKeys

	t.Run("admin reservation needs a lock", func(t *testing.T) {
		body := glPost(t, gs, "/locks/reservations", 400, hsm.LockRequest{ComponentIDs: []string{glN0, glN1}})
		if !strings.Contains(string(body), glN1+" (Unlocked)") {
			t.Errorf("detail does not name %s as Unlocked: %s", glN1, body)
		}
		res := glDecode[hsm.ReservationResult](t, glPost(t, gs, "/locks/reservations", 200, hsm.LockRequest{ComponentIDs: []string{glN0, glN1}, ProcessingModel: "flexible"}))
		if len(res.Success) != 1 || res.Success[0].ID != glN0 || res.Success[0].ExpirationTime != nil {
			t.Errorf("Success = %+v, want one non-expiring reservation of %s", res.Success, glN0)
		}
		if d := cmp.Diff([]hsm.FailedID{{ID: glN1, Reason: hsm.ReasonUnlocked}}, res.Failure); d != "" {
			t.Errorf("Failure (-want +got):\n%s", d)
		}
	})
	t.Run("service reservation rigid vs flexible", func(t *testing.T) {
		glPost(t, gs, "/locks/service/reservations", 400, hsm.LockRequest{ComponentIDs: []string{glN1, glN0}})
		st := glDecode[hsm.LockStatusList](t, glPost(t, gs, "/locks/status", 200, hsm.ComponentIDsRequest{ComponentIDs: []string{glN1}}))
		if st.Components[0].Reserved {
			t.Fatalf("rigid failure reserved %s anyway", glN1)
		}
		res := glDecode[hsm.ReservationResult](t, glPost(t, gs, "/locks/service/reservations", 200,
			hsm.LockRequest{ComponentIDs: []string{glN1, glN0}, ProcessingModel: "flexible", ReservationDuration: 2}))
		want := clock.Now().Add(2 * time.Minute)
		if len(res.Success) != 1 || res.Success[0].ID != glN1 || !res.Success[0].ExpirationTime.Equal(want) {
			t.Fatalf("Success = %+v, want %s expiring at %v", res.Success, glN1, want)
		}
		if d := cmp.Diff([]hsm.FailedID{{ID: glN0, Reason: hsm.ReasonLocked}}, res.Failure); d != "" {
			t.Errorf("Failure (-want +got):\n%s", d)
		}
		svc = res.Success[0]
		if !strings.HasPrefix(svc.ReservationKey, glN1+":rk:") || !strings.HasPrefix(svc.DeputyKey, glN1+":dk:") || len(svc.ReservationKey) < 32 {
			t.Errorf("keys %q %q are not of the expected form", svc.ReservationKey, svc.DeputyKey)
		}
	})
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "duration too long", Method: "POST", Path: "/locks/service/reservations", Status: 400, Detail: "ReservationDuration",
			Body: `{"ComponentIDs":["x0c0s1b0n0"],"ReservationDuration":16}`},
		{Name: "already reserved", Method: "POST", Path: "/locks/service/reservations", Status: 200,
			Body: `{"ComponentIDs":["x0c0s0b0n1"],"ProcessingModel":"flexible"}`, Want: `{"Success":[],"Failure":[{"ID":"x0c0s0b0n1","Reason":"Reserved"}]}`},
		{Name: "lock reserved", Method: "POST", Path: "/locks/lock", Status: 400, Detail: "Reserved", Body: `{"ComponentIDs":["x0c0s0b0n1"]}`},
		{Name: "release needs keys", Method: "POST", Path: "/locks/service/reservations/release", Status: 400, Detail: "ReservationKeys", Body: `{}`},
		{Name: "release empty key", Method: "POST", Path: "/locks/service/reservations/release", Status: 400, Detail: "ReservationKeys[0].Key",
			Body: `{"ReservationKeys":[{"ID":"x0c0s0b0n1"}]}`},
	})
	t.Run("check deputy keys", func(t *testing.T) {
		res := glDecode[hsm.CheckResult](t, glPost(t, gs, "/locks/service/reservations/check", 200, hsm.DeputyKeysRequest{DeputyKeys: []hsm.KeyedID{
			{ID: glN1, Key: svc.DeputyKey}, {ID: glN1, Key: "again"}, {ID: glN2, Key: svc.DeputyKey}, {ID: glN0, Key: svc.ReservationKey}}}))
		want := hsm.CheckResult{
			Success: []hsm.DeputyCheck{{ID: glN1, DeputyKey: svc.DeputyKey, ExpirationTime: svc.ExpirationTime}},
			Failure: []hsm.FailedID{{ID: glN2, Reason: hsm.ReasonNotFound}, {ID: glN0, Reason: hsm.ReasonNotFound}},
		}
		if d := cmp.Diff(want, res); d != "" {
			t.Errorf("check (-want +got):\n%s", d)
		}
	})
	t.Run("renew", func(t *testing.T) {
		clock.Add(time.Minute)
		glPost(t, gs, "/locks/service/reservations/renew", 400, hsm.ReservationKeysRequest{ReservationKeys: []hsm.KeyedID{{ID: glN1, Key: svc.DeputyKey}}, ReservationDuration: 5})
		res := glDecode[hsm.LockResult](t, glPost(t, gs, "/locks/service/reservations/renew", 200,
			hsm.ReservationKeysRequest{ReservationKeys: []hsm.KeyedID{{ID: glN1, Key: svc.ReservationKey}}, ReservationDuration: 5}))
		if res.Counts != (hsm.Counts{Total: 1, Success: 1}) {
			t.Fatalf("renew counts %+v", res.Counts)
		}
		st := glDecode[hsm.LockStatusList](t, glPost(t, gs, "/locks/status", 200, hsm.ComponentIDsRequest{ComponentIDs: []string{glN1}}))
		if want := clock.Now().Add(5 * time.Minute); !st.Components[0].ExpirationTime.Equal(want) {
			t.Errorf("after renew expires %v, want %v", st.Components[0].ExpirationTime, want)
		}
	})
	t.Run("release", func(t *testing.T) {
		res := glDecode[hsm.LockResult](t, glPost(t, gs, "/locks/service/reservations/release", 200, hsm.ReservationKeysRequest{
			ProcessingModel: "flexible", ReservationKeys: []hsm.KeyedID{{ID: glN1, Key: svc.ReservationKey}, {ID: glN2, Key: "x"}}}))
		want := hsm.LockResult{Counts: hsm.Counts{Total: 2, Success: 1, Failure: 1}, Success: hsm.IDList{ComponentIDs: []string{glN1}},
			Failure: []hsm.FailedID{{ID: glN2, Reason: hsm.ReasonNotFound}}}
		if d := cmp.Diff(want, res); d != "" {
			t.Errorf("release (-want +got):\n%s", d)
		}
		glPost(t, gs, "/locks/service/reservations/release", 400, hsm.ReservationKeysRequest{ReservationKeys: []hsm.KeyedID{{ID: glN1, Key: svc.ReservationKey}}})
	})
	t.Run("disable drops reservations and blocks new ones", func(t *testing.T) {
		glPost(t, gs, "/locks/service/reservations", 200, hsm.LockRequest{ComponentIDs: []string{glN3}})
		glPost(t, gs, "/locks/disable", 200, hsm.LockRequest{ComponentIDs: []string{glN3}})
		st := glDecode[hsm.LockStatusList](t, glPost(t, gs, "/locks/status", 200, hsm.ComponentIDsRequest{ComponentIDs: []string{glN3}}))
		if c := st.Components[0]; c.Reserved || !c.ReservationDisabled {
			t.Errorf("after disable: %+v", c)
		}
		res := glDecode[hsm.ReservationResult](t, glPost(t, gs, "/locks/service/reservations", 200, hsm.LockRequest{ComponentIDs: []string{glN3}, ProcessingModel: "flexible"}))
		if d := cmp.Diff([]hsm.FailedID{{ID: glN3, Reason: hsm.ReasonDisabled}}, res.Failure); d != "" {
			t.Errorf("Failure (-want +got):\n%s", d)
		}
		glPost(t, gs, "/locks/repair", 200, hsm.LockRequest{ComponentIDs: []string{glN3}})
		glPost(t, gs, "/locks/service/reservations", 200, hsm.LockRequest{ComponentIDs: []string{glN3}})
	})
	t.Run("remove", func(t *testing.T) {
		glPost(t, gs, "/locks/reservations/remove", 400, hsm.LockRequest{ComponentIDs: []string{glN2}})
		res := glDecode[hsm.LockResult](t, glPost(t, gs, "/locks/reservations/remove", 200, hsm.LockRequest{}))
		want := hsm.LockResult{Counts: hsm.Counts{Total: 2, Success: 2}, Success: hsm.IDList{ComponentIDs: []string{glN0, glN3}}, Failure: []hsm.FailedID{}}
		if d := cmp.Diff(want, res); d != "" {
			t.Errorf("remove all (-want +got):\n%s", d)
		}
		var n int
		if err := s.DB.R.QueryRow(`SELECT COUNT(*) FROM reservations`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d reservations left (err %v)", n, err)
		}
	})
}

// glServer wraps the test server for the JSON helpers.
type glServer struct{ srv *httptest.Server }

// TestLocksWithComponentsAPI checks the contract with the components side:
// lock bits show in /State/Components at once and survive state updates, and
// Group/partition filters there see memberships made here.
func TestLocksWithComponentsAPI(t *testing.T) { pg.EachDB(t, testLocksWithComponentsAPI) }

func testLocksWithComponentsAPI(t *testing.T, db testpeer.DB) {
	_, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "create components", Method: "POST", Path: "/State/Components", Status: 204,
			Body: `{"Components":[{"ID":"x0c0s0b0n0","State":"Ready"},{"ID":"x0c0s0b0n1","State":"Ready"}]}`},
		{Name: "lock", Method: "POST", Path: "/locks/lock", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
		{Name: "disable", Method: "POST", Path: "/locks/disable", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
		{Name: "state update", Method: "PATCH", Path: "/State/Components/x0c0s0b0n0/StateData", Status: 204, Body: `{"State":"Off"}`},
		{Name: "lock kept", Method: "POST", Path: "/locks/status", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n0"]}`,
			Want: `{"Components":[{"ID":"x0c0s0b0n0","Locked":true,"Reserved":false,"ReservationDisabled":true}]}`},
		{Name: "partition", Method: "POST", Path: "/partitions", Status: 201, Body: `{"name":"p1","members":{"ids":["x0c0s0b0n1"]}}`},
		{Name: "group", Method: "POST", Path: "/groups", Status: 201, Body: `{"label":"g","members":{"ids":["x0c0s0b0n0"]}}`},
	})
	t.Run("components show the bits and honour the filters", func(t *testing.T) {
		for _, c := range []struct{ path, want string }{
			{"/State/Components/x0c0s0b0n0", `"Locked":true`},
			{"/State/Components/x0c0s0b0n0", `"ReservationDisabled":true`},
			{"/State/Components?partition=p1", `"x0c0s0b0n1"`},
			{"/State/Components?group=g", `"x0c0s0b0n0"`},
		} {
			status, body := hsmtest.Do(t, srv, "GET", c.path, "")
			if status != 200 || !strings.Contains(string(body), c.want) {
				t.Errorf("GET %s: %d %s; want it to contain %s", c.path, status, body, c.want)
			}
		}
		_, body := hsmtest.Do(t, srv, "GET", "/State/Components?partition=p1", "")
		if strings.Contains(string(body), `"x0c0s0b0n0"`) {
			t.Errorf("partition=p1 lists x0c0s0b0n0, which is not in p1: %s", body)
		}
	})
	hsmtest.RunSteps(t, srv, []hsmtest.Step{
		{Name: "unlock", Method: "POST", Path: "/locks/unlock", Status: 200, Body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
	})
	t.Run("unlock shows", func(t *testing.T) {
		if _, body := hsmtest.Do(t, srv, "GET", "/State/Components/x0c0s0b0n0", ""); strings.Contains(string(body), `"Locked":true`) {
			t.Errorf("still locked after unlock: %s", body)
		}
	})
}

// TestConcurrentLockOpsKeepTheIndexTrue: lock and unlock of one component
// from many clients at once leave the components listing agreeing with the
// table (each op commits and refreshes the index as one step).
func TestConcurrentLockOpsKeepTheIndexTrue(t *testing.T) {
	pg.EachDB(t, testConcurrentLockOpsKeepTheIndexTrue)
}

func testConcurrentLockOpsKeepTheIndexTrue(t *testing.T, db testpeer.DB) {
	s, srv := hsmtest.OpenAPIOn(t, db, nil)
	hsmtest.RunSteps(t, srv, []hsmtest.Step{{Name: "create", Method: "POST", Path: "/State/Components", Status: 204,
		Body: `{"Components":[{"ID":"x0c0s0b0n0","State":"Ready"}]}`}})
	for round := range 200 {
		done := make(chan struct{})
		for i := range 8 {
			path := "/locks/lock"
			if i%2 == 1 {
				path = "/locks/unlock"
			}
			go func() {
				defer func() { done <- struct{}{} }()
				resp, err := srv.Client().Post(srv.URL+hsm.Base+path, "application/json",
					strings.NewReader(`{"ComponentIDs":["x0c0s0b0n0"],"ProcessingModel":"flexible"}`))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}()
		}
		for range 8 {
			<-done
		}
		locked, _ := glColumns(t, s, glN0)
		if c, _ := component.NewStore(s).Component(glN0); c.Locked != locked {
			t.Fatalf("round %d: the table says locked=%v, the components index %v", round, locked, c.Locked)
		}
	}
}
