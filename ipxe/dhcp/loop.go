package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// The read loop takes packets off the socket readBatch at a time (one
// recvmmsg), parses each once and decides it in place: the decisions are
// serialised by the lease table anyway, so a goroutine per packet (as
// server4 starts) only adds scheduling and queues in memory. Replies that
// change no lease leave at the end of the batch (one sendmmsg); the others
// after their group commit, sent by the writer.
const (
	readBatch = 64
	// maxDatagram is the largest packet read whole (server4's buffer);
	// longer ones are counted as malformed.
	maxDatagram = 4096
)

// Overload control: when commits fall behind, changes wait in memory for
// the writer. Past maxBacklogDiscover of them new DISCOVERs are dropped (a
// REQUEST finishes a lease whose OFFER was already paid for), past
// maxBacklog every packet is: its reply would come after the client gave
// up. Clients retransmit. When the read loop itself falls behind, the
// socket's receive buffer (readBuffer) bounds the queue and the kernel drops.
const (
	maxBacklogDiscover = 256
	maxBacklog         = 1024
)

// read serves packets until the socket is closed.
func (s *Server) read(ctx context.Context) error {
	msgs := make([]ipv4.Message, readBatch)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, maxDatagram)}
	}
	var out outbound
	for {
		n, err := s.pc.ReadBatch(msgs, 0)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("dhcp read: %w", err)
		}
		out.reset()
		for i := range msgs[:n] {
			if r := s.packet(&msgs[i]); r != nil {
				out.add(r)
			}
		}
		s.send(&out)
	}
}

// packet parses and decides one packet; it returns the reply to send at
// once (nil: none, or one queued behind its commit).
func (s *Server) packet(pm *ipv4.Message) *datagram {
	peer, _ := pm.Addr.(*net.UDPAddr)
	if pm.Flags&unix.MSG_TRUNC != 0 {
		s.drop(DropMalformed, "from", peer.String(), "err", "longer than 4096 bytes")
		return nil
	}
	m, err := parse(pm.Buffers[0][:pm.N])
	if err != nil {
		s.drop(DropMalformed, "from", peer.String(), "err", err)
		return nil
	}
	t := m.MessageType()
	s.m.packet(t).Inc()
	s.mu.Lock()
	if backlog := len(s.pending); backlog >= maxBacklog || backlog >= maxBacklogDiscover && t == dhcpv4.MessageTypeDiscover {
		s.mu.Unlock()
		s.drop(DropOverload, "mac", m.ClientHWAddr.String(), "type", t.String())
		return nil
	}
	res := s.h.Handle(m)
	var reply *datagram
	if res.Reply != nil {
		reply = s.reply(peer, m, res.Reply)
	}
	if res.Change != nil {
		s.queue(res.Change, reply, nil)
		reply = nil
	}
	s.mu.Unlock()
	if res.Drop != "" {
		s.drop(res.Drop, "mac", m.ClientHWAddr.String(), "type", t.String())
	}
	return reply
}

// datagram is a reply ready to send.
type datagram struct {
	b   []byte
	dst *net.UDPAddr
	t   dhcpv4.MessageType
}

// reply is the datagram answering req from peer.
func (s *Server) reply(peer *net.UDPAddr, req, reply *dhcpv4.DHCPv4) *datagram {
	dst := Destination(req, reply, s.cfg.RelayPort, s.cfg.ClientPort)
	if s.cfg.ReplyToPeer && peer != nil {
		dst = peer
	}
	return &datagram{b: encode(req, reply), dst: dst, t: reply.MessageType()}
}

// outbound is the replies one sendmmsg takes.
type outbound struct {
	msgs  []ipv4.Message
	types []dhcpv4.MessageType
}

func (o *outbound) reset() { o.msgs, o.types = o.msgs[:0], o.types[:0] }

func (o *outbound) add(d *datagram) {
	o.msgs = append(o.msgs, ipv4.Message{Buffers: [][]byte{d.b}, Addr: d.dst})
	o.types = append(o.types, d.t)
}

// send writes the replies in o, in as few system calls as the kernel takes.
func (s *Server) send(o *outbound) {
	for i := 0; i < len(o.msgs); {
		n, err := s.pc.WriteBatch(o.msgs[i:], 0)
		if err != nil || n == 0 {
			// The first datagram failed; count it and go on with the rest.
			s.m.sendErrors.Inc()
			s.cfg.Log.Debug("dhcp_send_failed", "to", o.msgs[i].Addr.String(), "err", err)
			i++
			continue
		}
		for _, t := range o.types[i : i+n] {
			s.m.reply(t).Inc()
		}
		i += n
	}
}
