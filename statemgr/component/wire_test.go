package component_test

import (
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// TestPartitionComponents: a partition name is a legal component ID, as in
// the shipped HSM (its lock conformance tests create p9999.9996 and lock it).
func TestPartitionComponents(t *testing.T) { pg.EachDB(t, testPartitionComponents) }

func testPartitionComponents(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	a.Must(204, "POST", "/State/Components", `{"Components":[{"ID":"p9999.9996","State":"Ready"}]}`)
	a.Exact(200, "GET", "/State/Components/p9999.9996", nil,
		`{"ID":"p9999.9996","Type":"Partition","State":"Ready","Flag":"OK","Enabled":true}`+"\n")
	a.Exact(200, "POST", "/locks/lock", `{"ComponentIDs":["p9999.9996"]}`,
		`{"Counts":{"Total":1,"Success":1,"Failure":0},"Success":{"ComponentIDs":["p9999.9996"]},"Failure":[]}`+"\n")
	a.Exact(200, "DELETE", "/State/Components/p9999.9996", nil, `{"code":0,"message":"deleted 1 entry"}`+"\n")
}

// TestByNIDQueryFilters: POST ByNID/Query applies role, state and the other
// Query filters to the NID ranges, and answers bad input with the shipped
// HSM's words.
func TestByNIDQueryFilters(t *testing.T) { pg.EachDB(t, testByNIDQueryFilters) }

func testByNIDQueryFilters(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	a.Exact(200, "POST", "/State/Components/ByNID/Query", map[string]any{"NIDRanges": []string{"1-4"}, "role": []string{"service"}, "nidonly": true},
		`{"Components":[{"ID":"x0c0s1b0n0","Type":"Node","NID":3}]}`+"\n")
	a.Exact(200, "POST", "/State/Components/ByNID/Query", map[string]any{"NIDRanges": []string{"1-4"}, "state": []string{"Ready"}, "role": []string{"Compute"}, "nidonly": true},
		`{"Components":[{"ID":"x0c0s0b0n0","Type":"Node","NID":1},{"ID":"x0c0s1b0n1","Type":"Node","NID":4}]}`+"\n")
	a.Problem(400, "POST", "/State/Components/ByNID/Query", map[string]any{"NIDRanges": []string{}}, "Missing NID ranges")
	a.Problem(400, "POST", "/State/Components/ByNID/Query", map[string]any{"NIDRanges": []string{"5-"}}, "bad query param: Argument was not a valid NID Range")
}

// TestComponentNotFoundWords: the 404s of the component routes say what the
// shipped HSM says, with no instance.
func TestComponentNotFoundWords(t *testing.T) { pg.EachDB(t, testComponentNotFoundWords) }

func testComponentNotFoundWords(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	a.Exact(404, "GET", "/State/Components/x9c0s0b0n0", nil,
		`{"type":"about:blank","title":"Not Found","detail":"no such xname.","status":404}`+"\n")
	a.Problem(404, "DELETE", "/State/Components/x9c0s0b0n0", nil, "no such xname.")
	a.Problem(404, "GET", "/State/Components/ByNID/99", nil, "no such NID.")
	a.Problem(404, "DELETE", "/State/Components", nil, "no entries to delete")
	hsmtest.Seed(t, a)
	a.Exact(200, "DELETE", "/State/Components", nil, `{"code":0,"message":"deleted 5 entries"}`+"\n")
}
