package redfishsim

import (
	"net/http"
	"testing"
)

func TestAuth(t *testing.T) {
	_, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1)})
	login := func(user, pass string) req {
		return req{method: "POST", path: sessionsPath, body: `{"UserName":"` + user + `","Password":"` + pass + `"}`}
	}
	tests := []struct {
		name string
		rq   req
		want int
	}{
		{name: "service root is public", rq: req{method: "GET", path: "/redfish/v1/"}, want: 200},
		{name: "service root without slash", rq: req{method: "GET", path: "/redfish/v1"}, want: 200},
		{name: "versions are public", rq: req{method: "GET", path: "/redfish"}, want: 200},
		{name: "odata is public", rq: req{method: "GET", path: "/redfish/v1/odata"}, want: 200},
		{name: "metadata is public", rq: req{method: "GET", path: "/redfish/v1/$metadata"}, want: 200},
		{name: "systems need auth", rq: req{method: "GET", path: "/redfish/v1/Systems"}, want: 401},
		{name: "basic auth", rq: req{method: "GET", path: "/redfish/v1/Systems", user: testUser, pass: testPass}, want: 200},
		{name: "wrong password", rq: req{method: "GET", path: "/redfish/v1/Systems", user: testUser, pass: "nope"}, want: 401},
		{name: "unknown user", rq: req{method: "GET", path: "/redfish/v1/Systems", user: "root", pass: testPass}, want: 401},
		{name: "bogus token", rq: req{method: "GET", path: "/redfish/v1/Systems", token: "feedface"}, want: 401},
		{name: "login", rq: login(testUser, testPass), want: 201},
		{name: "login wrong password", rq: login(testUser, "nope"), want: 401},
		{name: "login malformed", rq: req{method: "POST", path: sessionsPath, body: `{"UserName":`}, want: 400},
		{name: "login without user", rq: req{method: "POST", path: sessionsPath, body: `{"Password":"x"}`}, want: 400},
		{name: "PATCH needs auth", rq: req{method: "PATCH", path: "/redfish/v1/Managers/BMC/NetworkProtocol", body: `{}`}, want: 401},
		{name: "metadata POST is not public", rq: req{method: "POST", path: "/redfish/v1/$metadata", body: `{}`}, want: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, srv, tt.rq)
			if resp.StatusCode != tt.want {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if tt.want == 401 && errorCode(body) == "" {
				t.Errorf("401 without a Redfish error body: %s", body)
			}
		})
	}
}

func TestSessionLifecycle(t *testing.T) {
	_, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1)})
	resp, body := do(t, srv, req{method: "POST", path: sessionsPath, body: `{"UserName":"admin","Password":"s3cret"}`})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	tok, loc := resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	if tok == "" || loc != sessionsPath+"/1" {
		t.Fatalf("login headers: token %q location %q", tok, loc)
	}
	steps := []struct {
		name string
		rq   req
		want int
	}{
		{name: "token works", rq: req{method: "GET", path: "/redfish/v1/Systems/Node0", token: tok}, want: 200},
		{name: "session readable", rq: req{method: "GET", path: loc, token: tok}, want: 200},
		{name: "logout", rq: req{method: "DELETE", path: loc, token: tok}, want: 204},
		{name: "token dead after logout", rq: req{method: "GET", path: "/redfish/v1/Systems", token: tok}, want: 401},
		{name: "second logout is 404", rq: req{method: "DELETE", path: loc, user: testUser, pass: testPass}, want: 404},
	}
	for _, st := range steps {
		resp, body := do(t, srv, st.rq)
		if resp.StatusCode != st.want {
			t.Fatalf("%s: status = %d, want %d; body %s", st.name, resp.StatusCode, st.want, body)
		}
	}
}

func TestPasswordChange(t *testing.T) {
	_, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1)})
	acct := "/redfish/v1/AccountService/Accounts/1"
	if got := get(t, srv, acct)["UserName"]; got != testUser {
		t.Fatalf("account 1 UserName = %v, want the configured user %q", got, testUser)
	}
	steps := []struct {
		name string
		rq   req
		want int
	}{
		{name: "empty password refused", rq: req{method: "PATCH", path: acct, body: `{"Password":""}`, user: testUser, pass: testPass}, want: 400},
		{name: "read-only Id refused", rq: req{method: "PATCH", path: acct, body: `{"Password":"new","Id":"9"}`, user: testUser, pass: testPass}, want: 400},
		{name: "old password still works after refused PATCHes", rq: req{method: "GET", path: "/redfish/v1/Systems", user: testUser, pass: testPass}, want: 200},
		{name: "change password", rq: req{method: "PATCH", path: acct, body: `{"Password":"n3w"}`, user: testUser, pass: testPass}, want: 200},
		{name: "old password refused", rq: req{method: "GET", path: "/redfish/v1/Systems", user: testUser, pass: testPass}, want: 401},
		{name: "old password login refused", rq: req{method: "POST", path: sessionsPath, body: `{"UserName":"admin","Password":"s3cret"}`}, want: 401},
		{name: "new password works", rq: req{method: "GET", path: "/redfish/v1/Systems", user: testUser, pass: "n3w"}, want: 200},
		{name: "new password login", rq: req{method: "POST", path: sessionsPath, body: `{"UserName":"admin","Password":"n3w"}`}, want: 201},
		{name: "rename", rq: req{method: "PATCH", path: acct, body: `{"UserName":"ops"}`, user: testUser, pass: "n3w"}, want: 200},
		{name: "new name works", rq: req{method: "GET", path: "/redfish/v1/Systems", user: "ops", pass: "n3w"}, want: 200},
		{name: "unknown account", rq: req{method: "PATCH", path: "/redfish/v1/AccountService/Accounts/7", body: `{"Password":"x"}`, user: "ops", pass: "n3w"}, want: 404},
	}
	for _, st := range steps {
		resp, body := do(t, srv, st.rq)
		if resp.StatusCode != st.want {
			t.Fatalf("%s: status = %d, want %d; body %s", st.name, resp.StatusCode, st.want, body)
		}
		if st.rq.method == "PATCH" && st.want == 200 {
			if _, leaked := jsonMap(t, body)["Password"].(string); leaked {
				t.Fatalf("%s: the account shows its password: %s", st.name, body)
			}
		}
	}
}

