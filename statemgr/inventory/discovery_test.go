package inventory

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// TestDiscoveryHTTPS registers a simulated BMC served over HTTPS (self-signed,
// certificate checks off as HSM's default) and checks everything the walk stores.
func TestDiscoveryHTTPS(t *testing.T) {
	const bmcX = "x3000c0s1b0"
	bmc, err := redfishsim.New(redfishsim.Config{Xname: bmcX, Tree: redfishsim.Template(1), User: "root", Password: rfPassword})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(bmc.Handler())
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	e := newRFEnvWith(t, DiscoveryConfig{Workers: 2}, false)

	// A MAC DHCP saw before discovery: discovery must place it.
	nodeMAC := redfishsim.MAC(bmcX, "s0:eth1")
	e.Must(201, "POST", "/Inventory/EthernetInterfaces", hsm.EthernetInterface{MACAddress: nodeMAC})
	e.Must(200, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []hsm.NodeMap{{ID: bmcX + "n0", NID: 17, Role: "Compute"}}})

	e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, FQDN: u.Host, User: "root",
		Password: rfPassword, RediscoverOnUpdate: true})
	ep := e.waitDiscovered(bmcX)
	if ep.DiscoveryInfo.LastDiscoveryStatus != string(redfish.StatusOK) || ep.DiscoveryInfo.RedfishVersion == "" ||
		ep.DiscoveryInfo.LastDiscoveryAttempt == nil || ep.UUID == "" {
		t.Fatalf("DiscoveryInfo = %+v, UUID %q; want DiscoverOK with version, attempt time and UUID", ep.DiscoveryInfo, ep.UUID)
	}
	if want := redfishsim.MAC(bmcX, "bmc:eth0"); ep.MACAddr != want {
		t.Errorf("MACAddr = %q, want the BMC's %q", ep.MACAddr, want)
	}

	node, err := e.store.comp.Component(bmcX + "n0")
	if err != nil {
		t.Fatal(err)
	}
	if node.State != hsm.StateOn || node.NID == nil || *node.NID != 17 || node.Role != "Compute" {
		t.Errorf("node = %+v; want On with NID 17 and Role Compute from the NodeMaps", node)
	}

	var ce hsm.ComponentEndpoint
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/ComponentEndpoints/"+bmcX+"n0", nil), &ce); err != nil {
		t.Fatal(err)
	}
	if ce.RedfishSystemInfo == nil || ce.RedfishSystemInfo.Actions == nil || ce.RedfishSystemInfo.Actions.Reset == nil ||
		!strings.HasSuffix(ce.RedfishSystemInfo.Actions.Reset.Target, "/Actions/ComputerSystem.Reset") ||
		!slices.Contains(ce.RedfishSystemInfo.Actions.Reset.AllowableValues, "ForceOff") {
		t.Errorf("ComponentEndpoint %s: RedfishSystemInfo = %+v; want the Reset target and its allowable values", ce.ID, ce.RedfishSystemInfo)
	}

	var eths []hsm.EthernetInterface
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/EthernetInterfaces?ComponentID="+bmcX+"n0", nil), &eths); err != nil {
		t.Fatal(err)
	}
	var macs []string
	for _, ei := range eths {
		macs = append(macs, ei.MACAddress)
	}
	want := []string{redfishsim.MAC(bmcX, "s0:eth0"), nodeMAC}
	slices.Sort(want)
	if diff := cmp.Diff(want, macs); diff != "" {
		t.Errorf("node MACs (-want +got):\n%s", diff)
	}

	var ses struct{ ServiceEndpoints []hsm.ServiceEndpoint }
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/ServiceEndpoints", nil), &ses); err != nil {
		t.Fatal(err)
	}
	if len(ses.ServiceEndpoints) == 0 {
		t.Fatal("no ServiceEndpoints stored")
	}
	e.Must(200, "GET", "/Inventory/ServiceEndpoints/"+ses.ServiceEndpoints[0].RedfishType+"/RedfishEndpoints/"+bmcX, nil)
}

