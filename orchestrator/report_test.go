package orchestrator

import (
	"net/http"
	"testing"
	"time"

	"github.com/hmsuite/hms/orchestrator/report"
)

// TestNodeReport: a node whose boot script fetch BSS did not record (here:
// it never fetched one) reports its kernel command line; the referral token
// on it is the one bos set, so the node runs its desired image and is done.
func TestNodeReport(t *testing.T) {
	e := newEnv(t, n1)
	e.cluster.set(n1, func(n *simNode) { n.noBoot = true })
	e.template("t1", "img1", n1)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	c := e.component(n1)
	if c.Status.Status != StatusPowerOnCalled || c.DesiredState.BSSToken == "" {
		t.Fatalf("n1 after power-on: %+v", c)
	}
	e.cluster.set(n1, func(n *simNode) { n.comp.State = "Ready" })
	cmdline := "initrd=initrd " + c.DesiredState.BootArtifacts.KernelParameters + " xname=" + n1 +
		" nid=1 bss_referral_token=" + c.DesiredState.BSSToken + " ds=nocloud-net;s=http://bss/"
	if err := report.Send(t.Context(), http.DefaultClient, e.url, n1, cmdline); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10 * time.Second)
	e.reconcile()
	c = e.component(n1)
	if c.Status.Status != StatusStable || c.Enabled || c.ActualState.BootArtifacts.Kernel != c.DesiredState.BootArtifacts.Kernel {
		t.Errorf("n1 after its report: %+v", c)
	}
	if err := report.Send(t.Context(), http.DefaultClient, e.url, n1, "quiet"); err == nil {
		t.Error("a command line without a referral token was reported")
	}
}
