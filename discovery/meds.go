package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Mountain chassis layout, as hms-meds has it: 8 compute slots with two
// node cards each, 8 router (switch) slots.
const (
	mtnSlots         = 8
	mtnNodeCards     = 2
	mtnRouterSlots   = 8
	defaultMACPrefix = "02"
)

// MountainEndpoint is a BMC MEDS expects in a Mountain or Hill chassis.
type MountainEndpoint struct {
	Xname, MAC string
}

// MountainEndpoints lists the BMCs of chassis ch of cabinet cab: the
// chassis controller x#c#b0, node cards x#c#s#b{0,1} and router cards
// x#c#r#b0, with the MACs hms-meds derives from their place
// (prefix:rack>>8:rack&ff:chassis:slot:idx<<4; slot+48 for node cards,
// slot+96 for router cards).
func MountainEndpoints(prefix string, cab, ch int) []MountainEndpoint {
	if prefix == "" {
		prefix = defaultMACPrefix
	}
	mac := func(slot, idx int) string {
		return strings.ToLower(fmt.Sprintf("%s:%02x:%02x:%02x:%02x:%02x", prefix, (cab>>8)&0xff, cab&0xff, ch&0xff, slot&0xff, (idx<<4)&0xff))
	}
	out := []MountainEndpoint{{Xname: fmt.Sprintf("x%dc%db0", cab, ch), MAC: mac(0, 0)}}
	for s := range mtnSlots {
		for b := range mtnNodeCards {
			out = append(out, MountainEndpoint{Xname: fmt.Sprintf("x%dc%ds%db%d", cab, ch, s, b), MAC: mac(s+48, b)})
		}
	}
	for r := range mtnRouterSlots {
		out = append(out, MountainEndpoint{Xname: fmt.Sprintf("x%dc%dr%db0", cab, ch, r), MAC: mac(r+96, 0)})
	}
	return out
}

// refreshMountain reads the Mountain and Hill cabinets and their chassis
// from SLS, pre-registers the expected BMCs' Ethernet interfaces in HSM
// (so DHCP knows them), and queues those HSM already has an address for.
func (s *Service) refreshMountain(ctx context.Context) error {
	var eps []job
	for _, class := range []sls.Class{sls.Mountain, sls.Hill} {
		cabs, err := s.cfg.SLS.SearchHardware(ctx, sls.HardwareSearch{Type: xname.Cabinet.SLSType(), Class: string(class)})
		if err != nil {
			return fmt.Errorf("list %s cabinets: %w", class, err)
		}
		for _, c := range cabs {
			more, err := s.cabinetEndpoints(ctx, c)
			if err != nil {
				return err
			}
			eps = append(eps, more...)
		}
	}
	expected := make(map[string]job, len(eps))
	for _, j := range eps {
		expected[j.mac] = j
	}
	s.mu.Lock()
	s.mountain, s.mountainRead = expected, true
	s.mu.Unlock()
	if len(eps) == 0 {
		return nil
	}
	return s.preRegister(ctx, expected)
}

// cabinetEndpoints lists the jobs of the expected BMCs of cabinet c's
// chassis, with the cabinet's HMN when SLS gives it.
func (s *Service) cabinetEndpoints(ctx context.Context, c sls.Hardware) ([]job, error) {
	cx, err := xname.Parse(c.Xname)
	if err != nil {
		return nil, nil
	}
	props, _ := c.Cabinet()
	prefix := defaultMACPrefix
	hmn := props.Networks["cn"]["HMN"]
	if hmn.MACPrefix != "" {
		prefix = hmn.MACPrefix
	}
	// A CIDR SLS gives that does not parse checks nothing, as none does:
	// the cabinet's BMCs are not to be locked out by a typo in SLS.
	network, _ := netip.ParsePrefix(hmn.CIDR)
	chs, err := s.cfg.SLS.SearchHardware(ctx, sls.HardwareSearch{Type: xname.Chassis.SLSType(), Parent: c.Xname})
	if err != nil {
		return nil, fmt.Errorf("list chassis of %s: %w", c.Xname, err)
	}
	var out []job
	for _, ch := range chs {
		x, err := xname.Parse(ch.Xname)
		if err != nil {
			continue
		}
		nums := x.Numbers()
		for _, e := range MountainEndpoints(prefix, cx.Numbers()[0], nums[len(nums)-1]) {
			out = append(out, job{mac: e.MAC, xname: e.Xname, kind: KindMountain, network: network.Masked()})
		}
	}
	return out, nil
}