// TestDiscoveryFailures: a failed walk records why in DiscoveryInfo and
// stores nothing else; a BMC without EthernetInterfaces is fine.
func TestDiscoveryFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		password string
		faults   redfishsim.Faults
		want     redfish.Status
		comps    int // components stored
	}{
		{name: "wrong password", password: "wrong", want: redfish.StatusVerificationFailed},
		{name: "garbage JSON", faults: redfishsim.Faults{GarbagePaths: []string{"/redfish/v1/Systems/*"}}, want: redfish.StatusDecodeFailed},
		{name: "server errors", faults: redfishsim.Faults{ErrorPaths: []string{"/redfish/v1"}}, want: redfish.StatusHTTPsGetFailed},
		{name: "no EthernetInterfaces", want: redfish.StatusOK, comps: 1,
			faults: redfishsim.Faults{MissingPaths: []string{"/redfish/v1/Systems/*/EthernetInterfaces"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const bmcX = "x3000c0s3b0"
				e := newRFEnv(t, DiscoveryConfig{})
				e.bmc(bmcX, 1, tc.faults)
				pw := rfPassword
				if tc.password != "" {
					pw = tc.password
				}
				e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: pw, RediscoverOnUpdate: true})
				ep := e.waitDiscovered(bmcX)
				if ep.DiscoveryInfo.LastDiscoveryStatus != string(tc.want) {
					t.Fatalf("LastDiscoveryStatus = %s, want %s", ep.DiscoveryInfo.LastDiscoveryStatus, tc.want)
				}
				nodes := e.List("?type=Node")
				if len(nodes) != tc.comps {
					t.Errorf("nodes = %v, want %d", hsmtest.IDsOf(nodes), tc.comps)
				}
				var eths []hsm.EthernetInterface
				_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/EthernetInterfaces?ComponentID="+bmcX+"n0", nil), &eths)
				if len(eths) != 0 {
					t.Errorf("node interfaces = %+v, want none", eths)
				}
				if tc.want != redfish.StatusOK {
					var ces struct{ ComponentEndpoints []json.RawMessage }
					_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/ComponentEndpoints", nil), &ces)
					if len(ces.ComponentEndpoints) != 0 {
						t.Errorf("ComponentEndpoints after a failed walk: %d, want 0", len(ces.ComponentEndpoints))
					}
				}
			})
		})
	}
}

// TestDiscoveryHangingBMCDoesNotStall: with one BMC hanging forever, another
// BMC queued after it is still discovered.
func TestDiscoveryHangingBMCDoesNotStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRFEnv(t, DiscoveryConfig{Workers: 2, Timeout: time.Hour})
		e.bmc("x3000c0s5b0", 1, redfishsim.Faults{Hang: true})
		e.bmc("x3000c0s6b0", 1, redfishsim.Faults{})
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: []hsm.RedfishEndpoint{
			{ID: "x3000c0s5b0", User: "root", Password: rfPassword},
			{ID: "x3000c0s6b0", User: "root", Password: rfPassword},
		}})
		e.Must(200, "POST", "/Inventory/Discover", discoverBody{XNames: []string{"x3000c0s5b0", "x3000c0s6b0"}})
		if got := e.waitDiscovered("x3000c0s6b0").DiscoveryInfo.LastDiscoveryStatus; got != string(redfish.StatusOK) {
			t.Fatalf("healthy BMC: %s, want DiscoverOK", got)
		}
		if got := e.endpoint("x3000c0s5b0").DiscoveryInfo.LastDiscoveryStatus; got != string(redfish.StatusDiscoveryStarted) {
			t.Errorf("hanging BMC: %s, want DiscoveryStarted (still walking)", got)
		}
		var st DiscoveryStatus
		_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/DiscoveryStatus/0", nil), &st)
		if st.Status != DiscoveryInProgress {
			t.Errorf("DiscoveryStatus = %+v, want InProgress", st)
		}
		e.Must(404, "GET", "/Inventory/DiscoveryStatus/7", nil)
		e.Must(404, "POST", "/Inventory/Discover", discoverBody{XNames: []string{"x3000c0s9b0"}})
		e.Must(400, "POST", "/Inventory/Discover", discoverBody{XNames: []string{"x3000c0s5b0", "not-an-xname"}})
	})
}

// TestDiscoveryGolden compares the components and inventory of a generated
// 2-node BMC with testdata/golden/discovery_2node.json (-update rewrites it).
func TestDiscoveryGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bmcX = "x3000c0s7b0"
		e := newRFEnv(t, DiscoveryConfig{})
		e.bmc(bmcX, 2, redfishsim.Faults{})
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
		if st := e.waitDiscovered(bmcX).DiscoveryInfo.LastDiscoveryStatus; st != string(redfish.StatusOK) {
			t.Fatalf("status %s", st)
		}
		got := e.inventory()
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "golden", "discovery_2node.json")
		if *rfUpdate {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(bytes.TrimSpace(want)), string(b)); diff != "" {
			t.Errorf("discovery result differs from %s (-want +got):\n%s", path, diff)
		}
	})
}

