package component_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// outbox returns every SCN in the outbox, Timestamp in UTC and Epoch, which
// must be the store's, cleared.
func outbox(t *testing.T, s *core.Store) []hsm.SCN {
	t.Helper()
	rows, err := s.OutboxAfter(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := []hsm.SCN{}
	for _, r := range rows {
		if r.SCN.Epoch != s.Epoch || s.Epoch == 0 {
			t.Errorf("SCN %d has Epoch %d, want the database's %d", r.Seq, r.SCN.Epoch, s.Epoch)
		}
		r.SCN.Timestamp, r.SCN.Epoch = r.SCN.Timestamp.UTC(), 0
		out = append(out, r.SCN)
	}
	return out
}

var ignoreSCNTime = cmpopts.IgnoreFields(hsm.SCN{}, "Timestamp", "Seq")

func TestPatchesAndSCNs(t *testing.T) { pg.EachDB(t, testPatchesAndSCNs) }

func testPatchesAndSCNs(t *testing.T, db testpeer.DB) {
	type req struct {
		method, path string
		body         any
	}
	tests := []struct {
		name     string
		reqs     []req
		query    string
		want     []hsm.Component
		wantSCNs []hsm.SCN
	}{
		{
			name:  "bulk state skips disallowed and unchanged, resets flag",
			reqs:  []req{{"PATCH", "/State/Components/BulkStateData", map[string]any{"ComponentIDs": []string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1"}, "State": "on"}}},
			query: "?type=Node&stateonly=true",
			want: []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "OK"}, {ID: "x0c0s0b0n1", Type: "Node", State: "On", Flag: "OK"},
				{ID: "x0c0s1b0n0", Type: "Node", State: "On", Flag: "OK"}, {ID: "x0c0s1b0n1", Type: "Node", State: "Ready", Flag: "Warning"}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n1"}, State: "On", Flag: "OK"}},
		},
		{
			name:     "ready warning only for Ready",
			reqs:     []req{{"PATCH", "/State/Components/BulkStateData", map[string]any{"ComponentIDs": []string{"x0c0s0b0n0", "x0c0s0b0n1"}, "State": "Ready", "Flag": "Warning"}}},
			query:    "?id=x0c0s0b0n0&id=x0c0s0b0n1&stateonly=true",
			want:     []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "Warning"}, {ID: "x0c0s0b0n1", Type: "Node", State: "Off", Flag: "OK"}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n0"}, State: "Ready", Flag: "Warning"}},
		},
		{
			name:     "force",
			reqs:     []req{{"PATCH", "/State/Components/x0c0s0b0n1/StateData", map[string]any{"State": "Empty", "Force": true}}},
			query:    "?id=x0c0s0b0n1&stateonly=true",
			want:     []hsm.Component{{ID: "x0c0s0b0n1", Type: "Node", State: "Empty", Flag: "OK"}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n1"}, State: "Empty", Flag: "OK"}},
		},
		{
			name:     "flag only",
			reqs:     []req{{"PATCH", "/State/Components/BulkFlagOnly", map[string]any{"ComponentIDs": []string{"x0c0s0b0n0", "x0c0s1b0n1"}, "Flag": "alert"}}},
			query:    "?flag=Alert&flagonly=true",
			want:     []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", Flag: "Alert"}, {ID: "x0c0s1b0n1", Type: "Node", Flag: "Alert"}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n0", "x0c0s1b0n1"}, Flag: "Alert"}},
		},
		{
			name:     "enabled",
			reqs:     []req{{"PATCH", "/State/Components/x0c0s1b0n1/Enabled", map[string]any{"Enabled": true, "ExtendedInfo": map[string]any{"Message": "back"}}}},
			query:    "?enabled=true&type=node&nidonly=true",
			want:     []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", NID: ptr(1)}, {ID: "x0c0s0b0n1", Type: "Node", NID: ptr(2)}, {ID: "x0c0s1b0n0", Type: "Node", NID: ptr(3)}, {ID: "x0c0s1b0n1", Type: "Node", NID: ptr(4)}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s1b0n1"}, Enabled: ptr(true)}},
		},
		{
			name:     "software status",
			reqs:     []req{{"PATCH", "/State/Components/BulkSoftwareStatus", map[string]any{"ComponentIDs": []string{"x0c0s0b0n0", "x0c0s1b0n0"}, "SoftwareStatus": "AdminDown"}}},
			query:    "?softwarestatus=AdminDown&stateonly=true",
			want:     []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "OK"}, {ID: "x0c0s1b0n0", Type: "Node", State: "On", Flag: "OK"}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n0"}, SoftwareStatus: "AdminDown"}},
		},
		{
			name:     "role",
			reqs:     []req{{"PATCH", "/State/Components/BulkRole", map[string]any{"ComponentIDs": []string{"x0c0s0b0n0"}, "Role": "storage", "SubRole": "worker"}}},
			query:    "?role=Storage&roleonly=true",
			want:     []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", Role: "Storage", SubRole: "Worker"}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n0"}, Role: "Storage", SubRole: "Worker"}},
		},
		{
			name: "nid swap in one bulk call",
			reqs: []req{{"PATCH", "/State/Components/BulkNID", map[string]any{"Components": []map[string]any{{"ID": "x0c0s0b0n0", "NID": 2}, {"ID": "x0c0s0b0n1", "NID": 1}}}},
				{"PATCH", "/State/Components/x0c0s1b0n0/NID", map[string]any{"NID": 30}}},
			query:    "?type=Node&nidonly=true&nid_start=1&nid_end=30",
			want:     []hsm.Component{{ID: "x0c0s0b0n0", Type: "Node", NID: ptr(2)}, {ID: "x0c0s0b0n1", Type: "Node", NID: ptr(1)}, {ID: "x0c0s1b0n0", Type: "Node", NID: ptr(30)}, {ID: "x0c0s1b0n1", Type: "Node", NID: ptr(4)}},
			wantSCNs: []hsm.SCN{{Components: []string{"x0c0s0b0n0"}, NID: ptr(2)}, {Components: []string{"x0c0s0b0n1"}, NID: ptr(1)}, {Components: []string{"x0c0s1b0n0"}, NID: ptr(30)}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := hsmtest.NewServerOn(t, db)
			hsmtest.Seed(t, a)
			for _, r := range tc.reqs {
				a.Must(204, r.method, r.path, r.body)
			}
			if diff := cmp.Diff(tc.want, a.List(tc.query)); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSCNs, outbox(t, a.Store), ignoreSCNTime); diff != "" {
				t.Errorf("outbox (-want +got):\n%s", diff)
			}
			// The index and the database agree: reopen and compare.
			want, _ := component.NewStore(a.Store).Components(t.Context(), core.Filter{})
			reopened := hsmtest.Reopen(t, a.Store, core.Config{})
			got, _ := component.NewStore(reopened).Components(t.Context(), core.Filter{})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("database differs from memory (-memory +db):\n%s", diff)
			}
		})
	}
}

