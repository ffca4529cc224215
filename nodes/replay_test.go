package nodes_test

import (
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/nodes/wire"
)

// TestApplyBulkAnswerLost: HSM commits a bulk create of Ethernet
// interfaces but its answer is lost; the chunk is sent again one
// interface at a time, and the conflicts it meets (the interfaces the
// first attempt created, as sent) are no failures.
func TestApplyBulkAnswerLost(t *testing.T) {
	s := newSuiteOn(t, testpeer.SQLite, "/Inventory/EthernetInterfaces/Bulk")
	plan, err := s.nodes.Apply(t.Context(), wire.ApplyRequest{Resources: threeNodes("http://img/vmlinuz")})
	if err != nil {
		t.Fatal(err)
	}
	if !s.dropped.Load() {
		t.Fatal("no bulk create of interfaces went through the proxy")
	}
	for _, c := range plan.Changes {
		if c.Error != "" {
			t.Errorf("%s %s: %s", c.Kind, c.Name, c.Error)
		}
	}
	checkNode(t, s, "x1000c0s1b0n0", 2, "10.1.0.11")
}
