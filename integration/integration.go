// Package integration holds whole-suite tests: several daemons of the suite run
// in one test process and talk to each other over HTTP and the bus exactly as
// they do when deployed, with nothing faked but the network (an in-memory
// transport, so testing/synctest can drive time).
package integration
