package core

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// HMSConfig is the site file shipped HMS reads from HMS_CONFIG_PATH
// (hms_config.json): Roles and SubRoles added to the built-in ones, e.g.
// SubRole "UAN" for user access nodes.
type HMSConfig struct {
	HMSExtendedDefinitions struct {
		Role    []string `json:"Role"`
		SubRole []string `json:"SubRole"`
	} `json:"HMSExtendedDefinitions"`
}

// Vocab holds the Roles and SubRoles in force: the built-in ones plus the
// site's. It is safe for concurrent use; each Store has one.
type Vocab struct{ p atomic.Pointer[VocabSet] }

type VocabSet struct{ Roles, SubRoles hsm.Enum }

// NewVocab returns the built-in Roles and SubRoles plus the SubRoles of the
// hms_config.json a CSM install ships (CSMSubRoles), so that a layout written
// for CSM (SubRole UAN, say) works without a site file. A site file given with
// -hms-config replaces those extras, as it does on CSM.
func NewVocab() *Vocab {
	v := &Vocab{}
	v.Extend(nil, CSMSubRoles())
	return v
}

// CSMSubRoles are the SubRoles CSM's default hms_config.json adds to HMS's
// built-in Master, Worker and Storage.
func CSMSubRoles() []string {
	return []string{"UAN", "Gateway", "LNETRouter", "Visualization", "UserDefined"}
}

// Extend replaces the site's extra Roles and SubRoles.
func (v *Vocab) Extend(roles, subRoles []string) {
	v.p.Store(&VocabSet{Roles: hsm.Roles.With(roles), SubRoles: hsm.SubRoles.With(subRoles)})
}

func (v *Vocab) Get() *VocabSet { return v.p.Load() }

// LoadHMSConfig reads the file at path into v: from then on its Roles and
// SubRoles are accepted everywhere HSM checks them and listed by
// /service/values.
func LoadHMSConfig(path string, v *Vocab) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("hms config: %w", err)
	}
	var c HMSConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("hms config %s: %w", path, err)
	}
	v.Extend(c.HMSExtendedDefinitions.Role, c.HMSExtendedDefinitions.SubRole)
	return nil
}

// WatchHMSConfig re-reads the file at path whenever its modification time
// or size changes, checking every interval, until ctx ends (as shipped HMS
// watches hms_config.json). A file that does not parse is logged and the
// values in force are kept.
func WatchHMSConfig(ctx context.Context, path string, every time.Duration, v *Vocab, log *slog.Logger) error {
	stamp := func() (time.Time, int64) {
		fi, err := os.Stat(path)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	mod, size := stamp()
	OnTick(ctx, every, func() {
		m, sz := stamp()
		if m.Equal(mod) && sz == size {
			return
		}
		mod, size = m, sz
		if err := LoadHMSConfig(path, v); err != nil {
			log.ErrorContext(ctx, "hms_config_reload_failed", "path", path, "err", err)
			return
		}
		log.InfoContext(ctx, "hms_config_reloaded", "path", path, "roles", v.Get().Roles.Values, "subroles", v.Get().SubRoles.Values)
	})
	return nil
}
