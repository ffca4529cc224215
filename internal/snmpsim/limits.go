package snmpsim

import (
	"math"

	"github.com/gosnmp/gosnmp"
)

// The agent keeps its answers within the limits as net-snmp's snmpd
// (5.9.3, Debian 12's) does, measured against it, rather than as RFC 3416
// 4.2 words them (tooBig for an answer that does not fit, a GETBULK answer
// cut short to fit): snmpd does neither, and the switches HMS walks run
// agents built on it.
//
//   - A GETBULK answers at most maxBulkResponses repetitions in all: the
//     repetitions are cut to maxBulkResponses / the number of repeaters
//     (none with more than 100 repeaters), the non-repeaters answered
//     besides (snmpd's maxGetbulkResponses, 100 by default).
//   - A v3 answer longer than the request's msgMaxSize (484 at least, RFC
//     3412 6; gosnmp asks 65,535, net-snmp 65,507) is not sent: a GETBULK
//     gets genErr, error-index 0, with the request's bindings; any other
//     request gets no answer (snmpd logs "send response: Too long").
//   - An answer longer than one UDP datagram is not sent (snmpd's sendto
//     fails), v2c or v3.
const (
	maxBulkResponses = 100
	maxUDP           = 65507 // 65,535 less the IPv4 and UDP headers
	noMaxSize        = math.MaxInt
)

// bounded encodes resp, the answer to req, within msgMaxSize (noMaxSize
// for v2c) and one UDP datagram, as snmpd does (above); false: no answer.
func bounded(resp, req *gosnmp.SnmpPacket, msgMaxSize int, enc func(*gosnmp.SnmpPacket) ([]byte, bool)) ([]byte, bool) {
	out, ok := enc(resp)
	if ok && len(out) > msgMaxSize && req.PDUType == gosnmp.GetBulkRequest {
		resp.Error, resp.ErrorIndex, resp.Variables = gosnmp.GenErr, 0, req.Variables
		out, ok = enc(resp)
	}
	if !ok || len(out) > min(msgMaxSize, maxUDP) {
		return nil, false
	}
	return out, true
}
