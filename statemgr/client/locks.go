package client

import (
	"context"
	"net/http"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// ReserveService takes service reservations of ids for minutes (1 to 15)
// in the flexible model: the components that can be reserved are, the
// others come back in Failure.
func (c *Client) ReserveService(ctx context.Context, ids []string, minutes int) (hsm.ReservationResult, error) {
	body := hsm.LockRequest{ComponentIDs: ids, ProcessingModel: hsm.ModelFlexible, ReservationDuration: minutes}
	var out hsm.ReservationResult
	err := c.do(ctx, http.MethodPost, "/locks/service/reservations", body, &out)
	return out, err
}

// RenewService extends service reservations by minutes (flexible) and
// returns the ones HSM could not renew (expired, released, wrong key).
func (c *Client) RenewService(ctx context.Context, keys []hsm.KeyedID, minutes int) ([]hsm.FailedID, error) {
	body := hsm.ReservationKeysRequest{ReservationKeys: keys, ProcessingModel: hsm.ModelFlexible, ReservationDuration: minutes}
	var out hsm.LockResult
	err := c.do(ctx, http.MethodPost, "/locks/service/reservations/renew", body, &out)
	return out.Failure, err
}

// ReleaseService releases service reservations (flexible).
func (c *Client) ReleaseService(ctx context.Context, keys []hsm.KeyedID) error {
	body := hsm.ReservationKeysRequest{ReservationKeys: keys, ProcessingModel: hsm.ModelFlexible}
	return c.do(ctx, http.MethodPost, "/locks/service/reservations/release", body, nil)
}

// CheckDeputyKeys asks HSM which deputy keys are valid now.
func (c *Client) CheckDeputyKeys(ctx context.Context, keys []hsm.KeyedID) (hsm.CheckResult, error) {
	body := hsm.DeputyKeysRequest{DeputyKeys: keys}
	var out hsm.CheckResult
	err := c.do(ctx, http.MethodPost, "/locks/service/reservations/check", body, &out)
	return out, err
}
