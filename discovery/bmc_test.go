package discovery

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestSetPasswordOldBMC: a BMC older than Redfish 1.6 keeps its accounts
// elsewhere than /redfish/v1/AccountService/Accounts; the change follows
// the service root's links to them.
func TestSetPasswordOldBMC(t *testing.T) {
	const as = "/redfish/v1/Managers/1/AccountService"
	docs := map[string]any{
		"/redfish/v1/": map[string]any{"@odata.id": "/redfish/v1/", "@odata.type": "#ServiceRoot.v1_0_0.ServiceRoot",
			"Id": "RootService", "RedfishVersion": "1.0.0", "AccountService": map[string]any{"@odata.id": as}},
		as: map[string]any{"@odata.id": as, "@odata.type": "#AccountService.v1_0_0.AccountService", "Id": "AccountService",
			"Accounts": map[string]any{"@odata.id": as + "/Accounts"}},
		as + "/Accounts": map[string]any{"@odata.id": as + "/Accounts", "@odata.type": "#ManagerAccountCollection.ManagerAccountCollection",
			"Members": []any{map[string]any{"@odata.id": as + "/Accounts/1"}, map[string]any{"@odata.id": as + "/Accounts/2"}}},
		as + "/Accounts/1": map[string]any{"@odata.id": as + "/Accounts/1", "@odata.type": "#ManagerAccount.v1_0_0.ManagerAccount", "Id": "1", "UserName": "admin"},
		as + "/Accounts/2": map[string]any{"@odata.id": as + "/Accounts/2", "@odata.type": "#ManagerAccount.v1_0_0.ManagerAccount", "Id": "2", "UserName": "root"},
	}
	var mu sync.Mutex
	var patched []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); r.URL.Path != "/redfish/v1/" && (!ok || u != "root" || p != "initial0") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPatch {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			patched = append(patched, r.URL.Path+" "+string(b))
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer srv.Close()
	b := NewBMCs(BMCConfig{HTTPClient: srv.Client()})
	addr := strings.TrimPrefix(srv.URL, "https://")
	if err := b.SetPassword(t.Context(), addr, "root", "initial0", "n3wPassw0rd"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(patched) != 1 || !strings.HasPrefix(patched[0], as+"/Accounts/2 ") || !strings.Contains(patched[0], `"n3wPassw0rd"`) {
		t.Errorf("PATCHes %q, want one of %s/Accounts/2 with the new password", patched, as)
	}
}
