package statemgr

import (
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func componentTypes() []string {
	var out []string
	for _, t := range xname.Types() {
		switch t {
		case xname.Partition, xname.TypeAll, xname.TypeAllComp, xname.TypeAllSvc:
			continue
		}
		out = append(out, string(t))
	}
	return out
}

func (a *API) getValues(w http.ResponseWriter, r *http.Request) {
	all := hsm.Values{Arch: hsm.Arches.Values, Class: hsm.Classes.Values, Flag: hsm.Flags.Values, NetType: hsm.NetTypes.Values,
		Role: a.store.Vocab().Get().Roles.Values, SubRole: a.store.Vocab().Get().SubRoles.Values, State: hsm.States.Values, Type: componentTypes()}
	kind := strings.ToLower(r.PathValue("kind"))
	var v hsm.Values
	switch kind {
	case "":
		v = all
	case "arch":
		v.Arch = all.Arch
	case "class":
		v.Class = all.Class
	case "flag":
		v.Flag = all.Flag
	case "nettype":
		v.NetType = all.NetType
	case "role":
		v.Role = all.Role
	case "subrole":
		v.SubRole = all.SubRole
	case "state":
		v.State = all.State
	case "type":
		v.Type = all.Type
	default:
		problem.Write(w, r, a.log, problem.NotFoundf("values %q: no such enumeration", r.PathValue("kind")))
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, v)
}
