package statemgr

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/statemgr/hsm"
)

const (
	glN0 = "x0c0s0b0n0"
	glN1 = "x0c0s0b0n1"
	glN2 = "x0c0s1b0n0"
	glN3 = "x0c0s1b0n1"
)

// glColumns returns components.locked and reservation_disabled of id.
func glColumns(t *testing.T, s *Store, id string) (locked, disabled bool) {
	t.Helper()
	if err := s.DB.R.QueryRow(`SELECT locked, reservation_disabled FROM components WHERE id = ?`, id).Scan(&locked, &disabled); err != nil {
		t.Fatal(err)
	}
	return locked, disabled
}

func TestLockUnlockRepairDisable(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glAddComponents(t, s, glN0, glN1, glN2, glN3, "x0c0s0b0")
	glRunSteps(t, srv, []glStep{
		{name: "lock", method: "POST", path: "/locks/lock", status: 200, body: `{"ComponentIDs":["x0c0s0b0n0","x0c0s0b0n1"]}`,
			want: `{"Counts":{"Total":2,"Success":2,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0n0","x0c0s0b0n1"]},"Failure":[]}`},
		{name: "lock again rigid", method: "POST", path: "/locks/lock", status: 400, detail: "x0c0s0b0n0 (Locked)",
			body: `{"ComponentIDs":["x0c0s1b0n0","x0c0s0b0n0"]}`},
		{name: "rigid applied nothing", method: "POST", path: "/locks/status", status: 200, body: `{"ComponentIDs":["x0c0s1b0n0"]}`,
			want: `{"Components":[{"ID":"x0c0s1b0n0","Locked":false,"Reserved":false,"ReservationDisabled":false}]}`},
		{name: "lock flexible", method: "POST", path: "/locks/lock", status: 200,
			body: `{"ComponentIDs":["x0c0s1b0n0","x0c0s0b0n0","x9c0s0b0n0"],"ProcessingModel":"Flexible"}`,
			want: `{"Counts":{"Total":3,"Success":1,"Failure":2},"Success":{"ComponentIDs":["x0c0s1b0n0"]},
				"Failure":[{"ID":"x0c0s0b0n0","Reason":"Locked"},{"ID":"x9c0s0b0n0","Reason":"NotFound"}]}`},
		{name: "unknown id rigid", method: "POST", path: "/locks/lock", status: 400, detail: "NotFound", body: `{"ComponentIDs":["x9c0s0b0n0","x0c0s1b0n1"]}`},
		{name: "bad model", method: "POST", path: "/locks/lock", status: 400, detail: "ProcessingModel", body: `{"ComponentIDs":["x0c0s1b0n1"],"ProcessingModel":"loose"}`},
		{name: "bad xname", method: "POST", path: "/locks/lock", status: 400, detail: "ComponentIDs[1]", body: `{"ComponentIDs":["x0c0s1b0n1","n1"]}`},
		{name: "no selector", method: "POST", path: "/locks/lock", status: 400, detail: "ComponentIDs", body: `{}`},
		{name: "malformed", method: "POST", path: "/locks/lock", status: 400, body: `{"ComponentIDs":[`},
		{name: "bad filter value", method: "POST", path: "/locks/lock", status: 400, detail: "State", body: `{"State":["sleepy"]}`},
		{name: "lock by filter", method: "POST", path: "/locks/lock", status: 200, body: `{"Type":["NodeBMC"]}`,
			want: `{"Counts":{"Total":1,"Success":1,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0"]},"Failure":[]}`},
		{name: "unlock", method: "POST", path: "/locks/unlock", status: 200, body: `{"ComponentIDs":["x0c0s1b0n0","x0c0s0b0"]}`,
			want: `{"Counts":{"Total":2,"Success":2,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0","x0c0s1b0n0"]},"Failure":[]}`},
		{name: "unlock unlocked", method: "POST", path: "/locks/unlock", status: 400, detail: "Unlocked", body: `{"ComponentIDs":["x0c0s1b0n0"]}`},
		{name: "disable", method: "POST", path: "/locks/disable", status: 200, body: `{"ComponentIDs":["x0c0s0b0n1","x0c0s1b0n1"]}`,
			want: `{"Counts":{"Total":2,"Success":2,"Failure":0},"Success":{"ComponentIDs":["x0c0s0b0n1","x0c0s1b0n1"]},"Failure":[]}`},
		{name: "disable is idempotent", method: "POST", path: "/locks/disable", status: 200, body: `{"ComponentIDs":["x0c0s1b0n1"]}`},
		{name: "status get locked", method: "GET", path: "/locks/status?locked=true", status: 200, want: `{"Components":[
			{"ID":"x0c0s0b0n0","Locked":true,"Reserved":false,"ReservationDisabled":false},
			{"ID":"x0c0s0b0n1","Locked":true,"Reserved":false,"ReservationDisabled":true}]}`},
		{name: "status get disabled nodes", method: "GET", path: "/locks/status?reservationDisabled=true&locked=false&type=Node", status: 200,
			want: `{"Components":[{"ID":"x0c0s1b0n1","Locked":false,"Reserved":false,"ReservationDisabled":true}]}`},
		{name: "status get bad bool", method: "GET", path: "/locks/status?locked=maybe", status: 400, detail: "bad 'Locked' query parameter"},
		{name: "status post", method: "POST", path: "/locks/status", status: 200, body: `{"ComponentIDs":["x0c0s0b0n1","x7c0s0b0n0"]}`,
			want: `{"Components":[{"ID":"x0c0s0b0n1","Locked":true,"Reserved":false,"ReservationDisabled":true}],"NotFound":["x7c0s0b0n0"]}`},
		{name: "status post empty", method: "POST", path: "/locks/status", status: 400, detail: "ComponentIDs", body: `{"ComponentIDs":[]}`},
		// Only unknown IDs: 400, as the shipped HSM answers.
		{name: "status post unknown", method: "POST", path: "/locks/status", status: 400, detail: "Component not found", body: `{"ComponentIDs":["x7c0s0b0n0"]}`},
		{name: "status get none", method: "GET", path: "/locks/status?type=CabinetPDU", status: 200, want: `{"Components":[]}`},
		{name: "repair", method: "POST", path: "/locks/repair", status: 200, body: `{"ComponentIDs":["x0c0s1b0n1"]}`,
			want: `{"Counts":{"Total":1,"Success":1,"Failure":0},"Success":{"ComponentIDs":["x0c0s1b0n1"]},"Failure":[]}`},
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
	got, body := glDo(t, s.srv, "POST", path, string(b))
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

func TestReservations(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	s, srv := glNewTestAPI(t, clock.now)
	gs := &glServer{srv: srv}
	glAddComponents(t, s, glN0, glN1, glN2, glN3)
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
		want := clock.now().Add(2 * time.Minute)
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
	glRunSteps(t, srv, []glStep{
		{name: "duration too long", method: "POST", path: "/locks/service/reservations", status: 400, detail: "ReservationDuration",
			body: `{"ComponentIDs":["x0c0s1b0n0"],"ReservationDuration":16}`},
		{name: "already reserved", method: "POST", path: "/locks/service/reservations", status: 200,
			body: `{"ComponentIDs":["x0c0s0b0n1"],"ProcessingModel":"flexible"}`, want: `{"Success":[],"Failure":[{"ID":"x0c0s0b0n1","Reason":"Reserved"}]}`},
		{name: "lock reserved", method: "POST", path: "/locks/lock", status: 400, detail: "Reserved", body: `{"ComponentIDs":["x0c0s0b0n1"]}`},
		{name: "release needs keys", method: "POST", path: "/locks/service/reservations/release", status: 400, detail: "ReservationKeys", body: `{}`},
		{name: "release empty key", method: "POST", path: "/locks/service/reservations/release", status: 400, detail: "ReservationKeys[0].Key",
			body: `{"ReservationKeys":[{"ID":"x0c0s0b0n1"}]}`},
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
		clock.add(time.Minute)
		glPost(t, gs, "/locks/service/reservations/renew", 400, hsm.ReservationKeysRequest{ReservationKeys: []hsm.KeyedID{{ID: glN1, Key: svc.DeputyKey}}, ReservationDuration: 5})
		res := glDecode[hsm.LockResult](t, glPost(t, gs, "/locks/service/reservations/renew", 200,
			hsm.ReservationKeysRequest{ReservationKeys: []hsm.KeyedID{{ID: glN1, Key: svc.ReservationKey}}, ReservationDuration: 5}))
		if res.Counts != (hsm.Counts{Total: 1, Success: 1}) {
			t.Fatalf("renew counts %+v", res.Counts)
		}
		st := glDecode[hsm.LockStatusList](t, glPost(t, gs, "/locks/status", 200, hsm.ComponentIDsRequest{ComponentIDs: []string{glN1}}))
		if want := clock.now().Add(5 * time.Minute); !st.Components[0].ExpirationTime.Equal(want) {
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
func TestLocksWithComponentsAPI(t *testing.T) {
	_, srv := glNewTestAPI(t, nil)
	glRunSteps(t, srv, []glStep{
		{name: "create components", method: "POST", path: "/State/Components", status: 204,
			body: `{"Components":[{"ID":"x0c0s0b0n0","State":"Ready"},{"ID":"x0c0s0b0n1","State":"Ready"}]}`},
		{name: "lock", method: "POST", path: "/locks/lock", status: 200, body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
		{name: "disable", method: "POST", path: "/locks/disable", status: 200, body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
		{name: "state update", method: "PATCH", path: "/State/Components/x0c0s0b0n0/StateData", status: 204, body: `{"State":"Off"}`},
		{name: "lock kept", method: "POST", path: "/locks/status", status: 200, body: `{"ComponentIDs":["x0c0s0b0n0"]}`,
			want: `{"Components":[{"ID":"x0c0s0b0n0","Locked":true,"Reserved":false,"ReservationDisabled":true}]}`},
		{name: "partition", method: "POST", path: "/partitions", status: 201, body: `{"name":"p1","members":{"ids":["x0c0s0b0n1"]}}`},
		{name: "group", method: "POST", path: "/groups", status: 201, body: `{"label":"g","members":{"ids":["x0c0s0b0n0"]}}`},
	})
	t.Run("components show the bits and honour the filters", func(t *testing.T) {
		for _, c := range []struct{ path, want string }{
			{"/State/Components/x0c0s0b0n0", `"Locked":true`},
			{"/State/Components/x0c0s0b0n0", `"ReservationDisabled":true`},
			{"/State/Components?partition=p1", `"x0c0s0b0n1"`},
			{"/State/Components?group=g", `"x0c0s0b0n0"`},
		} {
			status, body := glDo(t, srv, "GET", c.path, "")
			if status != 200 || !strings.Contains(string(body), c.want) {
				t.Errorf("GET %s: %d %s; want it to contain %s", c.path, status, body, c.want)
			}
		}
		_, body := glDo(t, srv, "GET", "/State/Components?partition=p1", "")
		if strings.Contains(string(body), `"x0c0s0b0n0"`) {
			t.Errorf("partition=p1 lists x0c0s0b0n0, which is not in p1: %s", body)
		}
	})
	glRunSteps(t, srv, []glStep{
		{name: "unlock", method: "POST", path: "/locks/unlock", status: 200, body: `{"ComponentIDs":["x0c0s0b0n0"]}`},
	})
	t.Run("unlock shows", func(t *testing.T) {
		if _, body := glDo(t, srv, "GET", "/State/Components/x0c0s0b0n0", ""); strings.Contains(string(body), `"Locked":true`) {
			t.Errorf("still locked after unlock: %s", body)
		}
	})
}

// TestConcurrentLockOpsKeepTheIndexTrue: lock and unlock of one component
// from many clients at once leave the components listing agreeing with the
// table (each op commits and refreshes the index as one step).
func TestConcurrentLockOpsKeepTheIndexTrue(t *testing.T) {
	s, srv := glNewTestAPI(t, nil)
	glRunSteps(t, srv, []glStep{{name: "create", method: "POST", path: "/State/Components", status: 204,
		body: `{"Components":[{"ID":"x0c0s0b0n0","State":"Ready"}]}`}})
	for round := range 200 {
		done := make(chan struct{})
		for i := range 8 {
			path := "/locks/lock"
			if i%2 == 1 {
				path = "/locks/unlock"
			}
			go func() {
				defer func() { done <- struct{}{} }()
				resp, err := srv.Client().Post(srv.URL+Base+path, "application/json",
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
		if c, _ := s.Component(glN0); c.Locked != locked {
			t.Fatalf("round %d: the table says locked=%v, the components index %v", round, locked, c.Locked)
		}
	}
}
