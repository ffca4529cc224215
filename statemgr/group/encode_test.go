package group

import (
	"encoding/json"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// TestMembershipEncoderMatchesEncodingJSON: the hand-written encoder of
// /memberships writes what encoding/json writes.
func TestMembershipEncoderMatchesEncodingJSON(t *testing.T) {
	for _, cg := range []*core.CompGroups{nil, {Partition: "p1"}, {Groups: []string{"a", "b"}}, {Partition: "p2", Groups: []string{"x"}}} {
		m := hsm.Membership{ID: "x0c0s0b0n0", PartitionName: cg.PartitionName(), GroupLabels: append([]string{}, cg.GroupList()...)}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendMembership(nil, m.ID, cg); string(got) != string(want) {
			t.Errorf("membership\n got %s\nwant %s", got, want)
		}
	}
}
