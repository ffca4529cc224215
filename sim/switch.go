package sim

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/hmsuite/hms/internal/snmpsim"
)

// switchPorts is the number of ports of a simulated management switch.
const switchPorts = 48

// mgmtSwitch is one simulated management switch (snmpsim, v2c community
// public or one SNMPv3 user): its forwarding table holds the MAC of each running BMC on the port SLS's
// connector names, as a real switch learns it from the BMC's first packet.
type mgmtSwitch struct {
	agent *snmpsim.Agent
	conn  net.PacketConn

	mu   sync.Mutex
	macs map[int]learned // by port
}

// learned is a MAC on a port and the device that put it there.
type learned struct {
	mac   string
	owner *device
}

// listenSwitch binds a switch answering v3 user u only, or v2c community
// public when u has no name.
func listenSwitch(addr string, u snmpsim.User) (*mgmtSwitch, error) {
	cfg := snmpsim.Config{Community: "public"}
	if u.Name != "" {
		cfg = snmpsim.Config{Users: []snmpsim.User{u}}
	}
	agent, err := snmpsim.NewAgent(cfg) // each its own engine ID, as real switches
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", addr, err)
	}
	conn, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return nil, fmt.Errorf("switch listen on %s: %w", addr, err)
	}
	w := &mgmtSwitch{agent: agent, conn: conn, macs: map[int]learned{}}
	if err := w.agent.Set(w.table()); err != nil {
		conn.Close()
		return nil, err
	}
	return w, nil
}

func (w *mgmtSwitch) run(ctx context.Context) error { return w.agent.Serve(ctx, w.conn) }

// learn puts the MAC of owner on port.
func (w *mgmtSwitch) learn(port int, mac string, owner *device) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.macs[port] = learned{mac: mac, owner: owner}
	_ = w.agent.Set(w.table()) // the table is built here and always valid
}

// forget takes owner's MAC off port, unless another device (the same
// xname added again) has learned the port since.
func (w *mgmtSwitch) forget(port int, owner *device) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.macs[port].owner != owner {
		return
	}
	delete(w.macs, port)
	_ = w.agent.Set(w.table())
}

// table is what the agent serves; w.mu is held (or w not yet shared).
func (w *mgmtSwitch) table() snmpsim.Switch {
	sw := snmpsim.Switch{}
	for p := 1; p <= switchPorts; p++ {
		sw.Ports = append(sw.Ports, snmpsim.Port{Bridge: p, IfIndex: p, Name: fmt.Sprintf("ethernet1/1/%d", p)})
		if l, ok := w.macs[p]; ok {
			sw.FDB = append(sw.FDB, snmpsim.Entry{MAC: l.mac, Bridge: p, VLAN: 4})
		}
	}
	return sw
}
