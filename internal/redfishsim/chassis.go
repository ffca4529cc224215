package redfishsim

import "fmt"

// TemplateChassis is a chassis controller (a Cray EX cC, ChassisBMC
// xXcCb0): no systems, one EnclosureManager "BMC", and Chassis "Enclosure"
// (the chassis itself) and "Blade0".."BladeN-1" (its compute slots), each
// powered On with a Chassis.Reset action that takes On and ForceOff, as
// the chassis controllers PCS powers chassis and slots through. Like
// Template it is shared by a fleet.
func TemplateChassis(blades int) *Tree {
	g := gen{t: &Tree{res: map[string]resource{}, templated: true}}
	g.root()
	g.services()
	g.manager(0)
	chassis := []string{"/Chassis/Enclosure"}
	for i := range blades {
		chassis = append(chassis, fmt.Sprintf("/Chassis/Blade%d", i))
	}
	g.collection("/Chassis", "#ChassisCollection.ChassisCollection", "Chassis Collection", links(chassis...))
	for i, p := range chassis {
		id, kind := "Enclosure", "Enclosure"
		if i > 0 {
			id, kind = fmt.Sprintf("Blade%d", i-1), "Blade"
		}
		g.put(p, "#Chassis.v1_9_0.Chassis", obj{
			"Id": id, "Name": id, "ChassisType": kind, "Manufacturer": "HMS Suite", "Model": "SimChassis",
			"SerialNumber": "@@serial:" + id + "@@", "PowerState": "On", "Status": statusOK(),
			"Links": obj{"ManagedBy": links("/Managers/BMC")},
			"Actions": obj{"#Chassis.Reset": obj{
				"target":                            Root + p + "/Actions/Chassis.Reset",
				"ResetType@Redfish.AllowableValues": []any{"On", "ForceOff"},
			}},
		})
	}
	g.collection("/Systems", "#ComputerSystemCollection.ComputerSystemCollection", "Computer System Collection", nil)
	return g.t
}
