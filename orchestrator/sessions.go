package orchestrator

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/hmsuite/hms/internal/problem"
)

// SessionCreate is the body of POST /v2/sessions.
type SessionCreate struct {
	Name            string  `json:"name,omitempty"`
	Operation       string  `json:"operation"`
	TemplateName    string  `json:"template_name"`
	Limit           *string `json:"limit,omitempty"`
	Stage           bool    `json:"stage,omitempty"`
	IncludeDisabled bool    `json:"include_disabled,omitempty"`
}

// CreateSession checks a session against its template, HSM and the image
// manifests, and stores it pending; the session-setup operator starts it.
// A tenant's session runs the tenant's template over the tenant's nodes.
func (s *Service) CreateSession(ctx context.Context, tenant string, req SessionCreate) (Session, error) {
	opts := s.options()
	if req.Operation != OpBoot && req.Operation != OpReboot && req.Operation != OpShutdown {
		return Session{}, problem.Invalidf("operation %q: boot, reboot or shutdown expected", req.Operation)
	}
	if req.Name == "" {
		req.Name = uuid.NewString()
	}
	if !namePattern.MatchString(req.Name) {
		return Session{}, problem.Invalidf("Session name %q: letters, digits, '.', '-' and '_' only, 1-127 characters", req.Name)
	}
	limit := ""
	if req.Limit != nil {
		limit = *req.Limit
	}
	if opts.LimitRequired && req.Limit == nil {
		return Session{}, problem.Invalidf("session_limit_required is set: a limit is required")
	}
	if opts.RejectNIDs {
		for _, it := range splitList(limit) {
			if nidLike.MatchString(trimOp(it)) {
				return Session{}, problem.Invalidf("limit entry %q looks like a NID (reject_nids is set)", it)
			}
		}
	}
	if _, err := s.tenantNodes(ctx, tenant); err != nil {
		return Session{}, err
	}
	t, err := s.store.Template(ctx, tenant, req.TemplateName)
	if err != nil {
		if problemIsNotFound(err) {
			return Session{}, problem.Invalidf("Session Template %s could not be found", req.TemplateName)
		}
		return Session{}, err
	}
	if err := checkTemplate(&t, opts.RejectNIDs); err != nil {
		return Session{}, problem.Invalidf("Session template fails check: %v", err)
	}
	if _, err := s.resolveTemplate(ctx, t, req.Operation); err != nil {
		return Session{}, problem.Invalidf("Session template fails check: %v", err)
	}
	now := s.now()
	sess := Session{Name: req.Name, Tenant: tenant, Operation: req.Operation, TemplateName: req.TemplateName, Limit: limit,
		Stage: req.Stage, IncludeDisabled: req.IncludeDisabled,
		Status: SessionStatus{StartTime: stamp(now), Status: SessionPending}}
	if err := s.store.CreateSession(ctx, sess, now.UnixNano()); err != nil {
		return Session{}, err
	}
	s.Wake()
	return sess, nil
}

// SessionFilter selects sessions by age and status.
type SessionFilter struct {
	MinAge, MaxAge time.Duration
	Status         string
}

func (f SessionFilter) match(sess Session, now time.Time) bool {
	age := now.Sub(parseStamp(sess.Status.StartTime))
	return (f.Status == "" || sess.Status.Status == f.Status) && (f.MinAge == 0 || age >= f.MinAge) &&
		(f.MaxAge == 0 || age <= f.MaxAge)
}

// Sessions lists the sessions f selects, of a tenant ("": of all).
func (s *Service) Sessions(ctx context.Context, tenant string, f SessionFilter) ([]Session, error) {
	all, err := s.store.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	now, out := s.now(), []Session{}
	for _, sess := range all {
		if f.match(sess, now) && (tenant == "" || sess.Tenant == tenant) {
			out = append(out, sess)
		}
	}
	return out, nil
}

// Session returns one session (ErrNotFound), which must be tenant's
// unless tenant is "".
func (s *Service) Session(ctx context.Context, tenant, name string) (Session, error) {
	sess, err := s.store.Session(ctx, name)
	if err == nil && tenant != "" && sess.Tenant != tenant {
		return Session{}, problem.NotFoundf("Session %s could not be found", name)
	}
	return sess, err
}

// DeleteSession removes one session (ErrNotFound), of tenant's.
func (s *Service) DeleteSession(ctx context.Context, tenant, name string) error {
	if _, err := s.Session(ctx, tenant, name); err != nil {
		return err
	}
	return s.store.DeleteSession(ctx, name)
}

// DeleteSessions removes the sessions f selects; with no status given,
// only complete ones.
func (s *Service) DeleteSessions(ctx context.Context, tenant string, f SessionFilter) error {
	if f.Status == "" {
		f.Status = SessionComplete
	}
	list, err := s.Sessions(ctx, tenant, f)
	if err != nil {
		return err
	}
	for _, sess := range list {
		if err := s.store.DeleteSession(ctx, sess.Name); err != nil && !problemIsNotFound(err) {
			return err
		}
	}
	return nil
}

