// Package integration holds whole-suite tests: several daemons of the suite
// talk to each other over HTTP and the bus exactly as they do when deployed.
// Some run the daemons in one test process with an in-memory transport, so
// testing/synctest can drive time; the workflow tests (workflow_test.go) run
// them on loopback ports with the simulated hardware of package sim, in
// process and as the binaries built from cmd/*, killed with SIGKILL
// mid-workflow.
package integration
