package component_test

import (
	"sync"
	"testing"

	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// BenchmarkHistoryOf10k: GET /State/Components/History/{xname} with the
// history of 10,000 nodes: their creation and three bulk changes of all
// (rows of 10,000 IDs each) and 40,000 changes of one node each, as
// heartbeats make them.
func BenchmarkHistoryOf10k(b *testing.B) {
	s, h, comps := benchAPI(b, 10_000)
	st := component.NewStore(s)
	ids := hsmtest.IDsOf(comps)
	ctx := b.Context()
	for _, state := range []string{"Off", "On", "Ready"} {
		if _, err := st.UpdateState(ctx, ids, component.StateUpdate{State: state}); err != nil {
			b.Fatal(err)
		}
	}
	// 32 writers at once, so the group commit takes many changes per
	// transaction: each is a history row of its own.
	var wg sync.WaitGroup
	const writers, each = 32, 1250
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := ids[(w*each+i)%len(ids)]
				state := []string{"Standby", "Ready"}[(w*each+i)/len(ids)%2]
				if _, err := st.UpdateState(ctx, []string{id}, component.StateUpdate{State: state}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	id := ids[len(ids)/2]
	b.Run("one-xname", func(b *testing.B) {
		cpu := hsmtest.CPUTime()
		for b.Loop() {
			serve(b, h, "GET", hsm.Base+"/State/Components/History/"+id, nil, 200)
		}
		reportCPU(b, cpu)
	})
	b.Run("ids-10", func(b *testing.B) {
		path := hsm.Base + "/State/Components/History?id=" + id
		for i := range 9 {
			path += "&id=" + ids[i*997]
		}
		cpu := hsmtest.CPUTime()
		for b.Loop() {
			serve(b, h, "GET", path, nil, 200)
		}
		reportCPU(b, cpu)
	})
}
