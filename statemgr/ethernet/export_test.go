package ethernet

import (
	"context"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// CommitRound commits eis as one round of concurrent creates (a test
// cannot make the writers of a round arrive together otherwise).
func (s *Store) CommitRound(ctx context.Context, eis []hsm.EthernetInterface) []error {
	for i := range eis {
		if err := normEthernet(&eis[i]); err != nil {
			panic(err)
		}
		eis[i].LastUpdate = s.now().UTC()
	}
	return s.commitCreates(ctx, eis)
}
