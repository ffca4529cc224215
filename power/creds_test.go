package power

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestCredentialsFromHSM: with HSM checking tokens and pcs holding an
// admin token and no credentials file, pcs logs in to the BMCs with the
// logins HSM keeps; HSM's credentials route refuses an operator, and an
// HSM that does not check tokens refuses everyone.
func TestCredentialsFromHSM(t *testing.T) {
	issuer := authtest.New(t)
	e := buildEnv(t, issuer, nil, nil, redfishsim.FleetConfig{Count: 2, Tree: redfishsim.TemplatePower(1)})
	tr := e.transition("off", 1, locs(e.node(0), e.node(1))...)
	for _, tk := range tr.Tasks {
		if tk.Status != pcs.TaskSucceeded {
			t.Errorf("off with HSM's logins: %+v", tk)
		}
	}
	got, err := e.hsm.BMCCredentials(t.Context(), nil)
	if err != nil || len(got) != 2 || got[0].Password != simPassword {
		t.Errorf("admin: %+v %v, want both BMCs' logins", got, err)
	}
	operator := client.New(e.hsmURL, token.Config{Token: issuer.Token("op", auth.Operator)}.Client(nil), "test")
	if _, err := operator.BMCCredentials(t.Context(), nil); !refused(err) {
		t.Errorf("operator: %v, want 403", err)
	}
	open := newEnv(t, 1, nil)
	if _, err := open.hsm.BMCCredentials(t.Context(), nil); !refused(err) {
		t.Errorf("HSM without tokens: %v, want 403", err)
	}
}

// TestHSMCredentialsLayers: the override file's entry wins, then HSM's,
// then the file's default; HSM is read again after the TTL, or sooner
// when a BMC was missing, and a failed read keeps what was held.
func TestHSMCredentialsLayers(t *testing.T) {
	now := time.Unix(0, 0)
	reads := 0
	var fail error
	list := []hsm.BMCCredential{{ID: "x1c0s0b0", User: "hsm", Password: "h"}}
	h := NewHSMCredentials(func(context.Context) ([]hsm.BMCCredential, error) {
		reads++
		return list, fail
	}, StaticCredentials{"x1c0s1b0": {Username: "file"}, "default": {Username: "dflt"}}, func() time.Time { return now }, nil)
	h.refresh(t.Context())
	for bmc, want := range map[string]string{"x1c0s0b0": "hsm", "x1c0s1b0": "file", "x1c0s2b0": "dflt"} {
		if c, ok := h.For(bmc); !ok || c.Username != want {
			t.Errorf("For(%s) = %+v %v, want %s", bmc, c, ok, want)
		}
	}
	h.refresh(t.Context()) // x1c0s2b0 was missing, but the retry delay has not passed
	now = now.Add(hsmCredsRetry)
	list = append(list, hsm.BMCCredential{ID: "x1c0s2b0", User: "new"})
	h.refresh(t.Context())
	if c, _ := h.For("x1c0s2b0"); reads != 2 || c.Username != "new" {
		t.Errorf("after a miss: %d reads, x1c0s2b0 %+v", reads, c)
	}
	h.refresh(t.Context())
	fail = errors.New("403")
	now = now.Add(hsmCredsTTL)
	h.refresh(t.Context())
	if c, _ := h.For("x1c0s0b0"); reads != 3 || c.Username != "hsm" {
		t.Errorf("after a failed read: %d reads, x1c0s0b0 %+v", reads, c)
	}
}

// TestHSMCredentialsForgetMovedBMC: a BMC whose address changed loses its
// cached login at once (HSM drops it too), and HSM is read again without
// waiting for the TTL, so pcs never presents the old login at the new
// address.
func TestHSMCredentialsForgetMovedBMC(t *testing.T) {
	now := time.Unix(0, 0)
	reads := 0
	list := []hsm.BMCCredential{{ID: "x1c0s0b0", User: "hsm", Password: "h"}}
	h := NewHSMCredentials(func(context.Context) ([]hsm.BMCCredential, error) {
		reads++
		return list, nil
	}, nil, func() time.Time { return now }, nil)
	h.refresh(t.Context())
	list = nil // HSM dropped the login with the address change
	h.forget([]string{"x1c0s0b0"})
	if c, ok := h.For("x1c0s0b0"); ok {
		t.Errorf("moved BMC still has login %+v", c)
	}
	h.refresh(t.Context())
	if _, ok := h.For("x1c0s0b0"); reads != 2 || ok {
		t.Errorf("after forget: %d reads (want 2, no wait for the TTL), login held %v", reads, ok)
	}
}

// refused reports whether err is HSM's 403.
func refused(err error) bool { return err != nil && strings.Contains(err.Error(), "403") }
