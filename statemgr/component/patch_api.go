package component

import (
	"context"
	"net/http"
	"strconv"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// patchBody is the union of the per-field PATCH bodies, single and bulk.
// Pointer fields tell "absent" from the zero value.
type patchBody struct {
	ComponentIDs   []string          `json:"ComponentIDs"`
	State          *string           `json:"State"`
	Flag           *string           `json:"Flag"`
	Force          bool              `json:"Force"`
	Enabled        *bool             `json:"Enabled"`
	SoftwareStatus *string           `json:"SoftwareStatus"`
	Role           *string           `json:"Role"`
	SubRole        *string           `json:"SubRole"`
	NID            *int              `json:"NID"`
	ExtendedInfo   *hsm.ExtendedInfo `json:"ExtendedInfo"`
}

// readPatch decodes a PATCH body and returns the normalised target IDs: the
// path xname for a single PATCH, ComponentIDs for a bulk one.
func (a *API) readPatch(w http.ResponseWriter, r *http.Request, bulk bool) (patchBody, []string, error) {
	var body patchBody
	limit := int64(0)
	if bulk {
		limit = core.BulkLimit
	}
	if err := httpserver.ReadJSON(w, r, limit, &body); err != nil {
		return body, nil, err
	}
	if !bulk {
		id, err := core.PathID(r)
		return body, []string{id}, err
	}
	ids, err := normIDs("ComponentIDs", body.ComponentIDs)
	return body, ids, err
}

// enumField normalises an optional enum value; required fields must be present.
func enumField(e *hsm.Enum, v *string, required bool) (string, error) {
	if v == nil || *v == "" {
		if required {
			return "", problem.Invalidf("%s: required", e.Field)
		}
		return "", nil
	}
	n, ok := e.Normalize(*v)
	if !ok {
		return "", problem.Invalidf("%s: invalid value %q", e.Field, *v)
	}
	return n, nil
}

// runPatch is the shared tail of every PATCH handler: decode, validate with
// prepare, apply with do, answer 204.
func (a *API) runPatch(w http.ResponseWriter, r *http.Request, bulk bool,
	do func(ctx context.Context, b patchBody, ids []string) error) {
	body, ids, err := a.readPatch(w, r, bulk)
	if err == nil {
		err = do(r.Context(), body, ids)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if body.ExtendedInfo != nil && body.ExtendedInfo.Message != "" {
		a.log.DebugContext(r.Context(), "component_patch_info", "path", r.URL.Path, "message", body.ExtendedInfo.Message)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) patchState(bulk bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.runPatch(w, r, bulk, func(ctx context.Context, b patchBody, ids []string) error {
			st, err := enumField(&hsm.States, b.State, true)
			if err != nil {
				return err
			}
			fl, err := enumField(&hsm.Flags, b.Flag, false)
			if err != nil {
				return err
			}
			_, err = a.store.UpdateState(ctx, ids, StateUpdate{State: st, Flag: fl, Force: b.Force})
			return err
		})
	}
}

func (a *API) patchFlag(bulk bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.runPatch(w, r, bulk, func(ctx context.Context, b patchBody, ids []string) error {
			fl, err := enumField(&hsm.Flags, b.Flag, true)
			if err != nil {
				return err
			}
			_, err = a.store.updateFlag(ctx, ids, fl)
			return err
		})
	}
}

func (a *API) patchEnabled(bulk bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.runPatch(w, r, bulk, func(ctx context.Context, b patchBody, ids []string) error {
			if b.Enabled == nil {
				return problem.Invalidf("Enabled: required")
			}
			_, err := a.store.updateEnabled(ctx, ids, *b.Enabled)
			return err
		})
	}
}

func (a *API) patchSoftwareStatus(bulk bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.runPatch(w, r, bulk, func(ctx context.Context, b patchBody, ids []string) error {
			if b.SoftwareStatus == nil {
				return problem.Invalidf("SoftwareStatus: required")
			}
			_, err := a.store.updateSoftwareStatus(ctx, ids, *b.SoftwareStatus)
			return err
		})
	}
}

func (a *API) patchRole(bulk bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.runPatch(w, r, bulk, func(ctx context.Context, b patchBody, ids []string) error {
			vs := a.store.vocab.Get()
			role, err := enumField(&vs.Roles, b.Role, true)
			if err != nil {
				return err
			}
			sub, err := enumField(&vs.SubRoles, b.SubRole, false)
			if err != nil {
				return err
			}
			_, err = a.store.updateRole(ctx, ids, role, sub)
			return err
		})
	}
}

func (a *API) patchNID(w http.ResponseWriter, r *http.Request) {
	a.runPatch(w, r, false, func(ctx context.Context, b patchBody, ids []string) error {
		if b.NID == nil {
			return problem.Invalidf("NID: required")
		}
		if *b.NID < 0 {
			return problem.Invalidf("NID: %d is negative", *b.NID)
		}
		_, err := a.store.updateNIDs(ctx, []nIDUpdate{{ID: ids[0], NID: *b.NID}})
		return err
	})
}

// bulkNIDBody is PATCH /State/Components/BulkNID.
type bulkNIDBody struct {
	Name       string `json:"Name"`
	Components []struct {
		ID           string            `json:"ID"`
		Type         string            `json:"Type"`
		NID          *int              `json:"NID"`
		ExtendedInfo *hsm.ExtendedInfo `json:"ExtendedInfo"`
	} `json:"Components"`
}

func (a *API) patchNIDs(w http.ResponseWriter, r *http.Request) {
	var body bulkNIDBody
	if err := httpserver.ReadJSON(w, r, core.BulkLimit, &body); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if len(body.Components) == 0 {
		problem.Write(w, r, a.log, problem.Invalidf("Components: at least one component is required"))
		return
	}
	ups := make([]nIDUpdate, len(body.Components))
	for i, c := range body.Components {
		ids, err := normIDs("Components["+strconv.Itoa(i)+"].ID", []string{c.ID})
		if err == nil && (c.NID == nil || *c.NID < 0) {
			err = problem.Invalidf("Components[%d].NID: required, a non-negative integer", i)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		ups[i] = nIDUpdate{ID: ids[0], NID: *c.NID}
	}
	if _, err := a.store.updateNIDs(r.Context(), ups); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