// TestDiscoveryResumesInterruptedWalks: an endpoint left DiscoveryStarted by
// a shutdown, or NotYetQueried and not queued (killed between storing it and
// queueing its walk), is walked when discovery starts.
func TestDiscoveryResumesInterruptedWalks(t *testing.T) {
	for _, status := range []redfish.Status{redfish.StatusDiscoveryStarted, redfish.StatusNotYetQueried} {
		t.Run(string(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const bmcX = "x3000c0s8b0"
				e := newRFEnv(t, DiscoveryConfig{})
				e.bmc(bmcX, 1, redfishsim.Faults{})
				e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword,
					RediscoverOnUpdate: true})
				if _, err := e.store.updateRFEndpoint(t.Context(), bmcX, func(r *rfRow) error {
					r.ep.DiscoveryInfo.LastDiscoveryStatus = string(status)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if err := e.store.unqueueDiscovery(t.Context(), bmcX); err != nil {
					t.Fatal(err)
				}
				e.restartDiscovery()
				if got := e.waitDiscovered(bmcX).DiscoveryInfo.LastDiscoveryStatus; got != string(redfish.StatusOK) {
					t.Fatalf("after restart: %s, want DiscoverOK", got)
				}
			})
		})
	}
}

// TestDiscoveryStartLeavesUnaskedEndpoints: an endpoint stored with
// RediscoverOnUpdate false (or disabled) is NotYetQueried and not queued by
// design; a starting HSM must not walk it (found by review of the change
// that resumes endpoints left NotYetQueried by a kill).
func TestDiscoveryStartLeavesUnaskedEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		off := false
		e := newRFEnv(t, DiscoveryConfig{})
		eps := []hsm.RedfishEndpoint{
			{ID: "x3000c0s8b0", User: "root", Password: rfPassword},
			{ID: "x3000c0s9b0", User: "root", Password: rfPassword, RediscoverOnUpdate: true, Enabled: &off},
		}
		for _, ep := range eps {
			e.bmc(ep.ID, 1, redfishsim.Faults{})
			e.Must(201, "POST", "/Inventory/RedfishEndpoints", ep)
			if err := e.store.unqueueDiscovery(t.Context(), ep.ID); err != nil {
				t.Fatal(err)
			}
		}
		e.restartDiscovery()
		synctest.Wait()
		for _, ep := range eps {
			if got := e.endpoint(ep.ID).DiscoveryInfo.LastDiscoveryStatus; got != string(redfish.StatusNotYetQueried) {
				t.Errorf("%s after restart: %s, want NotYetQueried (not walked)", ep.ID, got)
			}
		}
	})
}

// TestDiscoveryQueueSurvivesRestart: endpoints queued but not walked when
// HSM stopped are walked by the next start, and leave the stored queue once
// their walk starts.
func TestDiscoveryQueueSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newRFEnv(t, DiscoveryConfig{})
		ids := []string{"x3000c0s11b0", "x3000c0s12b0"}
		for _, id := range ids {
			e.bmc(id, 1, redfishsim.Faults{})
			e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: id, User: "root", Password: rfPassword})
		}
		// As if queued by a Discover call an instant before the shutdown.
		if err := e.store.queueDiscovery(t.Context(), ids); err != nil {
			t.Fatal(err)
		}
		e.restartDiscovery()
		for _, id := range ids {
			if got := e.waitDiscovered(id).DiscoveryInfo.LastDiscoveryStatus; got != string(redfish.StatusOK) {
				t.Errorf("%s after restart: %s, want DiscoverOK", id, got)
			}
		}
		if backlog, err := e.store.discoveryBacklog(t.Context()); err != nil || len(backlog) != 0 {
			t.Errorf("stored queue after the walks = %v, %v; want empty", backlog, err)
		}
	})
}