// cabinetNetwork returns the HMN of the cabinet of Mountain job j as
// reds' copy of SLS has it now (invalid: SLS gives none), whatever j was
// given when queued: the check is never skipped for want of SLS. Until
// that copy has been read (reds started while SLS did not answer, and
// resumed its pending endpoints) the attempt fails, sls_failed, and is
// retried once SLS is read (retrySLSDependent); a BMC SLS no longer
// expects at j's MAC is not logged in to.
func (s *Service) cabinetNetwork(j job) (netip.Prefix, error) {
	s.mu.Lock()
	read := s.mountainRead
	mj, ok := s.mountain[j.mac]
	s.mu.Unlock()
	switch {
	case !read:
		return netip.Prefix{}, stepErr(ReasonSLS, fmt.Errorf("%s: Mountain chassis not read from SLS yet: its cabinet's HMN unknown, not logged in to", j.xname))
	case !ok || mj.xname != j.xname:
		return netip.Prefix{}, stepErr(ReasonBMC, fmt.Errorf("%s: SLS expects no Mountain BMC of that name with MAC %s: not logged in to", j.xname, j.mac))
	}
	return mj.network, nil
}

// errOutsideNetwork marks an address outside the BMC's cabinet's HMN.
var errOutsideNetwork = errors.New("outside the cabinet's HMN")

// inNetwork checks that j's address lies in its cabinet's HMN, when SLS
// gives it. A Mountain BMC's MAC is derived from its place (anyone may
// compute it from SLS) and is pre-registered in HSM, so any device on the
// HMN that takes a lease with it would otherwise be logged in to with the
// BMC's stored passwords, and registered in HSM in its place.
func inNetwork(j job) error {
	a, err := netip.ParseAddr(j.ip)
	if !j.network.IsValid() || err == nil && j.network.Contains(a.Unmap()) {
		return nil
	}
	return stepErr(ReasonBMC, fmt.Errorf("%s: address %s is %w %s (SLS): not logged in to", j.xname, j.ip, errOutsideNetwork, j.network))
}

// preRegister creates or points HSM's Ethernet interface of every expected
// MAC, writing only what changed, and queues the BMCs that have an address
// and are not registered yet.
func (s *Service) preRegister(ctx context.Context, expected map[string]job) error {
	eis, err := s.cfg.HSM.EthernetInterfaces(ctx, url.Values{})
	if err != nil {
		return fmt.Errorf("read hsm interfaces: %w", err)
	}
	have := make(map[string]hsm.EthernetInterface, len(eis))
	for _, ei := range eis {
		have[strings.ToLower(ei.MACAddress)] = ei
	}
	for mac, j := range expected {
		ei, ok := have[mac]
		if !ok || ei.ComponentID != j.xname {
			if err := pointInterface(ctx, s.cfg.HSM, mac, "", j.xname); err != nil {
				return err
			}
		}
		if !ok || len(ei.IPAddresses) == 0 || net.ParseIP(ei.IPAddresses[0].IPAddress) == nil {
			continue
		}
		j.ip, j.since = ei.IPAddresses[0].IPAddress, s.cfg.Now()
		if prev, err := s.cfg.Store.Get(ctx, j.xname); err == nil && prev.State != StatePending && prev.IP == j.ip {
			continue
		} else if err != nil && !errors.Is(err, problem.ErrNotFound) {
			return err
		}
		s.submit(j)
	}
	return nil
}
