package heartbeat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
)

// MaxTimer is the longest Warntime, Errtime, Interval or Sm_timeout hbtd
// takes, from a flag or from PATCH /params: 30 days, past any useful setting
// and far from the 292 years a time.Duration holds. Without a bound a large
// value wrapped when converted and a node beating every second was declared
// dead (issue 18).
const MaxTimer = 30 * 24 * time.Hour

// DefaultSmTimeout is the starting Sm_timeout, the time allowed per HSM call.
const DefaultSmTimeout = 10 * time.Second

// Timers are the durations hbtd runs by.
type Timers struct {
	Warntime, Errtime, Interval, SmTimeout time.Duration
}

// CheckTimers is the one validation of hbtd's timers, applied to the flags
// (cmd/hbtd, before any port is bound), to Options (New) and to every PATCH
// /params: each in (0, MaxTimer], and Warntime below Errtime. Errors name the
// parameter first ("Warntime: ...").
func CheckTimers(t Timers) error {
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"Warntime", t.Warntime}, {"Errtime", t.Errtime}, {"Interval", t.Interval}, {"Sm_timeout", t.SmTimeout}} {
		if v.d <= 0 || v.d > MaxTimer {
			return fmt.Errorf("%s: %s seconds: want more than 0 and at most %s", v.name, secs(v.d), secs(MaxTimer))
		}
	}
	if t.Warntime >= t.Errtime {
		return fmt.Errorf("Warntime: %s must be less than Errtime %s", secs(t.Warntime), secs(t.Errtime))
	}
	return nil
}

// ParseTimer reads a timer given in seconds, whole or fractional, as both the
// flags and PATCH /params take it; values that do not fit MaxTimer are refused
// before they are converted, so nothing wraps.
func ParseTimer(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f > MaxTimer.Seconds() {
		return 0, fmt.Errorf("want a number of seconds more than 0 and at most %s", secs(MaxTimer))
	}
	d := time.Duration(f * float64(time.Second))
	if d <= 0 {
		return 0, fmt.Errorf("want a number of seconds more than 0 and at most %s", secs(MaxTimer))
	}
	return d, nil
}

// timerCheck is the paramCheck of the timer parameters.
func timerCheck(v string) string {
	if _, err := ParseTimer(v); err != nil {
		return err.Error()
	}
	return ""
}

// paramTimers reads the timer parameters of p, already checked one by one.
func paramTimers(p agent.Params) (Timers, error) {
	var t Timers
	for _, v := range []struct {
		name, s string
		d       *time.Duration
	}{{"Warntime", p.Warntime, &t.Warntime}, {"Errtime", p.Errtime, &t.Errtime},
		{"Interval", p.Interval, &t.Interval}, {"Sm_timeout", p.Sm_timeout, &t.SmTimeout}} {
		d, err := ParseTimer(v.s)
		if err != nil {
			return Timers{}, fmt.Errorf("%s: %q: %w", v.name, v.s, err)
		}
		*v.d = d
	}
	return t, nil
}

// secs formats d in seconds as the parameters spell it ("30", "0.5").
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
