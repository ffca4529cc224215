package lock_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// BenchmarkCreateReservations1k measures POST /locks/service/reservations for
// 1,000 components (rigid), and a lock of the same 1,000, over HTTP.
func BenchmarkCreateReservations1k(b *testing.B) {
	s, srv := hsmtest.OpenAPI(b, nil)
	ids := hsmtest.NodeIDs(1000)
	hsmtest.AddComponents(b, s, ids...)
	hsmtest.AddComponents(b, s, hsmtest.NodeIDs(100_000)[1000:]...) // a realistic table around them
	body, err := json.Marshal(hsm.LockRequest{ComponentIDs: ids})
	if err != nil {
		b.Fatal(err)
	}
	post := func(b *testing.B, path string) {
		resp, err := srv.Client().Post(srv.URL+hsm.Base+path, "application/json", strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			b.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}
	b.Run("service reservations", func(b *testing.B) {
		for b.Loop() {
			post(b, "/locks/service/reservations")
			b.StopTimer()
			post(b, "/locks/reservations/remove")
			b.StartTimer()
		}
	})
	b.Run("lock", func(b *testing.B) {
		for b.Loop() {
			post(b, "/locks/lock")
			b.StopTimer()
			post(b, "/locks/unlock")
			b.StartTimer()
		}
	})
	b.Run("status GET 100k", func(b *testing.B) {
		for b.Loop() {
			resp, err := srv.Client().Get(srv.URL + hsm.Base + "/locks/status")
			if err != nil {
				b.Fatal(err)
			}
			var v hsm.LockStatusList
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || len(v.Components) != 100_000 {
				b.Fatalf("Status: %d %v %d", resp.StatusCode, err, len(v.Components))
			}
		}
	})
}
