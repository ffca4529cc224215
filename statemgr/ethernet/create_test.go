package ethernet_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/hsm"
	hsmcore "github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// TestCreateRoundOneFails: a round of creates in which one insert fails
// commits the others in its one transaction and refuses that one alone
// (with its own error), as it does an ID stored already or taken earlier
// in the round.
func TestCreateRoundOneFails(t *testing.T) { pg.EachDB(t, testCreateRoundOneFails) }

func testCreateRoundOneFails(t *testing.T, db testpeer.DB) {
	core, path := hsmtest.NewStoreOn(t, db, hsmcore.Config{})
	s := ethernet.NewStore(core.DB, time.Now)
	ctx := t.Context()
	if _, err := s.Create(ctx, hsm.EthernetInterface{MACAddress: "02:00:00:00:00:05"}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.DB.W.ExecContext(ctx, refuseTrigger(path)); err != nil {
		t.Fatal(err)
	}
	var round []hsm.EthernetInterface
	for _, last := range []int{1, 2, 3, 4, 1, 5} {
		round = append(round, hsm.EthernetInterface{MACAddress: fmt.Sprintf("02:00:00:00:00:%02d", last),
			IPAddresses: []hsm.IPAddressMapping{{IPAddress: fmt.Sprintf("10.0.0.%d", last)}}})
	}
	before := core.DB.Commits()
	errs := s.CommitRound(ctx, round)
	if n := core.DB.Commits() - before; n != 1 {
		t.Errorf("the round took %d commits, want 1", n)
	}
	for i, err := range errs {
		switch i {
		case 2:
			if err == nil || !strings.Contains(err.Error(), "refused by the test") {
				t.Errorf("create %d (the failing insert): %v, want its own error", i, err)
			}
		case 4, 5:
			if !errors.Is(err, problem.ErrConflict) {
				t.Errorf("create %d (taken): %v, want a conflict", i, err)
			}
		default:
			if err != nil {
				t.Errorf("create %d: %v", i, err)
			}
		}
	}
	all, err := s.Get(ctx, "020000000001")
	if err != nil || len(all.IPAddresses) != 1 {
		t.Errorf("020000000001: %+v, %v", all, err)
	}
	var ids []string
	for _, id := range []string{"020000000001", "020000000002", "020000000003", "020000000004", "020000000005"} {
		if _, err := s.Get(ctx, id); err == nil {
			ids = append(ids, id)
		}
	}
	if diff := gocmp.Diff([]string{"020000000001", "020000000002", "020000000004", "020000000005"}, ids); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
}

// refuseTrigger is a trigger that fails the insert of 020000000003, in the
// SQL of the dialect of the database at path.
func refuseTrigger(path string) string {
	if sqldb.IsPostgres(path) {
		return `CREATE FUNCTION refuse_03() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.id = '020000000003' THEN RAISE EXCEPTION 'refused by the test'; END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER refuse_03 BEFORE INSERT ON eth_interfaces FOR EACH ROW EXECUTE FUNCTION refuse_03();`
	}
	return `CREATE TRIGGER refuse_03 BEFORE INSERT ON eth_interfaces
		WHEN NEW.id = '020000000003' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`
}
