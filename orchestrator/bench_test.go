package orchestrator

import (
	"flag"
	"fmt"
	"syscall"
	"testing"
	"time"
)

var benchNodes = flag.Int("bos-nodes", 1000, "nodes of BenchmarkRebootSession")

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRebootSession: a reboot session over -bos-nodes simulated nodes
// (all on, running another image), from POST /v2/sessions to the session
// complete. The peers answer at once and the clock moves 10 s between
// passes, so what is measured is bos's own cost: wall time and CPU of the
// operator passes, the passes a session needs, and the API calls.
func BenchmarkRebootSession(b *testing.B) {
	ids := make([]string, *benchNodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("x%dc0s%db0n%d", 1000+i/128, (i%128)/4, i%4)
	}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		e := newEnv(b, ids...)
		for _, id := range ids {
			e.cluster.set(id, func(n *simNode) { n.on, n.comp.State = true, "Ready" })
		}
		body := `{"boot_sets":{"c":{"path":"` + e.cluster.manifestURL("img1") + `","type":"s3","node_roles_groups":["Compute"]}}}`
		if code := e.call("PUT", "/v2/sessiontemplates/all", body, nil); code != 200 {
			b.Fatal(code)
		}
		b.StartTimer()
		cpu0, start := cpuTime(), time.Now()
		e.session(`{"name":"r1","operation":"reboot","template_name":"all"}`)
		passes := 0
		for ; e.sessionState("r1").Status.Status != SessionComplete; passes++ {
			if passes > 20 {
				b.Fatalf("session not complete after %d passes", passes)
			}
			e.reconcile()
			e.clock.Advance(10 * time.Second)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/session")
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s/session")
		b.ReportMetric(float64(passes), "passes")
		var st ExtendedStatus
		e.call("GET", "/v2/sessions/r1/status", nil, &st)
		if st.PercentSuccessful != 100 {
			b.Fatalf("status: %+v", st)
		}
	}
}
