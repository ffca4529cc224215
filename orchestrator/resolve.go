package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// target is one node of a session: the boot set it boots and HSM's record.
type target struct {
	bootSet string
	images  images
	node    hsm.Component
}

// resolveTemplate finds the nodes of every boot set in HSM and reads the
// boot sets' manifests (not for a shutdown). Unknown nodes, groups or roles
// that hold no node, and manifests that are not one are ErrInvalid, naming
// them; HSM or a manifest's host not answering is ErrUnavailable.
// A node in two boot sets keeps the first by boot set name.
func (s *Service) resolveTemplate(ctx context.Context, t Template, op string) (map[string]target, error) {
	names := make([]string, 0, len(t.BootSets))
	for n := range t.BootSets {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]target{}
	for _, name := range names {
		bs := t.BootSets[name]
		nodes, err := s.bootSetNodes(ctx, bs)
		if err != nil {
			return nil, bootSetError(t.Name, name, err)
		}
		var im images
		if op != OpShutdown {
			if im, err = s.readManifest(ctx, bs.Path); err != nil {
				return nil, bootSetError(t.Name, name, err)
			}
		}
		for _, n := range nodes {
			if _, ok := out[n.ID]; !ok {
				out[n.ID] = target{bootSet: name, images: im, node: n}
			}
		}
	}
	return out, nil
}

// bootSetError names the template and boot set err is about, keeping
// ErrUnavailable (a peer may answer later) and making the rest ErrInvalid.
func bootSetError(tmpl, bootSet string, err error) error {
	if errors.Is(err, problem.ErrUnavailable) {
		return fmt.Errorf("Session template '%s' boot set '%s': %w", tmpl, bootSet, err)
	}
	return problem.Invalidf("Session template '%s' boot set '%s': %v", tmpl, bootSet, err)
}

// bootSetNodes are the nodes a boot set names, of its architecture (HSM's
// UNKNOWN and unset count as X86, as in BOS).
func (s *Service) bootSetNodes(ctx context.Context, bs BootSet) ([]hsm.Component, error) {
	var all []hsm.Component
	if len(bs.NodeList) > 0 {
		ids := make([]string, len(bs.NodeList))
		for i, n := range bs.NodeList {
			ids[i] = xname.Normalize(n)
		}
		got, err := s.hsm.QueryComponents(ctx, ids)
		if err != nil && !problemIsNotFound(err) {
			return nil, fmt.Errorf("HSM: %w: %w", problem.ErrUnavailable, err)
		}
		known := map[string]bool{}
		for _, c := range got {
			known[c.ID] = true
		}
		var unknown []string
		for _, id := range ids {
			if !known[id] {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("nodes unknown to HSM: %s", strings.Join(unknown, ","))
		}
		all = append(all, got...)
	}
	for _, q := range []struct {
		key   string
		names []string
	}{{"group", bs.NodeGroups}, {"role", bs.NodeRolesGroups}} {
		for _, n := range q.names {
			got, err := s.hsm.Components(ctx, url.Values{q.key: {n}, "type": {"Node"}})
			if err != nil && !unknownName(err) {
				return nil, fmt.Errorf("HSM %s %s: %w: %w", q.key, n, problem.ErrUnavailable, err)
			}
			if len(got) == 0 {
				return nil, fmt.Errorf("%s %q holds no node in HSM", q.key, n)
			}
			all = append(all, got...)
		}
	}
	arch := bs.Arch
	if arch == "" || arch == "Unknown" {
		arch = "X86"
	}
	return slices.DeleteFunc(all, func(c hsm.Component) bool {
		a := c.Arch
		if a == "" || a == "UNKNOWN" {
			a = "X86"
		}
		return a != arch
	}), nil
}

// applyLimit narrows nodes to a session's limit: comma-separated xnames,
// groups or roles, OR'd, "&" in front for AND, "!" for NOT; "" and "*" are
// no limit.
func (s *Service) applyLimit(ctx context.Context, nodes map[string]target, limit string) error {
	if limit == "" || limit == "*" {
		return nil
	}
	set := map[string]bool{}
	for _, item := range strings.Split(limit, ",") {
		op := byte('|')
		if item != "" && (item[0] == '&' || item[0] == '!') {
			op, item = item[0], item[1:]
		}
		members, err := s.limitMembers(ctx, item, nodes)
		if err != nil {
			return err
		}
		switch op {
		case '|':
			for m := range members {
				set[m] = true
			}
		case '&':
			for m := range set {
				if !members[m] {
					delete(set, m)
				}
			}
		case '!':
			for m := range members {
				delete(set, m)
			}
		}
	}
	for id := range nodes {
		if !set[id] {
			delete(nodes, id)
		}
	}
	return nil
}

func (s *Service) limitMembers(ctx context.Context, item string, nodes map[string]target) (map[string]bool, error) {
	out := map[string]bool{}
	switch {
	case item == "all" || item == "*":
		for id := range nodes {
			out[id] = true
		}
		return out, nil
	case xname.Valid(item):
		out[xname.Normalize(item)] = true
		return out, nil
	}
	for _, key := range []string{"group", "role"} {
		got, err := s.hsm.Components(ctx, url.Values{key: {item}, "type": {"Node"}})
		if err != nil && !unknownName(err) {
			return nil, fmt.Errorf("limit %s: HSM: %w: %w", item, problem.ErrUnavailable, err)
		}
		for _, c := range got {
			out[c.ID] = true
		}
	}
	return out, nil
}

func problemIsNotFound(err error) bool { return errors.Is(err, problem.ErrNotFound) }

// unknownName reports HSM's answer to a group it does not have (404) or a
// role outside its vocabulary (400): both select no node.
func unknownName(err error) bool {
	return errors.Is(err, problem.ErrNotFound) || errors.Is(err, problem.ErrInvalid)
}

// splitList splits a comma-separated list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// trimOp drops a limit entry's & or ! prefix.
func trimOp(s string) string { return strings.TrimLeft(s, "&!") }
