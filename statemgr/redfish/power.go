package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/stmcginnis/gofish/schemas"
)

// PowerState reads the power state of one ComputerSystem, for HSM's Standby
// watchdog: odataID is the node's ComponentEndpoint OdataID, such as
// /redfish/v1/Systems/437XR1138R2. It sends a single GET, bounded like a walk
// by opts, and returns StateOn, StateOff, StateEmpty or StateUnknown with the
// rules the walk uses. The status tells why a read failed; the error is nil
// exactly when it is StatusOK.
func PowerState(ctx context.Context, ep Endpoint, opts Options, odataID string) (string, Status, error) {
	base, _, err := endpointURL(ep)
	if err != nil || !strings.HasPrefix(odataID, serviceRoot+"/") {
		return hsm.StateUnknown, StatusEndpointInvalid,
			problem.Invalidf("redfish power state of %s: bad endpoint or @odata.id %q", ep.ID, odataID)
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	tr, closeIdle := baseTransport(ep, opts)
	defer closeIdle()
	m := newMeter(tr, opts.MaxConcurrentRequests)
	m.authorize(base, ep.User, ep.Password)
	defer m.closeAll()

	w := &walker{}
	state, err := getPowerState(ctx, &http.Client{Transport: m}, base+odataID)
	if err != nil {
		s := w.classify(ctx, err)
		return hsm.StateUnknown, s, fmt.Errorf("redfish power state of %s %s: %s: %s: %w",
			ep.ID, odataID, s, w.describe(ctx, err), problem.ErrUnavailable)
	}
	return state, StatusOK, nil
}

func getPowerState(ctx context.Context, c *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", schemas.ConstructError(resp.StatusCode, b)
	}
	return parsePowerState(b)
}

// parsePowerState decodes PowerState and Status.State of a ComputerSystem and
// maps them to an HSM state. The input is untrusted.
func parsePowerState(raw []byte) (string, error) {
	var r struct {
		PowerState schemas.PowerState `json:"PowerState"`
		Status     struct {
			State schemas.State `json:"State"`
		} `json:"Status"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("decode redfish ComputerSystem: %w", err)
	}
	return powerState(r.PowerState, schemas.Status{State: r.Status.State}), nil
}