func TestSessionLimit(t *testing.T) {
	b, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1), User: testUser, Password: testPass, MaxSessions: 2})
	login := req{method: "POST", path: sessionsPath, body: `{"UserName":"admin","Password":"s3cret"}`}
	var locs []string
	for i, want := range []int{201, 201, 503} {
		resp, body := do(t, srv, login)
		if resp.StatusCode != want {
			t.Fatalf("login %d: %d, want %d; %s", i, resp.StatusCode, want, body)
		}
		if want == 503 && errorCode(body) != "Base.1.8.SessionLimitExceeded" {
			t.Errorf("error code %q", errorCode(body))
		}
		if loc := resp.Header.Get("Location"); loc != "" {
			locs = append(locs, loc)
		}
	}
	if got := b.Stats().Sessions; got != 2 {
		t.Errorf("Stats().Sessions = %d, want 2", got)
	}
	if resp, _ := do(t, srv, req{method: "DELETE", path: locs[0], user: testUser, pass: testPass}); resp.StatusCode != 204 {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if resp, _ := do(t, srv, login); resp.StatusCode != 201 {
		t.Errorf("login after a logout freed a slot: %d", resp.StatusCode)
	}
	members := get(t, srv, sessionsPath)["Members"].([]any)
	if len(members) != 2 {
		t.Errorf("Sessions collection lists %d members, want 2", len(members))
	}
	if got := b.Stats().Requests; got != 6 {
		t.Errorf("Stats().Requests = %d, want 6 (3 logins, a logout, a login, a GET)", got)
	}
}

// TestPasswordChangeRequired: a factory account must change its password
// before anything else; the change ends its sessions and clears the flag.
func TestPasswordChangeRequired(t *testing.T) {
	b, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1), User: testUser, Password: testPass,
		PasswordChangeRequired: true})
	acct := "/redfish/v1/AccountService/Accounts/1"
	resp, _ := do(t, srv, req{method: "POST", path: sessionsPath, body: `{"UserName":"admin","Password":"s3cret"}`})
	tok := resp.Header.Get("X-Auth-Token")
	if resp.StatusCode != 201 || tok == "" {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	steps := []struct {
		name string
		rq   req
		want int
	}{
		{name: "service root is public", rq: req{method: "GET", path: "/redfish/v1"}, want: 200},
		{name: "systems refused", rq: req{method: "GET", path: "/redfish/v1/Systems", token: tok}, want: 403},
		{name: "account readable", rq: req{method: "GET", path: acct, token: tok}, want: 200},
		{name: "other PATCH refused", rq: req{method: "PATCH", path: "/redfish/v1/Managers/BMC/NetworkProtocol", body: `{"NTP":{}}`, user: testUser, pass: testPass}, want: 403},
		{name: "change", rq: req{method: "PATCH", path: acct, body: `{"Password":"n3w"}`, token: tok}, want: 200},
		{name: "session ended by the change", rq: req{method: "GET", path: acct, token: tok}, want: 401},
		{name: "new password works everywhere", rq: req{method: "GET", path: "/redfish/v1/Systems", user: testUser, pass: "n3w"}, want: 200},
	}
	for _, st := range steps {
		resp, body := do(t, srv, st.rq)
		if resp.StatusCode != st.want {
			t.Fatalf("%s: status = %d, want %d; body %s", st.name, resp.StatusCode, st.want, body)
		}
		if st.want == 403 && errorCode(body) != "Base.1.8.PasswordChangeRequired" {
			t.Errorf("%s: error code %q", st.name, errorCode(body))
		}
	}
	_, body := do(t, srv, req{method: "GET", path: acct, user: testUser, pass: "n3w"})
	if got := jsonMap(t, body)["PasswordChangeRequired"]; got != false {
		t.Errorf("PasswordChangeRequired after the change = %v", got)
	}
	if b.Stats().Sessions != 0 {
		t.Errorf("%d sessions left", b.Stats().Sessions)
	}
}
