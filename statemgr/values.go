package statemgr

import (
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// Values is the body of GET /service/values: every enumeration HSM validates.
type Values struct {
	Arch    []string `json:"Arch,omitempty"`
	Class   []string `json:"Class,omitempty"`
	Flag    []string `json:"Flag,omitempty"`
	NetType []string `json:"NetType,omitempty"`
	Role    []string `json:"Role,omitempty"`
	SubRole []string `json:"SubRole,omitempty"`
	State   []string `json:"State,omitempty"`
	Type    []string `json:"Type,omitempty"`
}

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
	all := Values{Arch: Arches.Values, Class: Classes.Values, Flag: Flags.Values, NetType: NetTypes.Values,
		Role: a.store.vocab.get().roles.Values, SubRole: a.store.vocab.get().subRoles.Values, State: States.Values, Type: componentTypes()}
	kind := strings.ToLower(r.PathValue("kind"))
	var v Values
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
