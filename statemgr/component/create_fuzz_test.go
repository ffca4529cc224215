package component

import (
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// FuzzNewRecord feeds arbitrary component fields to the POST validator: what
// it accepts always has an ID, a Type, a State and a Flag.
func FuzzNewRecord(f *testing.F) {
	f.Add("x0c0s0b0n0", "Node", "on", "warn", "compute", "X86")
	f.Add("s0", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, id, typ, state, flag, role, arch string) {
		r, err := newRecord("c", hsm.Component{ID: id, Type: typ, State: state, Flag: flag, Role: role, Arch: arch}, core.NewVocab().Get())
		if err != nil {
			return
		}
		if r.State == "" || r.Flag == "" || r.Type == "" || r.ID == "" {
			t.Fatalf("accepted record with empty fields: %+v", r)
		}
	})
}
