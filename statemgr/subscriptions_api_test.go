package statemgr

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestSubscriptionsAPI(t *testing.T) {
	a := newAPIServer(t)
	var sub hsm.Subscription
	json.Unmarshal(a.must(200, "POST", "/Subscriptions/SCN", map[string]any{
		"Subscriber": "hmnfd@host", "Url": "http://127.0.0.1:28600/hmi/v1/scn", "States": []string{"ready", "Off"}, "Enabled": true}), &sub)
	want := hsm.Subscription{ID: "1", Subscriber: "hmnfd@host", Url: "http://127.0.0.1:28600/hmi/v1/scn", States: []string{"Ready", "Off"}, Enabled: ptr(true)}
	if diff := cmp.Diff(want, sub); diff != "" {
		t.Fatalf("POST (-want +got):\n%s", diff)
	}
	a.must(409, "POST", "/Subscriptions/SCN", map[string]any{"Subscriber": "hmnfd@host", "Url": "http://127.0.0.1:28600/hmi/v1/scn"})
	a.must(400, "POST", "/Subscriptions/SCN", map[string]any{"Subscriber": "x", "Url": "ftp://nope"})
	a.must(400, "POST", "/Subscriptions/SCN", map[string]any{"Subscriber": "x", "Url": "http://h/", "States": []string{"Sleepy"}})

	steps := []struct {
		patch map[string]any
		want  hsm.Subscription
	}{
		{patch: map[string]any{"Op": "add", "States": []string{"On", "ready"}, "Roles": []string{"compute"}},
			want: hsm.Subscription{States: []string{"Ready", "Off", "On"}, Roles: []string{"Compute"}}},
		{patch: map[string]any{"Op": "remove", "States": []string{"Off"}},
			want: hsm.Subscription{States: []string{"Ready", "On"}, Roles: []string{"Compute"}}},
		{patch: map[string]any{"Op": "replace", "States": []string{"Halt"}, "SoftwareStatus": []string{"AdminDown"}, "Enabled": false},
			want: hsm.Subscription{States: []string{"Halt"}, SoftwareStatus: []string{"AdminDown"}, Enabled: ptr(false)}},
	}
	for i, st := range steps {
		a.must(204, "PATCH", "/Subscriptions/SCN/1", st.patch)
		var got hsm.Subscription
		json.Unmarshal(a.must(200, "GET", "/Subscriptions/SCN/1", nil), &got)
		w := st.want
		w.ID, w.Subscriber, w.Url = "1", "hmnfd@host", "http://127.0.0.1:28600/hmi/v1/scn"
		if w.Enabled == nil {
			w.Enabled = ptr(true)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("step %d (-want +got):\n%s", i, diff)
		}
	}
	a.must(400, "PATCH", "/Subscriptions/SCN/1", map[string]any{"Op": "merge"})
	a.must(404, "PATCH", "/Subscriptions/SCN/9", map[string]any{"Op": "add"})
	a.must(204, "PUT", "/Subscriptions/SCN/1", map[string]any{"Subscriber": "bss", "Url": "http://bss/scn", "Roles": []string{"Compute"}})
	var l hsm.SubscriptionList
	json.Unmarshal(a.must(200, "GET", "/Subscriptions/SCN", nil), &l)
	if diff := cmp.Diff([]hsm.Subscription{{ID: "1", Subscriber: "bss", Url: "http://bss/scn", Roles: []string{"Compute"}}}, l.SubscriptionList); diff != "" {
		t.Errorf("list after PUT (-want +got):\n%s", diff)
	}
	a.must(200, "DELETE", "/Subscriptions/SCN/1", nil)
	a.must(404, "GET", "/Subscriptions/SCN/1", nil)
	a.must(404, "DELETE", "/Subscriptions/SCN/1", nil)
	a.must(200, "DELETE", "/Subscriptions/SCN", nil)
}

func TestSubscriptionMatches(t *testing.T) {
	sub := hsm.Subscription{States: []string{"Ready"}, Roles: []string{"Compute"}, SoftwareStatus: []string{"AdminDown"}}
	tests := []struct {
		scn  hsm.SCN
		want bool
	}{
		{scn: hsm.SCN{State: "Ready", Flag: "OK"}, want: true},
		{scn: hsm.SCN{State: "Off"}, want: false},
		{scn: hsm.SCN{Role: "compute"}, want: true},
		{scn: hsm.SCN{SoftwareStatus: "admindown"}, want: true},
		{scn: hsm.SCN{Enabled: ptr(false)}, want: false},
		{scn: hsm.SCN{Flag: "Alert"}, want: false},
	}
	for _, tc := range tests {
		if got := sub.Matches(&tc.scn); got != tc.want {
			t.Errorf("Matches(%+v) = %v, want %v", tc.scn, got, tc.want)
		}
	}
	en := hsm.Subscription{Enabled: ptr(true)}
	if !en.Matches(&hsm.SCN{Enabled: ptr(false)}) {
		t.Error("Enabled subscription does not match an Enabled change")
	}
}
