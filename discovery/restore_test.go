package discovery

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redfishsim"
)

// TestRestoreLostEndpoints: HSM restarted on an empty database loses the
// RedfishEndpoints and interfaces reds registered, while the BMCs keep
// their addresses (no lease event comes). The next presence round lists
// HSM's endpoints once and registers again each BMC it lacks that still
// answers and is in SLS: HSM walks it, its interface names it again. One
// whose xname the operator removed from SLS is not restored, and a
// second round restores nothing more.
func TestRestoreLostEndpoints(t *testing.T) {
	s := newRiverSuite(t, 3)
	h := &countingHSM{HSM: s.hsm}
	s.registerAll(Config{HSM: h})
	ctx := t.Context()
	// x3000c0s3b0 stops answering meanwhile: restored when it answers again.
	s.stopHSM()
	for _, f := range []string{"hsm.db", "hsm.db-wal", "hsm.db-shm"} {
		if err := os.Remove(filepath.Join(s.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	s.startHSM()
	if err := s.sls.DeleteHardware(ctx, "x3000c0s2b0"); err != nil { // and its node
		t.Fatal(err)
	}
	down := s.bmcs[2].BMC
	if err := down.SetFaults(redfishsim.Faults{ErrorPaths: []string{"/redfish/v1"}}); err != nil {
		t.Fatal(err)
	}

	before := h.lists.Load()
	s.svc.CheckPresence(ctx)
	if n := h.lists.Load() - before; n != 1 {
		t.Errorf("%d listings of HSM's endpoints in one round, want 1", n)
	}
	if _, err := s.hsm.RedfishEndpoint(ctx, "x3000c0s1b0"); err != nil {
		t.Fatalf("x3000c0s1b0 not restored in HSM: %v", err)
	}
	s.walked("x3000c0s1b0")
	ei, err := s.hsm.EthernetInterfaces(ctx, url.Values{"MACAddress": {s.bmcMAC(0)}})
	if err != nil || len(ei) != 1 || ei[0].ComponentID != "x3000c0s1b0" {
		t.Errorf("interface of x3000c0s1b0: %+v, %v", ei, err)
	}
	if e, err := s.store.Get(ctx, "x3000c0s1b0"); err != nil || e.State != StateRegistered {
		t.Errorf("x3000c0s1b0 stored %q, %v", e.State, err)
	}
	for _, x := range []string{"x3000c0s2b0", "x3000c0s3b0"} {
		if _, err := s.hsm.RedfishEndpoint(ctx, x); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("%s restored (%v); want not: gone from SLS, or not answering", x, err)
		}
	}
	if e, err := s.store.Get(ctx, "x3000c0s3b0"); err != nil || e.State != StateMissing {
		t.Errorf("x3000c0s3b0 not answering: stored %q, %v; want %q", e.State, err, StateMissing)
	}

	if err := down.SetFaults(redfishsim.Faults{}); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	s.walked("x3000c0s3b0")
	if e, err := s.store.Get(ctx, "x3000c0s3b0"); err != nil || e.State != StateRegistered {
		t.Errorf("x3000c0s3b0 back: stored %q, %v", e.State, err)
	}
	s.svc.CheckPresence(ctx)
	if n := testutil.ToFloat64(s.svc.m.restored.WithLabelValues("ok")); n != 2 {
		t.Errorf("reds_endpoints_restored_total{result=ok} %v, want 2", n)
	}
}

// TestRestoreRefusesChangedKey: an endpoint HSM lost is not registered
// again (HSM would log in with the stored password) when its address
// presents another TLS key than the one pinned; once an admin clears the
// pin, the next round pins the key presented and restores it.
func TestRestoreRefusesChangedKey(t *testing.T) {
	s := newRiver(t, 1, Config{})
	ctx := t.Context()
	x := s.bmcs[0].BMC.Xname()
	// As if a device spoofing the BMC now answered at its address: the key
	// presented there is not the one pinned.
	if err := s.store.ClearKey(ctx, x); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.PinKey(ctx, x, strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}
	if err := s.hsm.DeleteRedfishEndpoint(ctx, x); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	if _, err := s.hsm.RedfishEndpoint(ctx, x); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("%s restored in HSM (%v) although its address presents another TLS key", x, err)
	}
	if n := testutil.ToFloat64(s.svc.m.keyChanged); n != 1 {
		t.Errorf("reds_bmc_tls_key_changed_total %v, want 1", n)
	}
	if err := s.store.ClearKey(ctx, x); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	if _, err := s.hsm.RedfishEndpoint(ctx, x); err != nil {
		t.Fatalf("%s not restored after its pin was cleared: %v", x, err)
	}
	if e, err := s.store.Get(ctx, x); err != nil || e.Key != presentedKey(t, s.bmcs[0].Addr) {
		t.Errorf("key %q, %v; want the BMC's", e.Key, err)
	}
}
