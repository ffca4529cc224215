package statemgr

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// The two kinds of row in component_groups.
const (
	kindGroup     = "group"
	kindPartition = "partition"
)

// glKindField is the JSON name of a kind's key field, for error messages.
func glKindField(kind string) string {
	if kind == kindPartition {
		return "name"
	}
	return "label"
}

// groupRoutes registers /groups, /partitions and /memberships.
func (a *API) groupRoutes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+Base+"/groups", a.listGroups(kindGroup))
	mux.HandleFunc("POST "+Base+"/groups", a.createGroup(kindGroup))
	mux.HandleFunc("GET "+Base+"/groups/labels", a.groupNames(kindGroup))
	mux.HandleFunc("GET "+Base+"/groups/{name}", a.getGroup(kindGroup))
	mux.HandleFunc("PATCH "+Base+"/groups/{name}", a.patchGroup(kindGroup))
	mux.HandleFunc("DELETE "+Base+"/groups/{name}", a.deleteGroup(kindGroup))
	mux.HandleFunc("GET "+Base+"/groups/{name}/members", a.groupMembers(kindGroup))
	mux.HandleFunc("POST "+Base+"/groups/{name}/members", a.addGroupMember(kindGroup))
	mux.HandleFunc("DELETE "+Base+"/groups/{name}/members/{xname}", a.removeGroupMember(kindGroup))
	mux.HandleFunc("GET "+Base+"/partitions", a.listGroups(kindPartition))
	mux.HandleFunc("POST "+Base+"/partitions", a.createGroup(kindPartition))
	mux.HandleFunc("GET "+Base+"/partitions/names", a.groupNames(kindPartition))
	mux.HandleFunc("GET "+Base+"/partitions/{name}", a.getGroup(kindPartition))
	mux.HandleFunc("PATCH "+Base+"/partitions/{name}", a.patchGroup(kindPartition))
	mux.HandleFunc("DELETE "+Base+"/partitions/{name}", a.deleteGroup(kindPartition))
	mux.HandleFunc("GET "+Base+"/partitions/{name}/members", a.groupMembers(kindPartition))
	mux.HandleFunc("POST "+Base+"/partitions/{name}/members", a.addGroupMember(kindPartition))
	mux.HandleFunc("DELETE "+Base+"/partitions/{name}/members/{xname}", a.removeGroupMember(kindPartition))
	mux.HandleFunc("GET "+Base+"/memberships", a.listMemberships)
	mux.HandleFunc("GET "+Base+"/memberships/{xname}", a.getMembership)
}

// glGroupRow is a group or a partition as the store handles it.
type glGroupRow struct {
	name, kind, description, exclusive string
	tags, members                      []string
}

func (g glGroupRow) wire() any {
	ids := g.members
	if ids == nil {
		ids = []string{}
	}
	if g.kind == kindPartition {
		return hsm.Partition{Name: g.name, Description: g.description, Tags: g.tags, Members: hsm.Members{IDs: ids}}
	}
	return hsm.Group{Label: g.name, Description: g.description, ExclusiveGroup: g.exclusive, Tags: g.tags, Members: hsm.Members{IDs: ids}}
}

// glLabel validates and normalises a group label, partition name, tag or exclusive
// group label: lower case letters, digits, '_', '-' and '.', 1 to 255 of them.
func glLabel(field, v string) (string, error) {
	l := strings.ToLower(strings.TrimSpace(v))
	if l == "" {
		return "", problem.Invalidf("%s: must not be empty", field)
	}
	if len(l) > 255 {
		return "", problem.Invalidf("%s: longer than 255 characters", field)
	}
	for _, r := range l {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' && r != '-' && r != '.' {
			return "", problem.Invalidf("%s: %q has character %q; use a-z, 0-9, '_', '-' or '.'", field, v, r)
		}
	}
	return l, nil
}

// glTags validates and normalises a tag list, dropping duplicates.
func glTags(field string, tags []string) ([]string, error) {
	var out []string
	for i, t := range tags {
		l, err := glLabel(fmt.Sprintf("%s[%d]", field, i), t)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// glXnames parses and normalises a list of component IDs, dropping duplicates.
func glXnames(field string, ids []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		x, err := xname.Parse(id)
		if err != nil {
			return nil, problem.Invalidf("%s[%d]: %v", field, i, err)
		}
		if s := x.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// glDecodeGroup reads and validates a POSTed group or partition.
func glDecodeGroup(w http.ResponseWriter, r *http.Request, kind string) (glGroupRow, error) {
	var g hsm.Group
	var p hsm.Partition
	var row glGroupRow
	var err error
	if kind == kindPartition {
		if err = httpserver.ReadJSON(w, r, 0, &p); err != nil {
			return row, err
		}
		row = glGroupRow{name: p.Name, description: p.Description, tags: p.Tags, members: p.Members.IDs}
	} else {
		if err = httpserver.ReadJSON(w, r, 0, &g); err != nil {
			return row, err
		}
		row = glGroupRow{name: g.Label, description: g.Description, tags: g.Tags, members: g.Members.IDs, exclusive: g.ExclusiveGroup}
	}
	row.kind = kind
	if row.name, err = glName(kind, row.name); err != nil {
		return row, err
	}
	if row.exclusive != "" {
		if row.exclusive, err = glLabel("exclusiveGroup", row.exclusive); err != nil {
			return row, err
		}
	}
	if row.tags, err = glTags("tags", row.tags); err != nil {
		return row, err
	}
	row.members, err = glXnames("members.ids", row.members)
	return row, err
}

// glName validates a group label or partition name.
func glName(kind, v string) (string, error) {
	n, err := glLabel(glKindField(kind), v)
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
		httpserver.WriteJSON(w, http.StatusCreated, []hsm.ResourceURI{{URI: glGroupPath(kind, row.name)}})
	}
}

func glGroupPath(kind, name string) string {
	if kind == kindPartition {
		return Base + "/partitions/" + url.PathEscape(name)
	}
	return Base + "/groups/" + url.PathEscape(name)
}

func (a *API) listGroups(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		a.logIgnored(r, ignoredParams(q, []string{kind, "tag"}))
		var names []string
		for _, v := range q[kind] {
			n, err := glLabel(kind, v)
			if err != nil {
				problem.Write(w, r, a.log, err)
				return
			}
			names = append(names, n)
		}
		tag := ""
		if v := q.Get("tag"); v != "" {
			var err error
			if tag, err = glLabel("tag", v); err != nil {
				problem.Write(w, r, a.log, err)
				return
			}
		}
		rows := a.store.listGroups(kind, names, tag)
		out := make([]any, 0, len(rows))
		for _, g := range rows {
			out = append(out, g.wire())
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
	if name, err = glLabel(glKindField(kind), r.PathValue("name")); err != nil {
		return "", "", err
	}
	if v := r.URL.Query().Get("partition"); v != "" && kind == kindGroup {
		if strings.EqualFold(v, "null") {
			return name, "null", nil
		}
		partition, err = glLabel("partition", v)
	}
	return name, partition, err
}

func (a *API) getGroup(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, part, err := glPathName(r, kind)
		var row glGroupRow
		if err == nil {
			row, err = a.store.getGroup(kind, name, part)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, row.wire())
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
