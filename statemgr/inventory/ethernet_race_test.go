package inventory

import (
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestWalkClaimsInterfaceDHCPCreatesMeanwhile: DHCP (bss) writes a node's
// MAC as unknown (no ComponentID) while HSM's walk of the node's BMC stores
// the same MAC with its node. Whichever lands first, the interface ends up
// naming the node; it used to stay unnamed when DHCP's POST fell between the
// walk's read and its create, and bss then never named the node (the node
// lost in the 1,000-node boot storm).
func TestWalkClaimsInterfaceDHCPCreatesMeanwhile(t *testing.T) {
	pg.EachDB(t, testWalkClaimsInterfaceDHCPCreatesMeanwhile)
}

func testWalkClaimsInterfaceDHCPCreatesMeanwhile(t *testing.T, db testpeer.DB) {
	s, _ := newTestStoreOn(t, db)
	d := NewDiscovery(s, nil, DiscoveryConfig{})
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		mac := fmt.Sprintf("02:00:00:00:%02x:%02x", i>>8, i&0xff)
		node := fmt.Sprintf("x%dc0s1b0n0", 3000+i)
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = s.eth.Create(t.Context(), hsm.EthernetInterface{MACAddress: mac, Description: "seen by DHCP"})
		}()
		go func() {
			defer wg.Done()
			if err := claim(t, d, hsm.EthernetInterface{MACAddress: mac, ComponentID: node}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range n {
		mac := fmt.Sprintf("02:00:00:00:%02x:%02x", i>>8, i&0xff)
		ei, err := s.eth.Get(t.Context(), mac)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("x%dc0s1b0n0", 3000+i); ei.ComponentID != want {
			t.Errorf("%s: ComponentID %q, want %q", mac, ei.ComponentID, want)
		}
	}
}

// TestWalkLeavesNamedInterface: a walk names only unnamed interfaces; one an
// administrator (or the nodes daemon) pointed at a component stays so.
func TestWalkLeavesNamedInterface(t *testing.T) { pg.EachDB(t, testWalkLeavesNamedInterface) }

func testWalkLeavesNamedInterface(t *testing.T, db testpeer.DB) {
	s, _ := newTestStoreOn(t, db)
	d := NewDiscovery(s, nil, DiscoveryConfig{})
	const mac = "02:00:00:00:aa:01"
	if _, err := s.eth.Create(t.Context(), hsm.EthernetInterface{MACAddress: mac, ComponentID: "x3000c0s1b0n0"}); err != nil {
		t.Fatal(err)
	}
	if err := claim(t, d, hsm.EthernetInterface{MACAddress: mac, ComponentID: "x3000c0s2b0n0"}); err != nil {
		t.Fatal(err)
	}
	ei, err := s.eth.Get(t.Context(), mac)
	if err != nil {
		t.Fatal(err)
	}
	if ei.ComponentID != "x3000c0s1b0n0" {
		t.Errorf("ComponentID %q after the walk, want the administrator's x3000c0s1b0n0", ei.ComponentID)
	}
}

// claim stores an interface as a walk does, in a transaction of its own.
func claim(t *testing.T, d *Discovery, ei hsm.EthernetInterface) error {
	return d.store.db.GroupTx(t.Context(), func(tx *sql.Tx) error { return d.storeEthernet(t.Context(), stmtTx{tx, d.store.db}, ei) })
}
