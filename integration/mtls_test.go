package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/mtls/mtlstest"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestDaemonsOverMTLS runs hsm, hbtd and hmnfd on loopback, each with a
// certificate of one CA and that CA as client CA, and a subscriber that
// also requires a client certificate: hmnfd subscribes to hsm, a heartbeat
// makes hbtd report the node to hsm, hsm calls hmnfd back with the Ready
// SCN, and hmnfd delivers it, every hop over mutual TLS. A caller without a
// certificate, or with one another CA signed, reaches nothing, not even
// liveness.
func TestDaemonsOverMTLS(t *testing.T) {
	ca, other := mtlstest.NewCA(t), mtlstest.NewCA(t)
	subURL, got := tlsSubscriber(t, ca)
	hsmURL, hbtdURL, hmnfd := startTLSDaemons(t, ca)
	for name, hc := range map[string]*http.Client{"without a certificate": ca.Anonymous(), "with another CA's certificate": other.Client("mallory")} {
		if resp, err := hc.Get(hsmURL + "/hsm/v2/service/liveness"); err == nil {
			resp.Body.Close()
			t.Errorf("hsm liveness %s: %s, want the handshake refused", name, resp.Status)
		}
	}
	select {
	case <-hmnfd.Intake(): // hmnfd's subscription to hsm went over mTLS
	case <-time.After(30 * time.Second): // a guard against a hang, not a wait
		t.Fatal("hmnfd never subscribed to hsm")
	}

	admin := ca.Client("admin")
	const node = "x3000c0s1b0n0"
	post(t, admin, hsmURL+"/hsm/v2/State/Components", `{"Components":[{"ID":"`+node+`","State":"On"}]}`, http.StatusNoContent)
	post(t, admin, hmnfd.URL()+"/hmi/v1/subscribe", `{"Subscriber":"x3000c0s2b0n0","Components":["`+node+`"],"States":["Ready"],"Url":"`+subURL+`"}`, http.StatusOK)
	post(t, admin, hbtdURL+"/hmi/v1/heartbeat", `{"Component":"`+node+`","Hostname":"nid1","NID":"1","Status":"OK","TimeStamp":"2026-11-24T12:00:00Z"}`, http.StatusOK)
	select {
	case d := <-got:
		if d.scn.State != "Ready" || len(d.scn.Components) != 1 || d.scn.Components[0] != node || d.from != "hmnfd" {
			t.Errorf("subscriber got %+v from %q, want %s Ready from hmnfd", d.scn, d.from, node)
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a wait
		t.Fatal("no SCN reached the subscriber")
	}
}

// delivery is an SCN a subscriber got, and the common name of the client
// certificate it came with.
type delivery struct {
	scn  hsm.SCN
	from string
}

// tlsSubscriber is an SCN receiver that requires a client certificate of
// ca: its URL, and what it got.
func tlsSubscriber(t *testing.T, ca *mtlstest.CA) (string, <-chan delivery) {
	t.Helper()
	got := make(chan delivery, 4)
	sub := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d delivery
		json.NewDecoder(r.Body).Decode(&d.scn)
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			d.from = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		got <- d
	}))
	var err error
	if sub.TLS, err = ca.Config("subscriber").Server(); err != nil {
		t.Fatal(err)
	}
	sub.StartTLS()
	t.Cleanup(sub.Close)
	return sub.URL + "/scn", got
}

// startTLSDaemons runs hsm, hbtd (reporting to hsm) and hmnfd (subscribed
// to hsm) with certificates of ca and ca as client CA, until the test ends.
func startTLSDaemons(t *testing.T, ca *mtlstest.CA) (hsmURL, hbtdURL string, hmnfd *fanout.Daemon) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var runs []chan error
	t.Cleanup(func() {
		cancel()
		for _, done := range runs {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	})
	run := func(d daemon, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		runs = append(runs, done)
		go func() { done <- d.Run(ctx) }()
	}
	pub := bus.NewUnread()
	t.Cleanup(func() { pub.Close() })
	hsmd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "hsm-cred.key"), Publisher: pub, Auth: auth.Config{TLS: ca.Config("hsm")}, Log: discard()})
	run(hsmd, err)
	hbtd, err := heartbeat.StartDaemon(ctx, "127.0.0.1:0", heartbeat.Options{DBPath: filepath.Join(dir, "hbtd.db"), HSMURL: hsmd.URL(),
		Auth: auth.Config{TLS: ca.Config("hbtd")}, Log: discard()})
	run(hbtd, err)
	hmnfd, err = fanout.StartDaemon(ctx, fanout.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hmnfd.db"), HSMURL: hsmd.URL(),
		Auth: auth.Config{TLS: ca.Config("hmnfd")}, Log: discard()})
	run(hmnfd, err)
	for _, u := range []string{hsmd.URL(), hbtd.URL(), hmnfd.URL()} {
		if !strings.HasPrefix(u, "https://") {
			t.Fatalf("daemon URL %s, want https", u)
		}
	}
	return hsmd.URL(), hbtd.URL(), hmnfd
}

// post sends body to url with hc and checks the status.
func post(t *testing.T, hc *http.Client, url, body string, want int) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %s, want %d", url, resp.Status, want)
	}
}
