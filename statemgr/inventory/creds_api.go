package inventory

import (
	"net/http"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// getCredentials answers GET /Inventory/RedfishEndpointCredentials[?id=X]:
// the stored BMC logins, opened, for a service that talks to BMCs (pcs),
// as CSM's services read Vault's secret/hms-creds. It is not a shipped
// HSM route, and shipped HSM's routes never return a password; so beside
// the route table (admin only), the handler itself refuses any caller
// the token guard did not authenticate as admin: with tokens off, and in
// shadow mode to a caller without a valid admin token, the route answers
// 403, never a password.
func (a *API) getCredentials(w http.ResponseWriter, r *http.Request) {
	if p, ok := auth.FromContext(r.Context()); !ok || !p.Has(auth.Admin) {
		problem.WriteStatus(w, r, http.StatusForbidden,
			"BMC credentials are served only to a caller holding an admin token (HSM must check tokens)")
		return
	}
	rows, err := a.filteredRFRows(r)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	out := hsm.BMCCredentialList{Credentials: make([]hsm.BMCCredential, 0, len(rows))}
	for _, row := range rows {
		c, err := a.rf.openCred(row)
		if err != nil {
			a.log.WarnContext(r.Context(), "redfish_endpoint_credentials_unreadable", "xname", row.ep.ID)
			continue
		}
		if c != (rfCred{}) {
			out.Credentials = append(out.Credentials, hsm.BMCCredential{ID: row.ep.ID, User: c.User, Password: c.Password})
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	a.log.InfoContext(r.Context(), "bmc_credentials_served", "count", len(out.Credentials))
	httpserver.WriteJSON(w, http.StatusOK, out)
}
