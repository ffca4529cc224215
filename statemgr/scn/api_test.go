package scn_test

import (
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// TestSubscriptionsAPI pins HSM's shipped bodies: an integer ID, Roles
// echoed as sent, a null empty list, PATCH replace touching only the lists
// it names, and HSM's messages.
func TestSubscriptionsAPI(t *testing.T) { pg.EachDB(t, testSubscriptionsAPI) }

func testSubscriptionsAPI(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	const s, url = "/Subscriptions/SCN", "http://127.0.0.1:28600/hmi/v1/scn"
	a.Exact(200, "GET", s, nil, `{"SubscriptionList":null}`+"\n")
	a.Exact(200, "POST", s, map[string]any{"Subscriber": "hmnfd@host", "Url": url, "States": []string{"ready", "Off"},
		"Roles": []string{"compute"}, "Enabled": true},
		`{"ID":1,"Subscriber":"hmnfd@host","Enabled":true,"Roles":["compute"],"States":["Ready","Off"],"Url":"`+url+`"}`+"\n")
	a.Must(409, "POST", s, map[string]any{"Subscriber": "hmnfd@host", "Url": url, "States": []string{"On"}})
	for _, tc := range []struct {
		body   map[string]any
		detail string
	}{
		{body: map[string]any{"Url": url, "States": []string{"On"}}, detail: "Missing name of subscriber"},
		{body: map[string]any{"Subscriber": "x", "States": []string{"On"}}, detail: "Missing url"},
		{body: map[string]any{"Subscriber": "hmnfd\u202e@host", "Url": "http://h/", "States": []string{"On"}}, detail: `Subscriber: "hmnfd\u202e@host" has the control character U+202E at byte 5`},
		{body: map[string]any{"Subscriber": "hmnfd\x00", "Url": "http://h/", "States": []string{"On"}}, detail: `Subscriber: "hmnfd\x00" has the control character U+0000 at byte 5`},
		{body: map[string]any{"Subscriber": "x", "Url": "http://h/", "States": []string{"Sleepy"}}, detail: "Invalid state 'Sleepy'"},
		{body: map[string]any{"Subscriber": "x", "Url": "http://h/", "Roles": []string{"Gardener"}}, detail: "Invalid role 'Gardener'"},
		{body: map[string]any{"Subscriber": "x", "Url": "http://h/", "SubRoles": []string{"Boss"}}, detail: "Invalid subRole 'Boss'"},
		{body: map[string]any{"Subscriber": "x", "Url": "http://h/", "SoftwareStatus": []string{""}}, detail: "SoftwareStatus can not be an empty string"},
		{body: map[string]any{"Subscriber": "x", "Url": "http://h/", "Enabled": false},
			detail: "Missing trigger. Must subscribe to atleast one Enabled, Role, SubRole, SoftwareStatus, or State trigger."},
	} {
		a.Problem(400, "POST", s, tc.body, tc.detail)
	}

	steps := []struct {
		patch map[string]any
		want  string
	}{
		{patch: map[string]any{"Op": "add", "States": []string{"On", "ready"}, "Roles": []string{"Service"}},
			want: `"Enabled":true,"Roles":["compute","Service"],"States":["Ready","Off","On"]`},
		{patch: map[string]any{"Op": "remove", "States": []string{"Off"}},
			want: `"Enabled":true,"Roles":["compute","Service"],"States":["Ready","On"]`},
		// replace touches only the lists in the body: Roles stay.
		{patch: map[string]any{"Op": "replace", "States": []string{"Halt"}, "SoftwareStatus": []string{"AdminDown"}, "Enabled": false},
			want: `"Enabled":false,"Roles":["compute","Service"],"SoftwareStatus":["AdminDown"],"States":["Halt"]`},
		{patch: map[string]any{"Op": "Replace", "Roles": []string{}},
			want: `"Enabled":false,"SoftwareStatus":["AdminDown"],"States":["Halt"]`},
	}
	for _, st := range steps {
		a.Must(204, "PATCH", s+"/1", st.patch)
		a.Exact(200, "GET", s+"/1", nil, `{"ID":1,"Subscriber":"hmnfd@host",`+st.want+`,"Url":"`+url+`"}`+"\n")
	}
	a.Problem(400, "PATCH", s+"/1", map[string]any{"States": []string{"On"}}, "Missing Patch Op")
	a.Problem(400, "PATCH", s+"/1", map[string]any{"Op": "merge"}, "Invalid Patch Op - merge")
	a.Problem(400, "PATCH", s+"/1", map[string]any{"Op": "replace", "States": []string{}, "SoftwareStatus": []string{}},
		"Missing trigger. Subscriptions must have atleast one Enabled, Role, SubRole, SoftwareStatus, or State trigger.")
	a.Problem(404, "PATCH", s+"/9", map[string]any{"Op": "add"}, "Subscription not found")
	for _, m := range []string{"GET", "PUT", "PATCH", "DELETE"} {
		a.Problem(400, m, s+"/abc", map[string]any{}, "Invalid id - abc")
		a.Problem(400, m, s+"/0", map[string]any{}, "Invalid id - 0")
	}
	a.Must(204, "PUT", s+"/1", map[string]any{"Subscriber": "bss", "Url": "http://bss/scn", "Roles": []string{"Compute"}})
	a.Exact(200, "GET", s, nil, `{"SubscriptionList":[{"ID":1,"Subscriber":"bss","Roles":["Compute"],"Url":"http://bss/scn"}]}`+"\n")
	a.Exact(200, "DELETE", s+"/1", nil, `{"code":0,"message":"Subscription deleted"}`+"\n")
	a.Problem(404, "GET", s+"/1", nil, "Subscription not found")
	a.Problem(404, "DELETE", s+"/1", nil, "Subscription not found")
	a.Exact(200, "DELETE", s, nil, `{"code":0,"message":"0 Subscriptions deleted"}`+"\n")
	a.Must(200, "POST", s, map[string]any{"Subscriber": "a", "Url": url, "States": []string{"On"}})
	a.Must(200, "POST", s, map[string]any{"Subscriber": "b", "Url": url, "States": []string{"On"}})
	a.Exact(200, "DELETE", s, nil, `{"code":0,"message":"2 Subscriptions deleted"}`+"\n")
}
