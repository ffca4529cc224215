// Package snmpsimtest runs a simulated SNMP agent (snmpsim.Agent) for a
// test, on a loopback UDP port. It takes the agent as the small interface
// below rather than *snmpsim.Agent, so snmpsim's own tests may use it too
// (a package's internal tests cannot import a package that imports it).
package snmpsimtest

import (
	"context"
	"net"
	"testing"
)

// Server is what ServeLoopback runs: snmpsim.Agent.
type Server interface {
	Serve(ctx context.Context, conn net.PacketConn) error
}

// ServeLoopback serves s on a UDP port of 127.0.0.1 until the test ends,
// then fails the test if Serve returned an error, and returns the port's
// address.
func ServeLoopback(t testing.TB, s Server) *net.UDPAddr {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, conn) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return conn.LocalAddr().(*net.UDPAddr)
}
