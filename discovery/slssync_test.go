package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/xname"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/layout/sls"
)

// countingSLS counts the /version reads and the reads of the switch list.
type countingSLS struct {
	*slsclient.Client
	versions, switchReads atomic.Int64
}

func (c *countingSLS) Version(ctx context.Context) (sls.Version, error) {
	c.versions.Add(1)
	return c.Client.Version(ctx)
}

func (c *countingSLS) SearchHardware(ctx context.Context, q sls.HardwareSearch) ([]sls.Hardware, error) {
	if q.Type == xname.MgmtSwitch.SLSType() {
		c.switchReads.Add(1)
	}
	return c.Client.SearchHardware(ctx, q)
}

// TestLeasedBeforeSLSRead: a BMC leased after its switch or its Mountain
// chassis was written to SLS, but before reds noticed (its
// watch of SLS's /version is an hour away here), is registered on its
// first attempt: before failing it for want of a switch or connector, reds
// reads /version, sees it moved, re-reads SLS and tries once more. Twenty
// such BMCs at once share one re-read of the switches. (Connectors are
// read from SLS live: only one written between a lookup and its failure
// needs the re-check, a race no test sets up.)
func TestLeasedBeforeSLSRead(t *testing.T) {
	for _, tt := range []struct {
		name string
		bmcs int
		// hold is the SLS object written only after reds started.
		hold     string
		mountain bool
	}{
		{name: "switch", bmcs: 20, hold: "x3000c0w14"},
		{name: "mountain chassis", bmcs: 1, mountain: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			xnames, macs := make([]string, tt.bmcs), make([]string, tt.bmcs)
			for i := range xnames {
				xnames[i] = fmt.Sprintf("x3000c0s%db0", i+1)
				macs[i] = redfishsim.MAC(xnames[i], "bmc:eth0")
			}
			var later []sls.Hardware
			var hw map[string]any
			if tt.mountain {
				_, addr := simSwitch(t) // a switch the BMC is not on
				hw = riverLayout(addr, false, 0)
				xnames[0], macs[0] = "x1000c0s0b0", MountainEndpoints("", 1000, 0)[1].MAC
				later = []sls.Hardware{{Xname: "x1000", Class: sls.Mountain}, {Xname: "x1000c0", Class: sls.Mountain}}
			} else {
				_, addr := simSwitch(t, macs...)
				hw = riverLayout(addr, false, tt.bmcs)
				b, _ := json.Marshal(hw[tt.hold])
				var h sls.Hardware
				if err := json.Unmarshal(b, &h); err != nil {
					t.Fatal(err)
				}
				later = append(later, h)
				delete(hw, tt.hold)
			}
			s := newSuite(t, hw, xnames)
			lay := &countingSLS{Client: s.sls}
			s.startService(NewSNMPWalker(SNMPConfig{Timeout: 2 * time.Second, Retries: 1}), Config{SLS: lay,
				Switch: SwitchConfig{Community: "public"}, SLSWatch: time.Hour, SLSRefresh: time.Hour, RetryMin: time.Hour})
			<-s.svc.Started()
			for _, h := range later {
				if _, err := s.sls.PutHardware(t.Context(), h); err != nil {
					t.Fatal(err)
				}
			}
			versions, reads := lay.versions.Load(), lay.switchReads.Load()
			for i, mac := range macs {
				s.lease(mac, s.bmcIP(i))
			}
			first := map[string]outcome{}
			for len(first) < len(macs) {
				if o := s.next(); first[o.mac].mac == "" {
					first[o.mac] = o
				}
			}
			for i, mac := range macs {
				if o := first[mac]; o.err != nil || o.xname != xnames[i] {
					t.Errorf("%s: first attempt %q, %v; want %s registered", mac, o.xname, o.err, xnames[i])
				}
			}
			if tt.mountain {
				if e, err := s.store.Get(t.Context(), xnames[0]); err != nil || e.Kind != KindMountain {
					t.Errorf("stored %+v, %v; want a Mountain endpoint", e, err)
				}
			}
			if n := lay.switchReads.Load() - reads; n != 1 {
				t.Errorf("switches read %d times from SLS after the leases, want 1", n)
			}
			if n := lay.versions.Load() - versions; n < 1 || n > 3 {
				t.Errorf("SLS /version read %d times for %d leases, want 1 to 3", n, len(macs))
			}
		})
	}
}
