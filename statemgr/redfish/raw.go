package redfish

import (
	"encoding/json"
	"fmt"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// rawExtras is what the walk reads from a resource's raw JSON itself, because
// gofish keeps it private: the Reset action (target and allowed values), which
// optional links are present, and whether InterfaceEnabled was sent at all.
type rawExtras struct {
	Reset            *hsm.ResetAction
	Links            map[string]string // link name -> @odata.id, for present links
	ChassisLinks     []string          // Links.Chassis of a ComputerSystem
	InterfaceEnabled *bool
}

// rawResource is the subset of a Redfish resource that parseExtras decodes.
type rawResource struct {
	Actions          map[string]json.RawMessage `json:"Actions"`
	InterfaceEnabled *bool                      `json:"InterfaceEnabled"`

	EthernetInterfaces *rawLink `json:"EthernetInterfaces"`
	Processors         *rawLink `json:"Processors"`
	Memory             *rawLink `json:"Memory"`
	Power              *rawLink `json:"Power"`
	Links              struct {
		Chassis []rawLink `json:"Chassis"`
	} `json:"Links"`
}

type rawLink struct {
	OdataID string `json:"@odata.id"`
}

// parseExtras decodes the parts of a Redfish resource gofish does not expose.
// resetAction names the action key, e.g. "#ComputerSystem.Reset". The input
// comes from a BMC and is untrusted: any JSON object is accepted, and wrong
// types give an error, never a panic.
func parseExtras(raw []byte, resetAction string) (rawExtras, error) {
	var r rawResource
	if err := json.Unmarshal(raw, &r); err != nil {
		return rawExtras{}, fmt.Errorf("decode redfish resource: %w", err)
	}
	x := rawExtras{InterfaceEnabled: r.InterfaceEnabled, Links: map[string]string{}}
	for name, l := range map[string]*rawLink{
		"EthernetInterfaces": r.EthernetInterfaces, "Processors": r.Processors,
		"Memory": r.Memory, "Power": r.Power,
	} {
		if l != nil && l.OdataID != "" {
			x.Links[name] = l.OdataID
		}
	}
	for _, l := range r.Links.Chassis {
		if l.OdataID != "" {
			x.ChassisLinks = append(x.ChassisLinks, l.OdataID)
		}
	}
	if a, ok := r.Actions[resetAction]; ok && resetAction != "" {
		var ra hsm.ResetAction
		if err := json.Unmarshal(a, &ra); err != nil {
			return rawExtras{}, fmt.Errorf("decode %s action: %w", resetAction, err)
		}
		if ra.Target != "" || len(ra.AllowableValues) > 0 {
			x.Reset = &ra
		}
	}
	return x, nil
}

// parsePower decodes the PowerControl entries of a Redfish Power resource.
// It is lenient where BMCs differ: a Power resource without PowerControl is
// valid (gofish v0.26.0 rejects it), a single object stands for a one-entry
// array (as some Cisco BMCs send), and a PowerCapacityWatts that is not a
// number is dropped. The input is untrusted.
func parsePower(raw []byte) ([]hsm.PowerControl, error) {
	var r struct {
		PowerControl json.RawMessage `json:"PowerControl"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decode redfish Power: %w", err)
	}
	if len(r.PowerControl) == 0 || string(r.PowerControl) == "null" {
		return nil, nil
	}
	type entry struct {
		Name               string            `json:"Name"`
		PowerCapacityWatts any               `json:"PowerCapacityWatts"`
		RelatedItem        []hsm.ODataIDLink `json:"RelatedItem"`
	}
	var list []entry
	if err := json.Unmarshal(r.PowerControl, &list); err != nil {
		var one entry
		if err2 := json.Unmarshal(r.PowerControl, &one); err2 != nil {
			return nil, fmt.Errorf("decode redfish PowerControl: %w", err)
		}
		list = []entry{one}
	}
	out := make([]hsm.PowerControl, 0, len(list))
	for _, e := range list {
		pc := hsm.PowerControl{Name: e.Name, RelatedItem: e.RelatedItem}
		if v, ok := e.PowerCapacityWatts.(float64); ok {
			pc.PowerCapacityWatts = &v
		}
		out = append(out, pc)
	}
	return out, nil
}
