package layout

import (
	"bytes"
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
	slsclient "github.com/hmsuite/hms/layout/client"
)

func TestClient(t *testing.T) { pg.EachDB(t, testClient) }

func testClient(t *testing.T, db testpeer.DB) {
	e := newTestEnvOn(t, db(t))
	c := slsclient.New(e.url+"/", nil)
	ctx := t.Context()
	if err := c.Load(ctx, bytes.NewReader(readTestdata(t, "river.json"))); err != nil {
		t.Fatalf("Load: %v", err)
	}

	t.Run("get node props", func(t *testing.T) {
		h, err := c.GetHardware(ctx, "x3000c0s2b0n0")
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Node()
		want := NodeProps{NID: 2, Role: "Management", SubRole: "Worker", Aliases: []string{"ncn-w001"}}
		if err != nil || !cmp.Equal(want, n) {
			t.Errorf("Node() = %+v, %v; want %+v", n, err, want)
		}
	})
	t.Run("connector by port", func(t *testing.T) {
		hs, err := c.SearchHardware(ctx, HardwareSearch{Parent: "x3000c0w15", Type: "comptype_mgmt_switch_connector",
			Extra: map[string]string{"VendorName": "ethernet1/1/2"}})
		if err != nil || len(hs) != 1 {
			t.Fatalf("SearchHardware = %v, %v; want one connector", hs, err)
		}
		p, err := hs[0].Connector()
		if err != nil || !cmp.Equal(p.NodeNics, []string{"x3000c0s10b0"}) {
			t.Errorf("connector %s NodeNics = %v, %v; want [x3000c0s10b0]", hs[0].Xname, p.NodeNics, err)
		}
	})
	t.Run("no match is empty, not an error", func(t *testing.T) {
		hs, err := c.SearchHardware(ctx, HardwareSearch{Class: "Mountain"})
		if err != nil || len(hs) != 0 {
			t.Errorf("SearchHardware = %v, %v; want nothing", hs, err)
		}
	})
	t.Run("bad search is invalid", func(t *testing.T) {
		_, err := c.SearchHardware(ctx, HardwareSearch{Type: "bogus"})
		if !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
	})
	t.Run("missing is not found", func(t *testing.T) {
		_, err := c.GetHardware(ctx, "x9c0")
		if !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("create put delete", func(t *testing.T) {
		h, err := c.CreateHardware(ctx, Hardware{Xname: "x3000c0s17b0n0", Class: River, ExtraProperties: []byte(`{"NID":17}`)})
		if err != nil || h.Parent != "x3000c0s17b0" || h.TypeString != "Node" {
			t.Fatalf("CreateHardware = %+v, %v", h, err)
		}
		if _, err := c.CreateHardware(ctx, h); !errors.Is(err, problem.ErrConflict) {
			t.Errorf("second CreateHardware err = %v, want ErrConflict", err)
		}
		if h, err = c.PutHardware(ctx, Hardware{Xname: "x3000c0s17b0n0", Class: Mountain}); err != nil || h.Class != Mountain {
			t.Errorf("PutHardware = %+v, %v", h, err)
		}
		if err := c.DeleteHardware(ctx, "x3000c0s17b0n0"); err != nil {
			t.Errorf("DeleteHardware: %v", err)
		}
	})
	t.Run("networks", func(t *testing.T) {
		ns, err := c.Networks(ctx)
		if err != nil || len(ns) != 2 {
			t.Fatalf("Networks = %v, %v", ns, err)
		}
		found, err := c.SearchNetworks(ctx, url.Values{"ip_address": {"10.254.1.20"}})
		if err != nil || len(found) != 1 || found[0].Name != "HMN" {
			t.Errorf("SearchNetworks = %v, %v; want HMN", found, err)
		}
		p, err := found[0].Props()
		if err != nil || len(p.Subnets) != 1 || p.Subnets[0].DHCPStart != "10.254.1.10" {
			t.Errorf("Props = %+v, %v", p, err)
		}
		n, err := c.PutNetwork(ctx, Network{Name: "CAN", Type: "ethernet", IPRanges: []string{"10.102.0.0/24"}})
		if err != nil || n.Name != "CAN" {
			t.Errorf("PutNetwork = %+v, %v", n, err)
		}
		if err := c.DeleteNetwork(ctx, "CAN"); err != nil {
			t.Errorf("DeleteNetwork: %v", err)
		}
		if _, err := c.GetNetwork(ctx, "CAN"); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("GetNetwork of a deleted network: %v, want ErrNotFound", err)
		}
	})
	t.Run("version and dump", func(t *testing.T) {
		v, err := c.Version(ctx)
		if err != nil || v.Counter != e.store.Version().Counter {
			t.Errorf("Version = %+v, %v", v, err)
		}
		d, err := c.Dump(ctx)
		if err != nil || len(d.Hardware) != 68 || len(d.Networks) != 2 {
			t.Errorf("Dump has %d hardware, %d networks (%v); want 68 and 2", len(d.Hardware), len(d.Networks), err)
		}
	})
	t.Run("unreachable is unavailable", func(t *testing.T) {
		_, err := slsclient.New("http://127.0.0.1:1", nil).Version(ctx)
		if !errors.Is(err, problem.ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
	})
}
