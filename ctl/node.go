package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/layout/sls"
)

// nodeAdd is a checked `hms node add`.
type nodeAdd struct {
	nodes          []string
	nid            int
	role, subRole  string
	class          sls.Class
	port, portName string // the switch port the nodes' BMC is cabled to
}

func defineNodeAdd(fs *flag.FlagSet) execFunc {
	nid := fs.Int("nid", 0, "`NID` of the first node; the next ones get the following NIDs (required)")
	role := fs.String("role", "Compute", "HSM `ROLE` of the nodes")
	subRole := fs.String("subrole", "", "HSM `SUBROLE` of the nodes")
	class := fs.String("class", "River", "hardware `CLASS`: River, Mountain or Hill")
	port := fs.String("switch-port", "", "`XNAME` of the management switch port (xXcCwWjJ) the nodes' BMC is cabled to, for discovery")
	portName := fs.String("vendor-port", "", "the switch's `NAME` for that port, such as ethernet1/1/36")
	return func(ctx context.Context, s *session, args []string) error {
		a := nodeAdd{nid: *nid, role: *role, subRole: *subRole, port: *port, portName: *portName}
		if err := a.check(args, *class); err != nil {
			return err
		}
		return a.run(ctx, s)
	}
}

// check validates everything before anything is written.
func (a *nodeAdd) check(args []string, class string) error {
	var err error
	if a.class, err = sls.ParseClass(class); err != nil {
		return usagef("node add: -class %q: want River, Mountain or Hill", class)
	}
	if a.nid <= 0 {
		return usagef("node add: -nid: want the first node's NID, 1 or more")
	}
	if a.role == "" {
		return usagef("node add: -role must not be empty")
	}
	for _, arg := range args {
		x, err := xname.Parse(arg)
		if err != nil || x.Type() != xname.Node {
			return usagef("node add: %q is not a node xname (such as x3000c0s1b0n0)", arg)
		}
		if slices.Contains(a.nodes, x.String()) {
			return usagef("node add: %s named twice", x)
		}
		a.nodes = append(a.nodes, x.String())
	}
	if a.port == "" {
		if a.portName != "" {
			return usagef("node add: -vendor-port needs -switch-port")
		}
		return nil
	}
	if xname.TypeOf(a.port) != xname.MgmtSwitchConnector {
		return usagef("node add: -switch-port %q is not a switch port xname (such as x3000c0w14j36)", a.port)
	}
	a.port = xname.Normalize(a.port)
	for _, n := range a.nodes {
		if xname.Parent(n) != xname.Parent(a.nodes[0]) {
			return usagef("node add: -switch-port: %s and %s have different BMCs; add them one BMC at a time", a.nodes[0], n)
		}
	}
	return nil
}

func (a *nodeAdd) run(ctx context.Context, s *session) error {
	lc := s.sls()
	check := append([]string(nil), a.nodes...)
	if a.port != "" {
		check = append(check, a.port)
	}
	for _, x := range check {
		_, err := lc.GetHardware(ctx, x)
		if err == nil {
			return failf("node add: %s is already in the layout (%w); nothing was added", x, problem.ErrConflict)
		}
		if !errors.Is(err, problem.ErrNotFound) {
			return err
		}
	}
	for i, n := range a.nodes {
		if err := a.addBMC(ctx, s, xname.Parent(n)); err != nil {
			return err
		}
		props, _ := json.Marshal(sls.NodeProps{NID: a.nid + i, Role: a.role, SubRole: a.subRole})
		if _, err := lc.CreateHardware(ctx, sls.Hardware{Xname: n, Class: a.class, ExtraProperties: props}); err != nil {
			return err
		}
		fmt.Fprintf(s.Stdout, "added node %s (NID %d, %s)\n", n, a.nid+i, a.role)
	}
	if a.port == "" {
		return nil
	}
	props, _ := json.Marshal(sls.ConnectorProps{NodeNics: []string{xname.Parent(a.nodes[0])}, VendorName: a.portName})
	if _, err := lc.CreateHardware(ctx, sls.Hardware{Xname: a.port, Class: a.class, ExtraProperties: props}); err != nil {
		return err
	}
	fmt.Fprintf(s.Stdout, "added switch port %s -> %s\n", a.port, xname.Parent(a.nodes[0]))
	return nil
}

