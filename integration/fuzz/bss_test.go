package fuzz

import (
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/ipxe"
)

const bssParams = "/boot/v1/bootparameters"

// startBSS starts a bss without HSM (every node unknown, nothing read or
// sent elsewhere) with a node entry, a role tag and an image, and returns
// it as a target.
func startBSS(f *testing.F) *target {
	f.Helper()
	d, err := ipxe.StartDaemon(f.Context(), ipxe.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(f.TempDir(), "bss.db")})
	if err != nil {
		f.Fatal(err)
	}
	run(f, d)
	tg := &target{base: d.URL(), client: newClient(),
		dumps: []string{bssParams, "/boot/v1/endpoint-history", "/boot/v1/hosts"}}
	tg.mustDo(f, "PUT", bssParams, `{"hosts":["x3000c0s1b0n0"],"params":"a=1","kernel":"http://k","initrd":"http://i","cloud-init":{"meta-data":{"m":{"a":1}}}}`, 200)
	tg.mustDo(f, "PUT", bssParams, `{"hosts":["Compute","Unknown-x86_64"],"kernel":"http://k2"}`, 200)
	tg.mustDo(f, "PUT", bssParams, `{"kernel":"http://k9","params":"img=1"}`, 200)
	return tg
}

func FuzzBSSBootParameters(f *testing.F) {
	tg := startBSS(f)
	routes := []route{
		{method: "POST", path: bssParams}, {method: "PUT", path: bssParams}, {method: "PATCH", path: bssParams},
		{method: "DELETE", path: bssParams}, {method: "GET", path: bssParams, readOnly: true},
	}
	seeds := []seed{
		{route: "DELETE " + bssParams, body: `{"hosts":["Compute","x9999c0s2b0n0"]}`},
		{route: "POST " + bssParams, body: `{"hosts":["x3000c0s2b0n0"],"params":"a=1","kernel":"http://k","initrd":"http://i"}`},
		{route: "POST " + bssParams, body: `{"hosts":["x3000c0s1b0n0"],"kernel":"http://k2"}`},
		{route: "POST " + bssParams, body: `{"nids":[5],"kernel":"http://k"}`},
		{route: "POST " + bssParams, body: `{"macs":["zz"],"nids":[-1]}`},
		{route: "POST " + bssParams, body: `{}`},
		{route: "POST " + bssParams, body: `Tgarbage`},
		{route: "PUT " + bssParams, body: `{"hosts":["x3000c0s1b0n0"],"Hosts":["Default"],"kernel":"http://evil"}`},
		{route: "PUT " + bssParams, body: `{"hosts":["x3000c0s1b0n0"],"kernel":"http://k3"}x`},
		{route: "PATCH " + bssParams, body: `{"hosts":["x3000c0s1b0n0"],"params":"b=2","cloud-init":{"meta-data":{"m":{"a":null,"c":3}}}}`},
		{route: "PATCH " + bssParams, body: `{"hosts":["x1c0s0b0n0"],"params":"x"}`},
		{route: "PATCH " + bssParams, body: `{"hosts":["Global"],"cloud-init":{"meta-data":{"foo":1,"foo":2}}}`},
		{route: "PATCH " + bssParams, body: `{"hosts":["Global"],"cloud-init":{"meta-data":{"a":{"b":null}}}}`},
		{route: "DELETE " + bssParams, body: `{"hosts":["x9999c0s2b0n0"],"nids":[2147483647]}`},
		{route: "DELETE " + bssParams, body: `{"hosts":["x3000c0s1b0n0"]} {"hosts":["Default"]}`},
		{route: "DELETE " + bssParams, body: `{"kernel":"http://k9"}`},
		{route: "GET " + bssParams, query: "name=x3000c0s1b0n0&mac=1notAMac&nid=0x7"},
		{route: "GET " + bssParams, query: "nid=1notANid"},
		{route: "GET " + bssParams, body: `{"kernel":"http://k9"}`},
		{route: "GET " + bssParams, body: `{}`},
		{route: "GET " + bssParams, body: `garbage`},
	}
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "POST "+bssParams, "PUT "+bssParams, "PATCH "+bssParams, "DELETE "+bssParams))
}

func FuzzBSSReads(f *testing.F) {
	tg := startBSS(f)
	routes := []route{
		{method: "GET", path: "/boot/v1/bootscript", readOnly: true}, {method: "GET", path: "/boot/v1/hosts", readOnly: true},
		{method: "GET", path: "/boot/v1/endpoint-history", readOnly: true}, {method: "GET", path: "/meta-data", readOnly: true},
		{method: "GET", path: "/user-data", readOnly: true}, {method: "POST", path: "/phone-home"},
		// /boot/v1/service/* is left out: it answers 500 when a dependency
		// is down (here: no HSM), by design.
		{method: "POST", path: "/boot/v1/scn"}, {method: "GET", path: "/boot/v1/{}", readOnly: true},
	}
	var seeds []seed
	for _, q := range []string{"mac=aa:bb:cc:00:00:01", "name=x3000c0s1b0n0&arch=x86_64&ts=1", "nid=1", "nid=-1", "nid=0x7fffffff1",
		"mac=aa:bb:cc:00:00:01%0Akernel%20http://evil", "name=x3000c0s1b0n0&retry=99999999999999999999", "foo", "mac=&name=&nid="} {
		seeds = append(seeds, seed{route: "GET /boot/v1/bootscript", query: q}, seed{route: "GET /boot/v1/hosts", query: q})
	}
	seeds = append(seeds,
		seed{route: "GET /boot/v1/endpoint-history", query: "name=x3000c0s1b0n0&endpoint=bootscript"},
		seed{route: "GET /boot/v1/endpoint-history", query: "endpoint=user-data"},
		seed{route: "GET /meta-data", query: "key=Global.a.b"}, seed{route: "GET /meta-data", query: "key=..."},
		seed{route: "GET /user-data"},
		seed{route: "POST /phone-home", body: `{"pub_key_rsa":"ssh-rsa AAA","hostname":"nid000001"}`},
		seed{route: "POST /phone-home", body: `{"hostname":"a","hostname":"b"}`},
		seed{route: "POST /boot/v1/scn", body: `{"Components":["x3000c0s1b0n0"],"State":"Ready"}`},
		seed{route: "POST /boot/v1/scn", body: `{"Components":["x3000c0s1b0n0"],"State":"Ready","State":"Off"}`},
		seed{route: "GET /boot/v1/{}", param: "../../etc/passwd"})
	fuzzRoutes(f, tg, routes, withHostile(seeds, "", "POST /phone-home", "POST /boot/v1/scn"))
}