// PatchSession merges body (components, status) into a session.
func (s *Service) PatchSession(ctx context.Context, tenant, name string, body []byte) (Session, error) {
	if _, err := s.Session(ctx, tenant, name); err != nil {
		return Session{}, err
	}
	var upd struct {
		Components *string        `json:"components"`
		Status     map[string]any `json:"status"`
	}
	if err := decodeStrict(body, &upd); err != nil {
		return Session{}, err
	}
	next, err := s.modifySession(ctx, name, func(cur *Session) error {
		var merged Session
		if err := mergePatch(*cur, body, &merged); err != nil {
			return err
		}
		merged.Name, merged.Tenant, merged.version = name, cur.Tenant, cur.version
		*cur = merged
		return nil
	})
	if err != nil {
		return Session{}, err
	}
	return next, nil
}

// ExtendedStatus is GET /v2/sessions/{id}/status.
type ExtendedStatus struct {
	Status                 string                `json:"status"`
	ManagedComponentsCount int                   `json:"managed_components_count"`
	Phases                 StatusPhases          `json:"phases"`
	PercentSuccessful      float64               `json:"percent_successful"`
	PercentFailed          float64               `json:"percent_failed"`
	PercentStaged          float64               `json:"percent_staged"`
	ErrorSummary           map[string]ErrorEntry `json:"error_summary"`
	Timing                 StatusTiming          `json:"timing"`
}

// StatusPhases are the percentages of a session's components per phase.
type StatusPhases struct {
	PercentComplete    float64 `json:"percent_complete"`
	PercentPoweringOn  float64 `json:"percent_powering_on"`
	PercentPoweringOff float64 `json:"percent_powering_off"`
	PercentConfiguring float64 `json:"percent_configuring"`
}

// ErrorEntry counts the components one error hit and names up to ten.
type ErrorEntry struct {
	Count int    `json:"count"`
	List  string `json:"list"`
}

// StatusTiming is a session's start, end and duration.
type StatusTiming struct {
	StartTime string  `json:"start_time"`
	EndTime   *string `json:"end_time"`
	Duration  string  `json:"duration"`
}

// SessionStatus computes a session's extended status from its components.
func (s *Service) SessionStatus(ctx context.Context, tenant, name string) (ExtendedStatus, error) {
	sess, err := s.Session(ctx, tenant, name)
	if err != nil {
		return ExtendedStatus{}, err
	}
	comps := s.Components(ComponentFilter{Session: name})
	staged := s.Components(ComponentFilter{StagedSession: name})
	total := len(comps) + len(staged)
	count := map[string]int{}
	errs := map[string][]string{}
	for _, c := range comps {
		if c.Enabled {
			count[c.Status.Phase]++
		}
		switch c.Status.Status {
		case StatusStable:
			count["successful"]++
		case StatusFailed:
			count["failed"]++
		}
		if c.Error != "" {
			errs[c.Error] = append(errs[c.Error], c.ID)
		}
	}
	pct := func(k string) float64 {
		if total == 0 {
			return 0
		}
		return math.Round(float64(count[k])/float64(total)*10000) / 100
	}
	stagedPct := 0.0
	if total > 0 {
		stagedPct = math.Round(float64(len(staged))/float64(total)*10000) / 100
	}
	out := ExtendedStatus{Status: sess.Status.Status, ManagedComponentsCount: total,
		Phases: StatusPhases{PercentComplete: pct("successful") + pct("failed"), PercentPoweringOn: pct(PhasePoweringOn),
			PercentPoweringOff: pct(PhasePoweringOff), PercentConfiguring: pct(PhaseConfiguring)},
		PercentSuccessful: pct("successful"), PercentFailed: pct("failed"), PercentStaged: stagedPct,
		ErrorSummary: map[string]ErrorEntry{}, Timing: s.timing(sess.Status)}
	for e, ids := range errs {
		entry := ErrorEntry{Count: len(ids)}
		for i, id := range ids {
			if i == 10 {
				entry.List += "..."
				break
			}
			if i > 0 {
				entry.List += ","
			}
			entry.List += id
		}
		out.ErrorSummary[e] = entry
	}
	return out, nil
}

func (s *Service) timing(st SessionStatus) StatusTiming {
	start := parseStamp(st.StartTime)
	end := s.now()
	if st.EndTime != nil {
		end = parseStamp(*st.EndTime)
	}
	d := end.Sub(start).Round(time.Second)
	return StatusTiming{StartTime: st.StartTime, EndTime: st.EndTime,
		Duration: fmt.Sprintf("%d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)}
}
