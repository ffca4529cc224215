package group_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hmsuite/hms/statemgr/group"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// glBenchGroups is a test API over 100,000 nodes, all in group "all", the
// first 50,000 in partition p1.
func glBenchGroups(b *testing.B) (*core.Store, *httptest.Server, []string) {
	s, srv := hsmtest.OpenAPI(b, nil)
	ids := hsmtest.NodeIDs(100_000)
	hsmtest.AddComponents(b, s, ids...)
	if err := group.CreateGroup(s, b.Context(), core.GroupRow{Name: "all", Kind: core.KindGroup, Members: ids}); err != nil {
		b.Fatal(err)
	}
	if err := group.CreateGroup(s, b.Context(), core.GroupRow{Name: "p1", Kind: core.KindPartition, Members: ids[:50_000]}); err != nil {
		b.Fatal(err)
	}
	return s, srv, ids
}

// BenchmarkGroupMembership100k measures reading memberships with 100,000
// components, all in one group, half of them in a partition.
func BenchmarkGroupMembership100k(b *testing.B) {
	s, srv, ids := glBenchGroups(b)
	get := func(b *testing.B, path string, wantLen int) {
		for b.Loop() {
			resp, err := srv.Client().Get(srv.URL + hsm.Base + path)
			if err != nil {
				b.Fatal(err)
			}
			var v json.RawMessage
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || len(v) < wantLen {
				b.Fatalf("GET %s: %d %v (%d bytes)", path, resp.StatusCode, err, len(v))
			}
		}
	}
	b.Run("GET groups/all/members", func(b *testing.B) { get(b, "/groups/all/members", 100_000*12) })
	b.Run("GET groups/all?partition=p1", func(b *testing.B) { get(b, "/groups/all?partition=p1", 50_000*12) })
	b.Run("GET memberships", func(b *testing.B) { get(b, "/memberships", 100_000*40) })
	b.Run("GET memberships/{xname}", func(b *testing.B) { get(b, "/memberships/"+ids[77_777], 20) })
	b.Run("create group of 100k", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if err := group.CreateGroup(s, b.Context(), core.GroupRow{Name: fmt.Sprintf("g%d", i), Kind: core.KindGroup, Exclusive: "ex", Members: ids}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := group.DeleteGroup(s, b.Context(), core.KindGroup, fmt.Sprintf("g%d", i)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// BenchmarkListings100k measures the listings issue 10 sets a target for
// (GET /memberships and GET /locks/status over 100,000 components: under
// 60 ms) and their filtered forms, over HTTP, reading but not decoding the
// body. Setup: 100,000 nodes, all in group "all", the first 50,000 in
// partition p1, 1,000 locked and 1,000 (others) reserved.
func BenchmarkListings100k(b *testing.B) {
	_, srv, ids := glBenchGroups(b)
	post := func(path string, req hsm.LockRequest) {
		body, _ := json.Marshal(req)
		resp, err := srv.Client().Post(srv.URL+hsm.Base+path, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			b.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}
	post("/locks/lock", hsm.LockRequest{ComponentIDs: ids[:1000]})
	post("/locks/service/reservations", hsm.LockRequest{ComponentIDs: ids[1000:2000], ReservationDuration: 15})
	for _, c := range []struct{ path, name string }{
		{"/memberships", "GET memberships"},
		{"/memberships?partition=p1", "GET memberships?partition=p1"},
		{"/memberships?group=all&partition=!p1&state=Ready", "GET memberships?group=all&partition=!p1&state=Ready"},
		{"/locks/status", "GET locks/status"},
		{"/locks/status?type=Node&reserved=true", "GET locks/status?type=Node&reserved=true"},
		{"/State/Components?group=all&partition=NULL", "GET State/Components?group=all&partition=NULL"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				resp, err := srv.Client().Get(srv.URL + hsm.Base + c.path)
				if err != nil {
					b.Fatal(err)
				}
				n, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d %v", c.path, resp.StatusCode, err)
				}
			}
			b.ReportMetric(float64(n), "body-bytes")
		})
	}
}
