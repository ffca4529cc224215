package orchestrator

import (
	"context"
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
