package statemgr

import "testing"

// TestPartitionComponents: a partition name is a legal component ID, as in
// the shipped HSM (its lock conformance tests create p9999.9996 and lock it).
func TestPartitionComponents(t *testing.T) {
	a := newAPIServer(t)
	a.must(204, "POST", "/State/Components", `{"Components":[{"ID":"p9999.9996","State":"Ready"}]}`)
	a.exact(200, "GET", "/State/Components/p9999.9996", nil,
		`{"ID":"p9999.9996","Type":"Partition","State":"Ready","Flag":"OK","Enabled":true}`+"\n")
	a.exact(200, "POST", "/locks/lock", `{"ComponentIDs":["p9999.9996"]}`,
		`{"Counts":{"Total":1,"Success":1,"Failure":0},"Success":{"ComponentIDs":["p9999.9996"]},"Failure":[]}`+"\n")
	a.exact(200, "DELETE", "/State/Components/p9999.9996", nil, `{"code":0,"message":"deleted 1 entry"}`+"\n")
}
