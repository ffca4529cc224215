// Package layout is the System Layout Service (SLS): the intended layout of a
// cluster - cabinets, chassis, slots, BMCs, nodes, management switches and the
// cabling between switch ports and BMCs - and its networks.
//
// The database (a SQLite file, or PostgreSQL) is the source of truth. The Store keeps an in-memory index
// of all hardware next to it (by xname, parent, type and every scalar extra
// property), updated after each committed write, so that reads and searches never
// scan the table: a 100,000-node system answers GET /hardware/{xname} and
// /search/hardware from memory. The daemon must therefore be the only writer of
// its database (sqldb locks it).
//
// Wire format: the HMS SLS API, base path /v1. Hardware fields Parent, Children,
// Type, TypeString, LastUpdated and LastUpdatedTime are derived by the server;
// ExtraProperties is kept as the JSON object the client sent (unknown fields
// included), after checking the types of the fields SLS knows for that hardware
// type.
package layout

import "github.com/hmsuite/hms/layout/sls"

// The wire types live in the leaf package layout/sls, which clients import
// without linking this server; the server names them here.
type (
	Class          = sls.Class
	Hardware       = sls.Hardware
	NodeProps      = sls.NodeProps
	SwitchProps    = sls.SwitchProps
	ConnectorProps = sls.ConnectorProps
	BMCProps       = sls.BMCProps
	CabinetProps   = sls.CabinetProps
	CabinetNetwork = sls.CabinetNetwork
	ModuleProps    = sls.ModuleProps
	Network        = sls.Network
	Version        = sls.Version
	Dump           = sls.Dump
	HardwareSearch = sls.HardwareSearch
	NetworkProps   = sls.NetworkProps
	Subnet         = sls.Subnet
	IPReservation  = sls.IPReservation
)

// Base is the path prefix of the SLS API.
const Base = sls.Base

// The hardware classes.
const (
	River    = sls.River
	Mountain = sls.Mountain
	Hill     = sls.Hill
)

// ParseClass returns the canonical Class for s, compared without regard to
// case; the error carries the shipped detail of the route that reports it.
func ParseClass(s string) (Class, error) {
	c, err := sls.ParseClass(s)
	return c, mark(err, failClass, s)
}
