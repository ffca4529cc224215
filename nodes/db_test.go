package nodes_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/nodes"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// TestStoreRestart: what the store wrote (resources of each kind, a
// replacement, a delete, a sealed secret with every byte value) is what a
// store opened afresh reads, and a missing row or secret is no error.
func TestStoreRestart(t *testing.T) { pg.EachDB(t, testStoreRestart) }

func testStoreRestart(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	s, err := nodes.OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 123_456_789).UTC() // Unix ns: past 32 bits
	row := func(kind, name, doc string, at time.Time) nodes.Row {
		return nodes.Row{Kind: kind, Name: name, Doc: json.RawMessage(doc), Updated: at}
	}
	puts := []nodes.Row{row("ComputeNode", "x1", `{"xname":"x1"}`, t0), row("ComputeNode", "x0", `{"xname":"x0"}`, t0),
		row("BootProfile", "compute", `{"name":"compute"}`, t0), row("NodeGroup", "gone", `{}`, t0)}
	if err := s.Write(ctx, puts, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, []nodes.Row{row("ComputeNode", "x1", `{"xname":"x1","arch":"ARM"}`, t0.Add(time.Second))},
		[]nodes.Row{{Kind: "NodeGroup", Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 256)
	for i := range secret {
		secret[i] = byte(i)
	}
	if err := s.PutSecret(ctx, "bmc.json", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSecret(ctx, "bmc.json", secret); err != nil {
		t.Fatal(err)
	}
	if gen := s.Gen(); gen != 2 {
		t.Errorf("Gen = %d, want 2 writes", gen)
	}
	s.Close()
	if s, err = nodes.OpenStore(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all, err := s.Rows(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []nodes.Row{row("BootProfile", "compute", `{"name":"compute"}`, t0), row("ComputeNode", "x0", `{"xname":"x0"}`, t0),
		row("ComputeNode", "x1", `{"xname":"x1","arch":"ARM"}`, t0.Add(time.Second))}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("rows after reopening (-want +got):\n%s", diff)
	}
	if nodesOnly, err := s.Rows(ctx, "ComputeNode"); err != nil || !cmp.Equal(nodesOnly, want[1:]) {
		t.Errorf("ComputeNode rows = %v, %v; want x0, x1", nodesOnly, err)
	}
	if r, ok, err := s.Row(ctx, "ComputeNode", "x1"); err != nil || !ok || !cmp.Equal(r, want[2]) {
		t.Errorf("Row x1 = %v, %v, %v", r, ok, err)
	}
	if _, ok, err := s.Row(ctx, "NodeGroup", "gone"); err != nil || ok {
		t.Errorf("deleted row: %v, %v; want none", ok, err)
	}
	if got, ok, err := s.Secret(ctx, "bmc.json"); err != nil || !ok || !bytes.Equal(got, secret) {
		t.Errorf("secret = %v, %v, %v; want every byte back", got, ok, err)
	}
	if _, ok, err := s.Secret(ctx, "other.json"); err != nil || ok {
		t.Errorf("missing secret: %v, %v; want none", ok, err)
	}
}
