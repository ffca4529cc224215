package lock

import (
	"context"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// What the black-box tests of this package do inside.

// ReapReservations removes the reservations expired in c's database.
func ReapReservations(c *core.Store, ctx context.Context) (int64, error) {
	return NewStore(c).reapReservations(ctx)
}

// ReserveService makes a rigid service reservation of ids for d.
func ReserveService(c *core.Store, ctx context.Context, ids []string, d time.Duration) error {
	_, err := NewStore(c).runLockOp(ctx, opReserveService, glLockSelection{ids: ids, model: hsm.ModelRigid}, d)
	return err
}
