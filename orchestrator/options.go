package orchestrator

import (
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

// defaultOptions are BOS's defaults; GET /v2/options answers them merged
// with what was patched.
func defaultOptions() map[string]any {
	return map[string]any{
		"bss_read_timeout": 20, "cfs_read_timeout": 20, "hsm_read_timeout": 20, "ims_read_timeout": 20,
		"pcs_read_timeout": 20, "cleanup_completed_session_ttl": "7d", "clear_stage": false,
		"component_actual_state_ttl": "4h", "default_retry_policy": 3, "discovery_frequency": 300,
		"ims_errors_fatal": false, "ims_images_must_exist": false, "logging_level": "INFO",
		"max_boot_wait_time": 1200, "max_component_batch_size": 2800, "max_power_off_wait_time": 300,
		"max_power_on_wait_time": 120, "polling_frequency": 15, "reject_nids": false,
		"session_limit_required": false,
	}
}

// intRange bounds the integer options.
var intRange = map[string][2]int{
	"bss_read_timeout": {10, 86400}, "cfs_read_timeout": {10, 86400}, "hsm_read_timeout": {10, 86400},
	"ims_read_timeout": {10, 86400}, "pcs_read_timeout": {10, 86400}, "default_retry_policy": {0, 1048576},
	"discovery_frequency": {0, 33554432}, "max_boot_wait_time": {0, 1048576},
	"max_component_batch_size": {0, 131071}, "max_power_off_wait_time": {0, 1048576},
	"max_power_on_wait_time": {0, 1048576}, "polling_frequency": {0, 1048576},
}

var boolOptions = map[string]bool{"clear_stage": true, "ims_errors_fatal": true, "ims_images_must_exist": true,
	"reject_nids": true, "session_limit_required": true}

var stringPatterns = map[string]*regexp.Regexp{
	"cleanup_completed_session_ttl": regexp.MustCompile(`^(0|0[mMhHdDwW]|[1-9][0-9]*[mMhHdDwW])$`),
	"component_actual_state_ttl":    regexp.MustCompile(`^[1-9][0-9]*[hHdDwW]$`),
	"logging_level":                 regexp.MustCompile(`^(?i)(debug|info|warning|error|critical)$`),
}

// validateOptions checks a patch: known options have their type and range;
// others are kept as given (the spec allows additional properties).
func validateOptions(p map[string]any) error {
	if len(p) == 0 || len(p) > 1024 {
		return problem.Invalidf("options: between 1 and 1024 properties expected")
	}
	for k, v := range p {
		switch {
		case intRange[k] != [2]int{}:
			f, ok := v.(float64)
			r := intRange[k]
			if !ok || f != float64(int(f)) || int(f) < r[0] || int(f) > r[1] {
				return problem.Invalidf("%s: an integer from %d to %d expected", k, r[0], r[1])
			}
		case boolOptions[k]:
			if _, ok := v.(bool); !ok {
				return problem.Invalidf("%s: a boolean expected", k)
			}
		case stringPatterns[k] != nil:
			s, ok := v.(string)
			if !ok || !stringPatterns[k].MatchString(s) {
				return problem.Invalidf("%s: %v does not match %s", k, v, stringPatterns[k])
			}
		}
	}
	return nil
}

// Options are the options the operators read, typed.
type Options struct {
	DefaultRetryPolicy int
	MaxBootWait        time.Duration
	MaxPowerOnWait     time.Duration
	MaxPowerOffWait    time.Duration
	Polling            time.Duration
	Discovery          time.Duration
	BatchSize          int
	RejectNIDs         bool
	LimitRequired      bool
	ClearStage         bool
	CompletedTTL       time.Duration
}

func typedOptions(m map[string]any) Options {
	secs := func(k string) time.Duration { return time.Duration(intOpt(m, k)) * time.Second }
	b := func(k string) bool { v, _ := m[k].(bool); return v }
	ttl, _ := m["cleanup_completed_session_ttl"].(string)
	return Options{DefaultRetryPolicy: intOpt(m, "default_retry_policy"), MaxBootWait: secs("max_boot_wait_time"),
		MaxPowerOnWait: secs("max_power_on_wait_time"), MaxPowerOffWait: secs("max_power_off_wait_time"),
		Polling: secs("polling_frequency"), Discovery: secs("discovery_frequency"),
		BatchSize: intOpt(m, "max_component_batch_size"), RejectNIDs: b("reject_nids"),
		LimitRequired: b("session_limit_required"), ClearStage: b("clear_stage"), CompletedTTL: parseAge(ttl)}
}

func intOpt(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case int:
		return v
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// mergeOptions is the defaults overlaid with stored.
func mergeOptions(stored map[string]any) map[string]any {
	m := defaultOptions()
	maps.Copy(m, stored)
	return m
}

// parseAge reads an AgeString ("3d", "6h", "2w", "0"); 0 for invalid.
func parseAge(s string) time.Duration {
	if s == "" || s == "0" {
		return 0
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 0 {
		return 0
	}
	unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	u := unit[s[len(s)-1]|0x20]
	if u == 0 {
		return 0
	}
	if int64(n) > int64(math.MaxInt64/u) {
		return math.MaxInt64 // older than anything: an age past ~292 years
	}
	return time.Duration(n) * u
}
