package slsgen

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		nodes                           int
		wantCabinets, wantObjects       int
		wantConnectors, wantLastNodeNID int
	}{
		{nodes: 0, wantCabinets: 0, wantObjects: 0},
		{nodes: 1, wantCabinets: 1, wantObjects: 7, wantConnectors: 1, wantLastNodeNID: 1},
		{nodes: 300, wantCabinets: 3, wantObjects: 1073, wantConnectors: 300, wantLastNodeNID: 300},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := Write(&buf, tt.nodes); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Hardware map[string]struct {
				Type            string
				ExtraProperties struct{ NID int }
			}
			Networks map[string]json.RawMessage
		}
		if err := json.Unmarshal(buf.Bytes(), &d); err != nil {
			t.Fatalf("%d nodes: output is not JSON: %v", tt.nodes, err)
		}
		counts := map[string]int{}
		maxNID := 0
		for _, h := range d.Hardware {
			counts[h.Type]++
			maxNID = max(maxNID, h.ExtraProperties.NID)
		}
		if len(d.Hardware) != tt.wantObjects || counts["comptype_node"] != tt.nodes ||
			counts["comptype_cabinet"] != tt.wantCabinets || counts["comptype_mgmt_switch_connector"] != tt.wantConnectors ||
			maxNID != tt.wantLastNodeNID || len(d.Networks) != 2 {
			t.Errorf("%d nodes: %d objects %v, max NID %d, %d networks", tt.nodes, len(d.Hardware), counts, maxNID, len(d.Networks))
		}
	}
	if err := Write(&bytes.Buffer{}, 2_000_000); err == nil {
		t.Error("Write accepted more nodes than cabinet numbers allow")
	}
}
