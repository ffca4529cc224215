package discovery

import (
	"context"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestPointInterfaceDHCPWritesMeanwhile: DHCP's server writes the BMC's MAC
// (unnamed) between reds' PATCH (404: not there yet) and its POST (409):
// the interface still ends up naming the BMC.
func TestPointInterfaceDHCPWritesMeanwhile(t *testing.T) {
	s := newSuite(t, map[string]any{}, nil)
	const mac = "02:00:00:00:00:07"
	h := &dhcpBetween{HSM: s.hsm, mac: mac}
	if err := pointInterface(t.Context(), h, mac, "127.0.0.7", "x3000c0s1b0"); err != nil {
		t.Fatal(err)
	}
	eis, err := s.hsm.EthernetInterfaces(t.Context(), map[string][]string{"MACAddress": {mac}})
	if err != nil || len(eis) != 1 || eis[0].ComponentID != "x3000c0s1b0" {
		t.Errorf("interface in HSM: %+v, %v; want ComponentID x3000c0s1b0", eis, err)
	}
}

// dhcpBetween creates the interface unnamed, as DHCP's server does, just
// before the first POST of it goes to HSM.
type dhcpBetween struct {
	HSM
	mac  string
	done bool
}

func (d *dhcpBetween) CreateEthernetInterface(ctx context.Context, ei hsm.EthernetInterface) error {
	if !d.done {
		d.done = true
		if err := d.HSM.CreateEthernetInterface(ctx, hsm.EthernetInterface{MACAddress: d.mac, Description: "seen by DHCP"}); err != nil {
			return err
		}
	}
	return d.HSM.CreateEthernetInterface(ctx, ei)
}
