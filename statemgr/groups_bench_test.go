package statemgr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// glNodeIDs returns n distinct node xnames.
func glNodeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("x%dc%ds%db0n%d", 1000+i/512, i/64%8, i/2%32, i%2)
	}
	return ids
}

// BenchmarkGroupMembership100k measures reading memberships with 100,000
// components, all in one group, half of them in a partition.
func BenchmarkGroupMembership100k(b *testing.B) {
	s, srv := glNewTestAPI(b, nil)
	ids := glNodeIDs(100_000)
	glAddComponents(b, s, ids...)
	if err := s.createGroup(b.Context(), glGroupRow{name: "all", kind: kindGroup, members: ids}); err != nil {
		b.Fatal(err)
	}
	if err := s.createGroup(b.Context(), glGroupRow{name: "p1", kind: kindPartition, members: ids[:50_000]}); err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, path string, wantLen int) {
		for b.Loop() {
			resp, err := srv.Client().Get(srv.URL + Base + path)
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
			if err := s.createGroup(b.Context(), glGroupRow{name: fmt.Sprintf("g%d", i), kind: kindGroup, exclusive: "ex", members: ids}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := s.deleteGroup(b.Context(), kindGroup, fmt.Sprintf("g%d", i)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}
