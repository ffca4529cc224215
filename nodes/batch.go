package nodes

import (
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// batch is the services' writes of one apply, by kind of write, so that
// each service gets them in as few requests as it allows. Every write
// names the resources (owners) its failure is reported on.
type batch struct {
	// deletes, run first, in this order
	bssDelete    []ownedHosts
	groupDelete  []ownedName
	memberRemove []ownedMember
	rfeDelete    []ownedName
	ethDelete    []ownedName
	compDelete   []ownedName
	slsDelete    []ownedName
	// creates and updates, run after, in this order
	slsPut      [][]ownedHW // by depth: cabinets, chassis, slots, BMCs, nodes
	compCreate  []ownedComp
	compRole    []ownedComp
	compForce   []ownedComp
	ethCreate   []ownedEth
	ethPatch    []ownedEth
	rfeCreate   []ownedRFE
	rfePatch    []ownedRFE
	groupCreate []ownedGroup
	groupPatch  []ownedGroup
	memberAdd   []ownedMember
	bssPut      []ownedHosts
}

type ownedName struct {
	owner Key
	name  string
}

type ownedHW struct {
	owner Key
	hw    sls.Hardware
}

type ownedComp struct {
	owner Key
	comp  hsm.Component
}

type ownedEth struct {
	owner Key
	eth   hsm.EthernetInterface
}

type ownedRFE struct {
	owner Key
	rfe   hsm.RedfishEndpoint
}

type ownedGroup struct {
	owner Key
	group hsm.Group
}

type ownedMember struct {
	owner     Key
	label, id string
}

// ownedHosts is one BSS write for several nodes (a profile's).
type ownedHosts struct {
	owners []Key
	bp     bss.BootParams
}
