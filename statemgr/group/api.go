package group

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// glKindField is the JSON name of a kind's key field, for error messages.
func glKindField(kind string) string {
	if kind == core.KindPartition {
		return "name"
	}
	return "label"
}

// API serves /groups, /partitions and /memberships over a Store.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the handlers of store.
func NewAPI(store *Store, log *slog.Logger) *API { return &API{store: store, log: log} }

// Routes registers /groups, /partitions and /memberships.
func (a *API) Routes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+hsm.Base+"/groups", a.listGroups(core.KindGroup))
	mux.HandleFunc("POST "+hsm.Base+"/groups", a.createGroup(core.KindGroup))
	mux.HandleFunc("GET "+hsm.Base+"/groups/labels", a.groupNames(core.KindGroup))
	mux.HandleFunc("GET "+hsm.Base+"/groups/{name}", a.getGroup(core.KindGroup))
	mux.HandleFunc("PATCH "+hsm.Base+"/groups/{name}", a.patchGroup(core.KindGroup))
	mux.HandleFunc("DELETE "+hsm.Base+"/groups/{name}", a.deleteGroup(core.KindGroup))
	mux.HandleFunc("GET "+hsm.Base+"/groups/{name}/members", a.groupMembers(core.KindGroup))
	mux.HandleFunc("POST "+hsm.Base+"/groups/{name}/members", a.addGroupMember(core.KindGroup))
	mux.HandleFunc("DELETE "+hsm.Base+"/groups/{name}/members/{xname}", a.removeGroupMember(core.KindGroup))
	mux.HandleFunc("GET "+hsm.Base+"/partitions", a.listGroups(core.KindPartition))
	mux.HandleFunc("POST "+hsm.Base+"/partitions", a.createGroup(core.KindPartition))
	mux.HandleFunc("GET "+hsm.Base+"/partitions/names", a.groupNames(core.KindPartition))
	mux.HandleFunc("GET "+hsm.Base+"/partitions/{name}", a.getGroup(core.KindPartition))
	mux.HandleFunc("PATCH "+hsm.Base+"/partitions/{name}", a.patchGroup(core.KindPartition))
	mux.HandleFunc("DELETE "+hsm.Base+"/partitions/{name}", a.deleteGroup(core.KindPartition))
	mux.HandleFunc("GET "+hsm.Base+"/partitions/{name}/members", a.groupMembers(core.KindPartition))
	mux.HandleFunc("POST "+hsm.Base+"/partitions/{name}/members", a.addGroupMember(core.KindPartition))
	mux.HandleFunc("DELETE "+hsm.Base+"/partitions/{name}/members/{xname}", a.removeGroupMember(core.KindPartition))
	mux.HandleFunc("GET "+hsm.Base+"/memberships", a.listMemberships)
	mux.HandleFunc("GET "+hsm.Base+"/memberships/{xname}", a.getMembership)
}

// glTags validates and normalises a tag list, dropping duplicates.
func glTags(field string, tags []string) ([]string, error) {
	var out []string
	for i, t := range tags {
		l, err := core.Label(fmt.Sprintf("%s[%d]", field, i), t)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// glDecodeGroup reads and validates a POSTed group or partition.
func glDecodeGroup(w http.ResponseWriter, r *http.Request, kind string) (core.GroupRow, error) {
	var g hsm.Group
	var p hsm.Partition
	var row core.GroupRow
	var err error
	if kind == core.KindPartition {
		if err = httpserver.ReadJSON(w, r, 0, &p); err != nil {
			return row, err
		}
		row = core.GroupRow{Name: p.Name, Description: p.Description, Tags: p.Tags, Members: p.Members.IDs}
	} else {
		if err = httpserver.ReadJSON(w, r, 0, &g); err != nil {
			return row, err
		}
		row = core.GroupRow{Name: g.Label, Description: g.Description, Tags: g.Tags, Members: g.Members.IDs, Exclusive: g.ExclusiveGroup}
	}
	row.Kind = kind
	if row.Name, err = glName(kind, row.Name); err != nil {
		return row, err
	}
	if row.Exclusive != "" {
		if row.Exclusive, err = core.Label("exclusiveGroup", row.Exclusive); err != nil {
			return row, err
		}
	}
	if row.Tags, err = glTags("tags", row.Tags); err != nil {
		return row, err
	}
	row.Members, err = core.Xnames("members.ids", row.Members)
	return row, err
}

// glName validates a group label or partition name.
func glName(kind, v string) (string, error) {
	n, err := core.Label(glKindField(kind), v)
	if err == nil && n == "null" {
		err = problem.Invalidf("%s: %q is reserved (it means \"no %s\" in filters)", glKindField(kind), v, kind)
	}
	return n, err
}

func (a *API) createGroup(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		row, err := glDecodeGroup(w, r, kind)
		if err == nil {
			err = a.store.createGroup(r.Context(), row)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusCreated, []hsm.ResourceURI{{URI: glGroupPath(kind, row.Name)}})
	}
}

func glGroupPath(kind, name string) string {
	if kind == core.KindPartition {
		return hsm.Base + "/partitions/" + url.PathEscape(name)
	}
	return hsm.Base + "/groups/" + url.PathEscape(name)
}

func (a *API) listGroups(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		core.LogIgnored(r, a.log, core.IgnoredParams(q, []string{kind, "tag"}))
		var names []string
		for _, v := range q[kind] {
			n, err := core.Label(kind, v)
			if err != nil {
				problem.Write(w, r, a.log, err)
				return
			}
			names = append(names, n)
		}
		tag := ""
		if v := q.Get("tag"); v != "" {
			var err error
			if tag, err = core.Label("tag", v); err != nil {
				problem.Write(w, r, a.log, err)
				return
			}
		}
		rows := a.store.listGroups(kind, names, tag)
		out := make([]any, 0, len(rows))
		for _, g := range rows {
			out = append(out, g.Wire())
		}
		httpserver.WriteJSON(w, http.StatusOK, out)
	}
}

func (a *API) groupNames(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		httpserver.WriteJSON(w, http.StatusOK, a.store.groupNames(kind))
	}
}

// glPathName validates the {name} path value and the optional partition filter.
func glPathName(r *http.Request, kind string) (name, partition string, err error) {
	if name, err = core.Label(glKindField(kind), r.PathValue("name")); err != nil {
		return "", "", err
	}
	if v := r.URL.Query().Get("partition"); v != "" && kind == core.KindGroup {
		if strings.EqualFold(v, "null") {
			return name, "null", nil
		}
		partition, err = core.Label("partition", v)
	}
	return name, partition, err
}

func (a *API) getGroup(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, part, err := glPathName(r, kind)
		var row core.GroupRow
		if err == nil {
			row, err = a.store.getGroup(kind, name, part)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, row.Wire())
	}
}

func (a *API) patchGroup(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, _, err := glPathName(r, kind)
		var p hsm.GroupPatch
		if err == nil {
			err = httpserver.ReadJSON(w, r, 0, &p)
		}
		if err == nil && p.Tags != nil {
			var tags []string
			tags, err = glTags("tags", *p.Tags)
			p.Tags = &tags
		}
		if err == nil {
			err = a.store.patchGroup(r.Context(), kind, name, p)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

func (a *API) deleteGroup(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, _, err := glPathName(r, kind)
		if err == nil {
			err = a.store.deleteGroup(r.Context(), kind, name)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		core.WriteDeletedOne(w)
	}
}
