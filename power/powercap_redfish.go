package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// powerRes is a chassis Power resource as a power-cap task reads it: the
// PowerControl entries kept as decoded JSON (a patch sends them back
// whole, changed), and which of them belong to the node.
type powerRes struct {
	uri  string
	raw  []map[string]any
	mine []int // indexes into raw of the node's controls
}

// powerURI finds the Power resource of the node's chassis: the system's
// Links.Chassis, then the chassis's Power link. It is cached per node.
func (s *Service) powerURI(ctx context.Context, t Target) (string, error) {
	s.targets.mu.Lock()
	uri, ok := s.targets.power[t.Resource+"@"+t.Base]
	s.targets.mu.Unlock()
	if ok {
		return uri, nil
	}
	var sys struct {
		Links struct {
			Chassis []struct {
				ID string `json:"@odata.id"`
			} `json:"Chassis"`
		} `json:"Links"`
	}
	if err := s.getJSON(ctx, t, t.Resource, &sys); err != nil {
		return "", err
	}
	if len(sys.Links.Chassis) == 0 {
		return "", errors.New("Missing Power Cap URI")
	}
	var ch struct {
		Power struct {
			ID string `json:"@odata.id"`
		} `json:"Power"`
	}
	if err := s.getJSON(ctx, t, sys.Links.Chassis[0].ID, &ch); err != nil {
		return "", err
	}
	if ch.Power.ID == "" {
		return "", errors.New("Missing Power Cap URI")
	}
	s.targets.mu.Lock()
	s.targets.power[t.Resource+"@"+t.Base] = ch.Power.ID
	s.targets.mu.Unlock()
	return ch.Power.ID, nil
}

func (s *Service) getJSON(ctx context.Context, t Target, uri string, v any) error {
	b, err := s.bmc.do(ctx, t, "GET", uri, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", uri, err)
	}
	return nil
}

func (s *Service) readPower(ctx context.Context, t Target) (*powerRes, error) {
	uri, err := s.powerURI(ctx, t)
	if err != nil {
		return nil, err
	}
	var body struct {
		PowerControl []map[string]any `json:"PowerControl"`
	}
	if err := s.getJSON(ctx, t, uri, &body); err != nil {
		return nil, err
	}
	p := &powerRes{uri: uri, raw: body.PowerControl}
	for i, c := range p.raw {
		if related(c, t.Resource) {
			p.mine = append(p.mine, i)
		}
	}
	if len(p.mine) == 0 {
		for i := range p.raw {
			p.mine = append(p.mine, i)
		}
	}
	return p, nil
}

// related reports whether a PowerControl's RelatedItem names the system.
func related(c map[string]any, system string) bool {
	items, _ := c["RelatedItem"].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["@odata.id"] == system {
			return true
		}
	}
	return false
}

// num reads a JSON number at path in m.
func num(m map[string]any, path ...string) *int {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	f, ok := cur.(float64)
	if !ok || math.IsNaN(f) {
		return nil
	}
	n := int(f)
	return &n
}

// limits are a control's minimum and maximum: Cray's Oem PowerLimit, else
// 0 and PowerCapacityWatts.
func limits(c map[string]any) (lo, hi *int) {
	lo, hi = num(c, "Oem", "Cray", "PowerLimit", "Min"), num(c, "Oem", "Cray", "PowerLimit", "Max")
	if hi == nil {
		hi = num(c, "PowerCapacityWatts")
	}
	return lo, hi
}

// report is the task's view of the node's controls.
func (p *powerRes) report() (*CapLimits, []CapControl) {
	lim := &CapLimits{}
	out := []CapControl{}
	for _, i := range p.mine {
		c := p.raw[i]
		lo, hi := limits(c)
		name, _ := c["Name"].(string)
		out = append(out, CapControl{Name: name, Current: num(c, "PowerLimit", "LimitInWatts"), Max: hi, Min: lo})
		if lim.HostLimitMax == nil {
			lim.HostLimitMax, lim.HostLimitMin = hi, lo
			lim.PowerupPower = num(c, "Oem", "Cray", "PowerResetWatts")
			lim.supply = num(c, "PowerCapacityWatts")
		}
	}
	return lim, out
}

// apply sets the asked controls in raw, checking their limits; it returns
// one error per setting not applied.
func (p *powerRes) apply(set []CapSetting) []string {
	var errs []string
	for _, st := range set {
		idx := -1
		for _, i := range p.mine {
			if name, _ := p.raw[i]["Name"].(string); name == st.Name {
				idx = i
				break
			}
		}
		if idx < 0 {
			errs = append(errs, fmt.Sprintf("Skipping undefined control '%s'", st.Name))
			continue
		}
		c := p.raw[idx]
		lo, hi := limits(c)
		switch {
		case lo != nil && st.Value < *lo:
			errs = append(errs, fmt.Sprintf("Control (%s) value (%d) is less than minimum (%d)", st.Name, st.Value, *lo))
			continue
		case hi != nil && st.Value > *hi:
			errs = append(errs, fmt.Sprintf("Control (%s) value (%d) is more than maximum (%d)", st.Name, st.Value, *hi))
			continue
		}
		pl, _ := c["PowerLimit"].(map[string]any)
		if pl == nil {
			pl = map[string]any{}
			c["PowerLimit"] = pl
		}
		pl["LimitInWatts"] = st.Value
	}
	return errs
}
