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
// after the batch's commit, which the read loop makes itself (commit).
const (
	readBatch = 64
	// maxDatagram is the largest packet read whole (server4's buffer);
	// longer ones are counted as malformed.
	maxDatagram = 4096
)

// Overload control: the read loop commits each batch's changes before it
// reads on, so packets that arrive meanwhile wait in the socket, whose
// receive buffer (readBuffer) bounds the queue; past it the kernel drops.
// Changes queued outside the loop (Expire ending thousands of leases at
// once) wait in memory for the writer: past maxBacklogDiscover of them new
// DISCOVERs are dropped (a REQUEST finishes a lease whose OFFER was already
// paid for), past maxBacklog every packet is: its reply would come after the
// client gave up. Clients retransmit.
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
		for i := range msgs[:n] {
			if r := s.packet(&msgs[i]); r != nil {
				out.add(r)
			}
		}
		s.send(&out) // replies that changed nothing (OFFERs) do not wait
		s.commit(ctx)
	}
}

// packet parses and decides one packet; it returns the reply to send at
// once (nil: none, or one queued behind its commit). Only the read loop
// calls it (s.rq is its request).
func (s *Server) packet(pm *ipv4.Message) *datagram {
	peer, _ := pm.Addr.(*net.UDPAddr)
	if pm.Flags&unix.MSG_TRUNC != 0 {
		s.drop(DropMalformed, "from", peer.String(), "err", "longer than 4096 bytes")
		return nil
	}
	req := s.rq
	if err := req.parse(pm.Buffers[0][:pm.N]); err != nil {
		s.drop(DropMalformed, "from", peer.String(), "err", err)
		return nil
	}
	t := req.msgType()
	s.m.packet(t).Inc()
	s.mu.Lock()
	if backlog := len(s.pending); backlog >= maxBacklog || backlog >= maxBacklogDiscover && t == dhcpv4.MessageTypeDiscover {
		s.mu.Unlock()
		s.drop(DropOverload, "mac", req.mac(), "type", t)
		return nil
	}
	o := s.h.handle(req)
	var reply *datagram
	if o.reply {
		reply = s.reply(peer, &o.ans)
	}
	if o.change != nil {
		s.queue(o.change, reply, nil)
		reply = nil
	}
	s.mu.Unlock()
	if o.drop != "" {
		s.drop(o.drop, "mac", req.mac(), "type", t)
	}
	return reply
}

// datagram is a reply ready to send. Datagrams are pooled (Server.dgrams):
// send returns them once the kernel has them.
type datagram struct {
	b    []byte
	dst  *net.UDPAddr
	t    dhcpv4.MessageType
	addr net.UDPAddr // dst, unless the reply goes to the packet's source
	ip   [4]byte     // addr.IP
	bufs [1][]byte   // b, as ipv4.Message takes it
}

func (s *Server) datagram() *datagram {
	if d, ok := s.dgrams.Get().(*datagram); ok {
		return d
	}
	d := &datagram{b: make([]byte, 0, minMessage)}
	d.addr.IP = d.ip[:]
	return d
}

func (s *Server) release(d *datagram) {
	d.dst, d.bufs[0] = nil, nil
	s.dgrams.Put(d)
}

// reply is the datagram answering a (the request being handled) from
// peer: appendAnswer's bytes, or, when those do not fit the client's
// limit, insomniacslk's encoding shed and overloaded to fit (encode).
func (s *Server) reply(peer *net.UDPAddr, a *answer) *datagram {
	d := s.datagram()
	b, ok := s.h.appendAnswer(d.b[:0], a)
	if !ok {
		b = encode(s.h.message(a), a.req.maxMessage())
	}
	d.b, d.t = b, a.t
	if s.cfg.ReplyToPeer && peer != nil {
		d.dst = peer
	} else {
		d.dst = &d.addr
		destination(a.req, a.t, s.cfg.RelayPort, s.cfg.ClientPort, d.dst)
	}
	return d
}

// outbound is the replies one sendmmsg takes.
type outbound struct {
	msgs []ipv4.Message
	dgs  []*datagram
}

func (o *outbound) add(d *datagram) {
	d.bufs[0] = d.b
	o.msgs = append(o.msgs, ipv4.Message{Buffers: d.bufs[:], Addr: d.dst})
	o.dgs = append(o.dgs, d)
}

// send writes the replies in o, in as few system calls as the kernel
// takes, releases their datagrams and empties o.
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
		for _, d := range o.dgs[i : i+n] {
			s.m.reply(d.t).Inc()
		}
		i += n
	}
	for i, d := range o.dgs {
		s.release(d)
		o.dgs[i] = nil
	}
	clear(o.msgs)
	o.msgs, o.dgs = o.msgs[:0], o.dgs[:0]
}