// addBMC adds the BMC bmc unless the layout has it.
func (a *nodeAdd) addBMC(ctx context.Context, s *session, bmc string) error {
	_, err := s.sls().GetHardware(ctx, bmc)
	if !errors.Is(err, problem.ErrNotFound) {
		return err
	}
	if _, err := s.sls().CreateHardware(ctx, sls.Hardware{Xname: bmc, Class: a.class}); err != nil {
		return err
	}
	fmt.Fprintf(s.Stdout, "added BMC %s\n", bmc)
	return nil
}

func defineNodeRemove(*flag.FlagSet) execFunc {
	return func(ctx context.Context, s *session, args []string) error {
		var names []string
		for _, arg := range args {
			if !xname.Valid(arg) {
				return usagef("node remove: %q is not an xname", arg)
			}
			names = append(names, xname.Normalize(arg))
		}
		lc := s.sls()
		for _, x := range names {
			if _, err := lc.GetHardware(ctx, x); err != nil {
				if errors.Is(err, problem.ErrNotFound) {
					return failf("node remove: %s is not in the layout; nothing was removed", x)
				}
				return err
			}
		}
		var bmcs []string
		for _, x := range names {
			// SLS removes everything below x with it.
			if err := lc.DeleteHardware(ctx, x); err != nil {
				return err
			}
			fmt.Fprintf(s.Stdout, "removed %s\n", x)
			if b := xname.Parent(x); xname.TypeOf(x) == xname.Node && !slices.Contains(bmcs, b) {
				bmcs = append(bmcs, b)
			}
		}
		for _, b := range bmcs {
			if err := removeEmptyBMC(ctx, s, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// removeEmptyBMC removes bmc and the switch ports cabled to it once no node
// is left under it.
func removeEmptyBMC(ctx context.Context, s *session, bmc string) error {
	lc := s.sls()
	h, err := lc.GetHardware(ctx, bmc)
	if errors.Is(err, problem.ErrNotFound) || (err == nil && len(h.Children) > 0) {
		return nil
	}
	if err != nil {
		return err
	}
	ports, err := lc.SearchHardware(ctx, sls.HardwareSearch{Type: xname.MgmtSwitchConnector.SLSType(), NodeNics: bmc})
	if err != nil {
		return err
	}
	if err := lc.DeleteHardware(ctx, bmc); err != nil {
		return err
	}
	fmt.Fprintf(s.Stdout, "removed BMC %s (no node left)\n", bmc)
	for _, p := range ports {
		if err := unplug(ctx, s, p, bmc); err != nil {
			return err
		}
	}
	return nil
}

// unplug takes bmc off switch port p: the port goes when bmc was all it
// was cabled to, else it keeps its other BMCs.
func unplug(ctx context.Context, s *session, p sls.Hardware, bmc string) error {
	props, err := p.Connector()
	if err != nil {
		return fmt.Errorf("switch port %s: %w", p.Xname, err)
	}
	props.NodeNics = slices.DeleteFunc(props.NodeNics, func(n string) bool { return xname.Normalize(n) == bmc })
	if len(props.NodeNics) == 0 {
		if err := s.sls().DeleteHardware(ctx, p.Xname); err != nil {
			return err
		}
		fmt.Fprintf(s.Stdout, "removed switch port %s\n", p.Xname)
		return nil
	}
	p.ExtraProperties, _ = json.Marshal(props)
	_, err = s.sls().PutHardware(ctx, p)
	return err
}
