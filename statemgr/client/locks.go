package client

import (
	"context"
	"net/http"
	"time"
)

// The lock and reservation bodies of HSM's /locks routes, as this client
// sends and reads them. (They are declared here, not in statemgr/hsm, while
// statemgr is being split: they belong in hsm once it is.)

// KeyedID is a component with a reservation or deputy key.
type KeyedID struct {
	ID  string `json:"ID"`
	Key string `json:"Key"`
}

// ReservationKeys are the keys of one reservation HSM granted.
type ReservationKeys struct {
	ID             string     `json:"ID"`
	DeputyKey      string     `json:"DeputyKey"`
	ReservationKey string     `json:"ReservationKey"`
	ExpirationTime *time.Time `json:"ExpirationTime,omitempty"`
}

// FailedID is a component an operation did not apply to, and why.
type FailedID struct {
	ID     string `json:"ID"`
	Reason string `json:"Reason"`
}

// ReservationResult answers a reservation request.
type ReservationResult struct {
	Success []ReservationKeys `json:"Success"`
	Failure []FailedID        `json:"Failure"`
}

// DeputyCheck is a deputy key HSM found valid.
type DeputyCheck struct {
	ID             string     `json:"ID"`
	DeputyKey      string     `json:"DeputyKey"`
	ExpirationTime *time.Time `json:"ExpirationTime,omitempty"`
}

// CheckResult answers a deputy-key check.
type CheckResult struct {
	Success []DeputyCheck `json:"Success"`
	Failure []FailedID    `json:"Failure"`
}

// ReserveService takes service reservations of ids for minutes (1 to 15)
// in the flexible model: the components that can be reserved are, the
// others come back in Failure.
func (c *Client) ReserveService(ctx context.Context, ids []string, minutes int) (ReservationResult, error) {
	body := struct {
		ComponentIDs        []string `json:"ComponentIDs"`
		ProcessingModel     string   `json:"ProcessingModel"`
		ReservationDuration int      `json:"ReservationDuration"`
	}{ids, "flexible", minutes}
	var out ReservationResult
	err := c.do(ctx, http.MethodPost, "/locks/service/reservations", body, &out)
	return out, err
}

// RenewService extends service reservations by minutes (flexible) and
// returns the ones HSM could not renew (expired, released, wrong key).
func (c *Client) RenewService(ctx context.Context, keys []KeyedID, minutes int) ([]FailedID, error) {
	body := struct {
		ReservationKeys     []KeyedID `json:"ReservationKeys"`
		ProcessingModel     string    `json:"ProcessingModel"`
		ReservationDuration int       `json:"ReservationDuration"`
	}{keys, "flexible", minutes}
	var out struct {
		Failure []FailedID `json:"Failure"`
	}
	err := c.do(ctx, http.MethodPost, "/locks/service/reservations/renew", body, &out)
	return out.Failure, err
}

// ReleaseService releases service reservations (flexible).
func (c *Client) ReleaseService(ctx context.Context, keys []KeyedID) error {
	body := struct {
		ReservationKeys []KeyedID `json:"ReservationKeys"`
		ProcessingModel string    `json:"ProcessingModel"`
	}{keys, "flexible"}
	return c.do(ctx, http.MethodPost, "/locks/service/reservations/release", body, nil)
}

// CheckDeputyKeys asks HSM which deputy keys are valid now.
func (c *Client) CheckDeputyKeys(ctx context.Context, keys []KeyedID) (CheckResult, error) {
	body := struct {
		DeputyKeys []KeyedID `json:"DeputyKeys"`
	}{keys}
	var out CheckResult
	err := c.do(ctx, http.MethodPost, "/locks/service/reservations/check", body, &out)
	return out, err
}