// TestDiscoveryCABundle: with -bmc-ca-bundle, BMC certificates are checked:
// the BMC's own CA passes, another CA fails the walk with HTTPsGetFailed.
func TestDiscoveryCABundle(t *testing.T) {
	bmcTLS, err := redfishsim.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewTLSServer(http.NotFoundHandler())
	other.Close()
	for _, tc := range []struct {
		name string
		ca   []byte // DER
		want redfish.Status
	}{
		{"BMC's CA", bmcTLS.Certificates[0].Certificate[0], redfish.StatusOK},
		{"another CA", other.Certificate().Raw, redfish.StatusHTTPsGetFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const bmcX = "x3000c0s9b0"
			bmc, err := redfishsim.New(redfishsim.Config{Xname: bmcX, Tree: redfishsim.Template(1), User: "root", Password: rfPassword})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(bmc.Handler())
			ts.TLS = bmcTLS
			ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
			ts.StartTLS()
			t.Cleanup(ts.Close)
			e := newCABundleEnv(t, tc.ca)
			u, _ := url.Parse(ts.URL)
			e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, FQDN: u.Host, User: "root",
				Password: rfPassword, RediscoverOnUpdate: true})
			if got := e.waitDiscovered(bmcX).DiscoveryInfo.LastDiscoveryStatus; got != string(tc.want) {
				t.Errorf("LastDiscoveryStatus = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDiscoveryFailureKeepsEarlierData: after a good walk, a walk refused for
// a wrong password records VerificationFailed and leaves what the good walk
// stored in place.
func TestDiscoveryFailureKeepsEarlierData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bmcX = "x3000c0s10b0"
		e := newRFEnv(t, DiscoveryConfig{})
		e.bmc(bmcX, 1, redfishsim.Faults{})
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
		if got := e.waitDiscovered(bmcX).DiscoveryInfo.LastDiscoveryStatus; got != string(redfish.StatusOK) {
			t.Fatalf("first walk: %s", got)
		}
		snapshot := func() string {
			var b strings.Builder
			for _, p := range []string{"/State/Components", "/Inventory/ComponentEndpoints", "/Inventory/Hardware", "/Inventory/EthernetInterfaces"} {
				b.Write(e.Must(200, "GET", p, nil))
			}
			return b.String()
		}
		before := snapshot()
		e.Must(200, "PATCH", "/Inventory/RedfishEndpoints/"+bmcX, map[string]string{"Password": "not-" + rfPassword})
		rfEventually(t, "second walk VerificationFailed", func() {}, func() bool {
			return e.endpoint(bmcX).DiscoveryInfo.LastDiscoveryStatus == string(redfish.StatusVerificationFailed)
		})
		if diff := cmp.Diff(before, snapshot()); diff != "" {
			t.Errorf("a failed walk changed stored data (-before +after):\n%s", diff)
		}
	})
}

