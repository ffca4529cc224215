package lock

import "testing"

func TestReservationKeysAreUnique(t *testing.T) {
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = "x0c0s0b0n0"
	}
	rks, dks, err := glNewKeys(ids)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := range ids {
		for _, k := range []string{rks[i], dks[i]} {
			if seen[k] {
				t.Fatalf("key %s generated twice", k)
			}
			seen[k] = true
		}
	}
}
