// Package fuzz holds black-box fuzz targets for what an attacker reaches on
// every daemon of the suite (issue 18): each FuzzXxx starts one real daemon
// (SQLite in t.TempDir(), HTTP on loopback) and sends it generated requests
// on one family of routes, their bodies and query strings. Whatever the
// input, no request may be answered 5xx or crash the daemon, and a request
// that is refused (3xx, 4xx), or that only reads, must leave the daemon's
// state as its GET dumps show it byte for byte unchanged.
//
// `go test ./integration/fuzz` runs the seeds (valid bodies from the
// daemons' tests and the hostile inputs of issue 18) as ordinary tests;
// `make fuzz` fuzzes each target for FUZZTIME (10s by default).
//
// The daemons are started so that nothing leaves the machine: BMC walks,
// hbtd's HSM reports and every other outgoing request go through a client
// that dials loopback addresses only, and targets whose routes store URLs
// (SCN subscriptions) run in daemons that never produce anything to
// deliver.
package fuzz