// storedQueue is the durable queue alone (the backlog a starting HSM walks
// adds endpoints never walked, which these never are: no workers run).
func storedQueue(t *testing.T, s *Store) ([]string, error) {
	t.Helper()
	rows, err := s.db.R.QueryContext(t.Context(), `SELECT id FROM rf_discovery_queue ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// TestDiscoveryQueue: an endpoint queued twice is walked once; force asks
// for one more walk of an endpoint being walked; an empty Discover body
// means every endpoint. No workers run here, so the queue only fills.
func TestDiscoveryQueue(t *testing.T) {
	s, _ := newTestStore(t)
	creds, err := NewCreds(make([]byte, credKeySize))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDiscovery(s, creds, DiscoveryConfig{})
	a := hsmtest.ServeHandler(t, coreOf(s), handler(s, d))
	details := d.counts
	if st := d.Status().Status; st != DiscoveryNotStarted {
		t.Errorf("initial status %s, want NotStarted", st)
	}
	a.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: []hsm.RedfishEndpoint{
		{ID: "x1c0s0b0", RediscoverOnUpdate: true}, {ID: "x1c0s1b0"}}})
	a.Must(200, "POST", "/Inventory/Discover", "")
	if got := details(); got.Queued != 2 || d.Status().Status != DiscoveryPending {
		t.Fatalf("after POST and Discover all: %+v %s, want 2 queued, Pending", got, d.Status().Status)
	}
	if backlog, err := storedQueue(t, s); err != nil || len(backlog) != 2 {
		t.Fatalf("stored queue = %v, %v; want both endpoints", backlog, err)
	}
	id, _, _ := d.next()
	if err := s.unqueueDiscovery(t.Context(), id); err != nil { // as work does
		t.Fatal(err)
	}
	d.Enqueue(t.Context(), []string{id}, false)
	if backlog, _ := storedQueue(t, s); slices.Contains(backlog, id) {
		t.Errorf("a running endpoint queued without force was stored in the queue: %v", backlog)
	}
	if got := details(); got.Queued != 1 || got.Running != 1 {
		t.Fatalf("re-queue of a running endpoint without force: %+v, want 1 queued 1 running", got)
	}
	d.Enqueue(t.Context(), []string{id}, true)
	d.finish(id)
	if got := details(); got.Queued != 2 || got.Done != 1 {
		t.Fatalf("forced re-walk after finish: %+v, want 2 queued 1 done", got)
	}
}

// TestDiscoveryKeepsReadyNodes: what a walk stores sets power states
// directly, except that a Ready node found On stays Ready with its flag (a
// heartbeating node is not demoted, and hbtd would not say Ready again).
func TestDiscoveryKeepsReadyNodes(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := t.Context()
	comps := []hsm.Component{
		{ID: "x1c0s0b0n0", State: hsm.StateReady, Flag: "Warning"},
		{ID: "x1c0s0b0n1", State: hsm.StateOff},
		{ID: "x1c0s0b0n2", State: hsm.StateReady},
	}
	if err := s.comp.UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := s.core.OutboxAfter(ctx, 0, 100)
	found := []hsm.Component{
		{ID: "x1c0s0b0n0", State: hsm.StateOn, Flag: "OK"},
		{ID: "x1c0s0b0n1", State: hsm.StateOn, Flag: "OK"},
		{ID: "x1c0s0b0n2", State: hsm.StateOff, Flag: "OK"},
	}
	if err := s.comp.UpsertDiscovered(ctx, found, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range comps {
		cur, err := s.comp.Component(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cur.ID+" "+cur.State+"/"+cur.Flag)
	}
	want := []string{"x1c0s0b0n0 Ready/Warning", "x1c0s0b0n1 On/OK", "x1c0s0b0n2 Off/OK"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the walk (-want +got):\n%s", diff)
	}
	after, _ := s.core.OutboxAfter(ctx, 0, 100)
	var changed []string
	for _, row := range after[len(before):] {
		changed = append(changed, row.SCN.Components...)
	}
	slices.Sort(changed)
	if diff := cmp.Diff([]string{"x1c0s0b0n1", "x1c0s0b0n2"}, changed); diff != "" {
		t.Errorf("SCNs for (-want +got):\n%s", diff)
	}
	// A forced POST /State/Components still sets exactly what it is given.
	if err := s.comp.UpsertComponents(ctx, found[:1], true, nil); err != nil {
		t.Fatal(err)
	}
	if cur, _ := s.comp.Component("x1c0s0b0n0"); cur.State != hsm.StateOn {
		t.Errorf("forced upsert left %s %s, want On", cur.ID, cur.State)
	}
}

// TestDiscoveryBurstCapsWalks: while BMCs are being registered and HSM is
// short of CPU, at most BurstWalks walks run; once no registration came
// for BurstHold, the others start (issue 13: walks yield to a burst of
// registrations). With CPU to spare, the walks run alongside the burst.
func TestDiscoveryBurstCapsWalks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		contended bool
		during    int // walks running during the burst
	}{
		{name: "short of CPU", contended: true, during: 1},
		{name: "CPU to spare", contended: false, during: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newRFEnv(t, DiscoveryConfig{Workers: 8, BurstWalks: 1, BurstHold: time.Second, Timeout: time.Hour,
					Contended: func() bool { return tc.contended }})
				var eps []hsm.RedfishEndpoint
				for _, x := range []string{"x3000c0s1b0", "x3000c0s2b0", "x3000c0s3b0"} {
					e.bmc(x, 1, redfishsim.Faults{Hang: true}) // each walk runs until the test ends
					eps = append(eps, hsm.RedfishEndpoint{ID: x, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
				}
				e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: eps})
				synctest.Wait()
				if got := e.disc.counts(); got.Running != tc.during || got.Queued != 3-tc.during {
					t.Errorf("during the burst: %+v, want %d running", got, tc.during)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				if got := e.disc.counts(); got.Running != 3 || got.Queued != 0 {
					t.Errorf("after the burst: %+v, want 3 running", got)
				}
			})
		})
	}
}
