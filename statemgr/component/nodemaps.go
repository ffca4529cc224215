package component

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// NodeMaps returns every node map, by ID.
func (s *Store) NodeMaps(ctx context.Context) ([]hsm.NodeMap, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT id, nid, role, sub_role FROM node_maps ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read node maps: %w", err)
	}
	defer rows.Close()
	out := []hsm.NodeMap{}
	for rows.Next() {
		var m hsm.NodeMap
		if err := rows.Scan(&m.ID, &m.NID, &m.Role, &m.SubRole); err != nil {
			return nil, fmt.Errorf("read node maps: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// NodeMap returns the node map of id.
func (s *Store) NodeMap(ctx context.Context, id string) (hsm.NodeMap, error) {
	m := hsm.NodeMap{ID: xname.Normalize(id)}
	err := s.db.R.QueryRowContext(ctx, `SELECT nid, role, sub_role FROM node_maps WHERE id = ?`, m.ID).Scan(&m.NID, &m.Role, &m.SubRole)
	if errors.Is(err, sql.ErrNoRows) {
		return m, problem.NotFoundf("node map %s: none", id)
	}
	if err != nil {
		return m, fmt.Errorf("read node map %s: %w", id, err)
	}
	return m, nil
}

// nodeMapsFor returns the node maps of recs' IDs.
func (s *Store) nodeMapsFor(ctx context.Context, recs []*core.Record) (map[string]hsm.NodeMap, error) {
	out := map[string]hsm.NodeMap{}
	st, err := s.db.R.PrepareContext(ctx, `SELECT nid, role, sub_role FROM node_maps WHERE id = ?`)
	if err != nil {
		return nil, fmt.Errorf("read node maps: %w", err)
	}
	defer st.Close()
	for _, r := range recs {
		m := hsm.NodeMap{ID: r.ID}
		err := st.QueryRowContext(ctx, r.ID).Scan(&m.NID, &m.Role, &m.SubRole)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read node map %s: %w", r.ID, err)
		}
		out[r.ID] = m
	}
	return out, nil
}

// validNodeMap checks and normalises m (element field of a request).
func validNodeMap(field string, m *hsm.NodeMap, vs *core.VocabSet) error {
	// The shipped HSM maps VirtualNodes too (its check is "is a node type").
	if t := xname.TypeOf(m.ID); t != xname.Node && t != xname.VirtualNode {
		return problem.Invalidf("%s.ID: %q is not a node xname", field, m.ID)
	}
	m.ID = xname.Normalize(m.ID)
	if m.NID <= 0 {
		return problem.Invalidf("%s.NID: must be a positive integer", field)
	}
	for _, e := range []struct {
		enum *hsm.Enum
		v    *string
	}{{&vs.Roles, &m.Role}, {&vs.SubRoles, &m.SubRole}} {
		if *e.v == "" {
			continue
		}
		n, ok := e.enum.Normalize(*e.v)
		if !ok {
			return problem.Invalidf("%s.%s: invalid value %q", field, e.enum.Field, *e.v)
		}
		*e.v = n
	}
	return nil
}

// putNodeMaps creates or replaces node maps in one transaction; a NID used
// twice is ErrConflict and nothing is stored.
func (s *Store) putNodeMaps(ctx context.Context, maps []hsm.NodeMap) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO node_maps (id, nid, role, sub_role) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET nid = excluded.nid, role = excluded.role, sub_role = excluded.sub_role`)
		if err != nil {
			return fmt.Errorf("prepare node map upsert: %w", err)
		}
		defer st.Close()
		for i, m := range maps {
			if _, err := st.ExecContext(ctx, m.ID, m.NID, m.Role, m.SubRole); err != nil {
				if sqldb.IsUniqueViolation(err) {
					return problem.Conflictf("NodeMaps[%d].NID: NID %d is already mapped to another xname", i, m.NID)
				}
				return fmt.Errorf("store node map %s: %w", m.ID, err)
			}
		}
		return nil
	})
}

// deleteNodeMap deletes the node map of id; id "" deletes them all. It
// returns how many were deleted.
func (s *Store) deleteNodeMap(ctx context.Context, id string) (int64, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		q, args := `DELETE FROM node_maps`, []any{}
		if id != "" {
			q, args = q+` WHERE id = ?`, []any{xname.Normalize(id)}
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("delete node maps: %w", err)
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err == nil && n == 0 {
		return 0, problem.NotFoundf("node map %s: none", id)
	}
	return n, err
}

func (a *API) getNodeMaps(w http.ResponseWriter, r *http.Request) {
	maps, err := a.store.NodeMaps(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, hsm.NodeMapList{NodeMaps: maps})
}

func (a *API) getNodeMap(w http.ResponseWriter, r *http.Request) {
	m, err := a.store.NodeMap(r.Context(), r.PathValue("xname"))
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, m)
}

func (a *API) postNodeMaps(w http.ResponseWriter, r *http.Request) {
	var body hsm.NodeMapList
	if err := httpserver.ReadJSON(w, r, core.BulkLimit, &body); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	for i := range body.NodeMaps {
		if err := validNodeMap(fmt.Sprintf("NodeMaps[%d]", i), &body.NodeMaps[i], a.store.vocab.Get()); err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
	}
	if err := a.store.putNodeMaps(r.Context(), body.NodeMaps); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteMessage(w, fmt.Sprintf("Created or modified %d entries", len(body.NodeMaps)))
}

func (a *API) putNodeMap(w http.ResponseWriter, r *http.Request) {
	var m hsm.NodeMap
	if err := httpserver.ReadJSON(w, r, 0, &m); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if m.ID == "" {
		m.ID = r.PathValue("xname")
	}
	if xname.Normalize(m.ID) != xname.Normalize(r.PathValue("xname")) {
		problem.Write(w, r, a.log, problem.Invalidf("ID: %q does not match the path xname", m.ID))
		return
	}
	if err := validNodeMap("NodeMap", &m, a.store.vocab.Get()); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if err := a.store.putNodeMaps(r.Context(), []hsm.NodeMap{m}); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, m)
}

func (a *API) deleteNodeMaps(w http.ResponseWriter, r *http.Request) {
	n, err := a.store.deleteNodeMap(r.Context(), r.PathValue("xname"))
	switch {
	case err != nil:
		problem.Write(w, r, a.log, err)
	case r.PathValue("xname") != "":
		core.WriteDeletedOne(w)
	default:
		core.WriteDeleted(w, n)
	}
}
