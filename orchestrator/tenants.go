package orchestrator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// TenantHeader names the tenant a request acts for. BOS scopes templates
// and sessions by it: with a tenant, a request sees and changes only the
// tenant's; without one (or empty), every template and session is in
// reach, and those it creates belong to no tenant.
const TenantHeader = "Cray-Tenant-Name"

// tenant is the request's tenant ("" for none).
func tenant(r *http.Request) string { return strings.TrimSpace(r.Header.Get(TenantHeader)) }

// tenantNodes are the nodes a tenant owns: the members of the HSM group
// named after it (CSM's tenant service, TAPMS, keeps each tenant's nodes
// in such a group; bos reads HSM rather than TAPMS). nil for no tenant. A
// tenant without a group or nodes is not one (400, as BOS answers for a
// tenant TAPMS does not know).
func (s *Service) tenantNodes(ctx context.Context, tenant string) (map[string]bool, error) {
	if tenant == "" {
		return nil, nil
	}
	if len(tenant) > 127 {
		return nil, problem.Invalidf("Invalid tenant: %s is longer than 127 characters", TenantHeader)
	}
	nodes, err := s.hsm.Components(ctx, url.Values{"group": {tenant}, "type": {"Node"}})
	if err != nil && !problemIsNotFound(err) {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, problem.Invalidf("Invalid tenant %s: HSM has no group of that name with nodes", tenant)
	}
	own := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		own[n.ID] = true
	}
	return own, nil
}

// owned checks that a tenant's request names only the tenant's components
// (ErrNotFound for another's, as GET answers); any request without a
// tenant may name any.
func (a *API) owned(r *http.Request, ids ...string) error {
	tn := tenant(r)
	if tn == "" {
		return nil
	}
	own, err := a.svc.tenantNodes(r.Context(), tn)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !own[id] {
			return problem.NotFoundf("Component %s could not be found", id)
		}
	}
	return nil
}

// ownedOnly splits ids into the request's tenant's and the others (no
// tenant: all are its own). POST /v2/applystaged reports the others as
// failed, as BOS does for a component it cannot act on.
func (a *API) ownedOnly(r *http.Request, ids []string) (own, others []string, err error) {
	tn := tenant(r)
	if tn == "" {
		return ids, nil, nil
	}
	nodes, err := a.svc.tenantNodes(r.Context(), tn)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		if nodes[id] {
			own = append(own, id)
		} else {
			others = append(others, id)
		}
	}
	return own, others, nil
}

// ownedBody is owned for the components a PUT or PATCH /v2/components
// body names: each element's id of an array; the filter's ids, or its
// session, which must be the tenant's.
func (a *API) ownedBody(r *http.Request, body []byte) error {
	if tenant(r) == "" {
		return nil
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &list); err == nil {
		ids := make([]string, len(list))
		for i, c := range list {
			ids[i] = c.ID
		}
		return a.owned(r, ids...)
	}
	var u componentsUpdate
	if err := json.Unmarshal(body, &u); err != nil {
		return nil // the handler refuses it
	}
	if u.Filters.Session != nil && *u.Filters.Session != "" {
		_, err := a.svc.Session(r.Context(), tenant(r), *u.Filters.Session)
		return err
	}
	if u.Filters.IDs != nil {
		return a.owned(r, strings.Split(*u.Filters.IDs, ",")...)
	}
	return nil
}