func TestPutPostDelete(t *testing.T) { pg.EachDB(t, testPutPostDelete) }

func testPutPostDelete(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	// The cached full listing follows writes.
	if got := a.List("")[2]; got.ID != "x0c0s0b0n1" || got.State != "Off" {
		t.Fatalf("full list entry 2: %+v", got)
	}
	a.Must(204, "PATCH", "/State/Components/x0c0s0b0n1/StateData", map[string]any{"State": "On"})
	if got := a.List("")[2]; got.State != "On" {
		t.Errorf("full list after PATCH: %+v", got)
	}
	a.Must(204, "PATCH", "/State/Components/x0c0s0b0n1/StateData", map[string]any{"State": "Off"})
	// PUT without Force leaves an existing component alone.
	a.Must(204, "PUT", "/State/Components/x0c0s0b0n1", map[string]any{"Component": map[string]any{"State": "Ready", "Arch": "ARM"}})
	if got := a.List("?id=x0c0s0b0n1")[0]; got.State != "Off" || got.Arch != "" {
		t.Errorf("PUT without Force changed %+v", got)
	}
	a.Must(204, "PUT", "/State/Components/x0c0s0b0n1", map[string]any{"Component": map[string]any{"State": "Ready", "Arch": "arm"}, "Force": true})
	if got := a.List("?id=x0c0s0b0n1")[0]; got.State != "Ready" || got.Arch != "ARM" || *got.NID != 2 {
		t.Errorf("PUT with Force: %+v", got)
	}
	a.Must(204, "PUT", "/State/Components/x7c0s0b0n0", map[string]any{"Component": map[string]any{"ID": "x7c0s0b0n0", "State": "Off"}})
	a.Must(400, "PUT", "/State/Components/x7c0s0b0n0", map[string]any{"Component": map[string]any{"ID": "x8c0s0b0n0", "State": "Off"}})
	a.Must(200, "DELETE", "/State/Components/x7c0s0b0n0", nil)
	a.Must(404, "DELETE", "/State/Components/x7c0s0b0n0", nil)
	a.Must(200, "DELETE", "/State/Components", nil)
	if got := a.List(""); len(got) != 0 {
		t.Errorf("after DELETE all: %v", hsmtest.IDsOf(got))
	}
	a.Must(404, "DELETE", "/State/Components", nil)
	// NIDs are free again after a delete.
	a.Must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]any{{"ID": "x1c0s0b0n0", "State": "On", "NID": 1}}})
}
