package component_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// TestComponentGroupFilters: the group= and partition= component filters read
// the membership the groups code keeps.
func TestComponentGroupFilters(t *testing.T) { pg.EachDB(t, testComponentGroupFilters) }

func testComponentGroupFilters(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	a.Must(201, "POST", "/groups", map[string]any{"label": "blue", "members": map[string]any{"ids": []string{"x0c0s0b0n0", "x0c0s1b0n0"}}})
	a.Must(201, "POST", "/partitions", map[string]any{"name": "p1", "members": map[string]any{"ids": []string{"x0c0s1b0n0", "x0c0s1b0n1"}}})
	tests := []struct {
		query string
		want  []string
	}{
		{query: "?group=blue", want: []string{"x0c0s0b0n0", "x0c0s1b0n0"}},
		{query: "?group=BLUE&state=On", want: []string{"x0c0s1b0n0"}},
		{query: "?partition=p1", want: []string{"x0c0s1b0n0", "x0c0s1b0n1"}},
		{query: "?partition=p1&group=blue", want: []string{"x0c0s1b0n0"}},
		{query: "?partition=NULL&type=Node", want: []string{"x0c0s0b0n0", "x0c0s0b0n1"}},
		{query: "?group=nosuch", want: []string{}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, hsmtest.IDsOf(a.List(tc.query))); diff != "" {
			t.Errorf("GET %s (-want +got):\n%s", tc.query, diff)
		}
	}
}
