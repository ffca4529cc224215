package power

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/power/pcs"
)

// Config tunes a Service. Zero fields take the defaults in brackets.
type Config struct {
	// TTL is how long a finished transition is kept [24 h].
	TTL time.Duration
	// MaxKept bounds the finished transitions kept [20,000].
	MaxKept int
	// Poll is how often a task reads the power state back [2 s].
	Poll time.Duration
	// Minute is the unit of taskDeadlineMinutes [time.Minute]; tests
	// shorten it.
	Minute time.Duration
	// SampleInterval is how often the power-status cache is refreshed [30 s].
	SampleInterval time.Duration
	// ReportInterval is how long the results of tasks that end are
	// gathered before HSM is told of them in one update [250 ms].
	ReportInterval time.Duration
	// Scheme is how BMCs are reached, "https" or "http" [https].
	Scheme string
	// Now and After are the clock the engine times deadlines and
	// read-back polls with [time.Now, time.After]; tests inject their own.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// OnEvent, if set, is told of task progress and of finished
	// transitions and power-cap tasks (see Event).
	OnEvent func(Event)
	// Registerer receives the engine's metrics; nil registers nowhere.
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

func (c *Config) defaults() {
	if c.TTL <= 0 {
		c.TTL = 24 * time.Hour
	}
	if c.MaxKept <= 0 {
		c.MaxKept = 20000
	}
	if c.Poll <= 0 {
		c.Poll = 2 * time.Second
	}
	if c.Minute <= 0 {
		c.Minute = time.Minute
	}
	if c.SampleInterval <= 0 {
		c.SampleInterval = 30 * time.Second
	}
	if c.ReportInterval <= 0 {
		c.ReportInterval = 250 * time.Millisecond
	}
	if c.Scheme == "" {
		c.Scheme = "https"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.After == nil {
		c.After = time.After
	}
}

// DefaultDeadline is taskDeadlineMinutes when a request leaves it out.
const DefaultDeadline = 5

// Service runs transitions and keeps the power-status cache.
type Service struct {
	store    *Store
	hsm      HSM
	bmc      *BMCClient
	targets  *targets
	cache    *statusCache
	cfg      Config
	log      *slog.Logger
	queue    chan *run
	caps     capStore
	capQueue chan *CapTask
	m        *metrics
	// reports tells HSM of the tasks that succeeded, as they end.
	reports *reporter

	mu   sync.Mutex
	runs map[string]*run
}

// New loads the stored transitions; Run resumes the unfinished ones.
func New(ctx context.Context, store *Store, h HSM, bmc *BMCClient, cfg Config) (*Service, error) {
	cfg.defaults()
	s := &Service{store: store, hsm: h, bmc: bmc, targets: newTargets(h, bmc, cfg.Scheme), cfg: cfg, log: cfg.Log,
		queue: make(chan *run, 4096), runs: map[string]*run{},
		caps: capStore{tasks: map[string]*CapTask{}}, capQueue: make(chan *CapTask, 1024)}
	s.cache = newStatusCache()
	s.reports = newReporter(cfg.ReportInterval, cfg.After, s.pushStates)
	s.m = newMetrics(cfg.Registerer, s)
	trs, err := store.Load(ctx)
	if err != nil {
		return nil, err
	}
	for _, tr := range trs {
		s.runs[tr.ID] = newRun(tr, s.emit)
	}
	if err := s.loadCaps(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Create validates a transition request against HSM, stores it and queues
// it for Run. Bad entries are refused together, by name (ErrInvalid).
func (s *Service) Create(ctx context.Context, op pcs.Operation, deadline int, locs []pcs.Location) (Transition, error) {
	if deadline <= 0 {
		return Transition{}, problem.Invalidf("taskDeadlineMinutes %d: must be at least 1", deadline)
	}
	if err := s.validate(ctx, locs); err != nil {
		return Transition{}, err
	}
	now := s.cfg.Now().UTC()
	tr := &Transition{ID: uuid.NewString(), Operation: op, Created: now, Expires: now.Add(s.cfg.TTL),
		Status: pcs.TransitionNew, Deadline: deadline}
	for _, l := range locs {
		tr.Tasks = append(tr.Tasks, &Task{Xname: xname.Normalize(l.Xname), DeputyKey: l.DeputyKey, Status: pcs.TaskNew,
			Description: "Gathering data"})
	}
	if len(tr.Tasks) == 0 {
		tr.Status = pcs.TransitionCompleted
	}
	if err := s.store.Create(ctx, tr); err != nil {
		return Transition{}, err
	}
	r := newRun(tr, s.emit)
	s.mu.Lock()
	s.runs[tr.ID] = r
	s.mu.Unlock()
	if tr.Status != pcs.TransitionCompleted {
		select {
		case s.queue <- r:
		default:
			return Transition{}, problem.Unavailablef("too many transitions waiting to start")
		}
	}
	return r.snapshot(false), nil
}

// powerable are the component types pcs can control (PCS's list).
var powerable = []string{"Node", "NodeBMC", "RouterBMC", "ChassisBMC", "Chassis", "ComputeModule", "RouterModule",
	"MgmtSwitch", "MgmtHLSwitch", "CDUMgmtSwitch", "CabinetPDUPowerConnector"}

// validate refuses bad xnames, duplicates, components HSM does not know
// and types without power control, naming each.
func (s *Service) validate(ctx context.Context, locs []pcs.Location) error {
	var bad, dup []string
	seen := map[string]bool{}
	var ids []string
	for _, l := range locs {
		x := xname.Normalize(l.Xname)
		switch {
		case !xname.Valid(l.Xname):
			bad = append(bad, l.Xname)
		case seen[x]:
			dup = append(dup, x)
		default:
			seen[x] = true
			ids = append(ids, x)
		}
	}
	var msgs []string
	if len(bad) > 0 {
		msgs = append(msgs, "invalid xnames: "+strings.Join(bad, " "))
	}
	if len(dup) > 0 {
		msgs = append(msgs, "duplicate xnames: "+strings.Join(dup, " "))
	}
	if len(ids) > 0 {
		comps, err := s.hsm.QueryComponents(ctx, ids)
		if err != nil && !errors.Is(err, problem.ErrNotFound) {
			return fmt.Errorf("Error retrieving HSM data: %w", problem.Unavailablef("%v", err))
		}
		found := map[string]bool{}
		var unpowered []string
		for _, c := range comps {
			found[c.ID] = true
			if !slices.Contains(powerable, c.Type) {
				unpowered = append(unpowered, c.ID+" ("+c.Type+")")
			}
		}
		var missing []string
		for _, id := range ids {
			if !found[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			msgs = append(msgs, "xnames not found in HSM: "+strings.Join(missing, " "))
		}
		if len(unpowered) > 0 {
			msgs = append(msgs, "no power control for: "+strings.Join(unpowered, " "))
		}
	}
	if len(msgs) > 0 {
		return problem.Invalidf("%s", strings.Join(msgs, "; "))
	}
	return nil
}

// Get returns one transition with its tasks.
func (s *Service) Get(id string) (Transition, pcs.TaskCounts, error) {
	r := s.lookup(id)
	if r == nil {
		return Transition{}, pcs.TaskCounts{}, problem.NotFoundf("Key /transition/%s does not exist", id)
	}
	tr := r.snapshot(true)
	return tr, countTasks(tr.Tasks), nil
}

// TransitionSummary is a transition without its tasks, for listings.
type TransitionSummary struct {
	Transition
	Counts pcs.TaskCounts
}

// List returns every transition kept, oldest first.
func (s *Service) List() []TransitionSummary {
	s.mu.Lock()
	runs := make([]*run, 0, len(s.runs))
	for _, r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	out := make([]TransitionSummary, len(runs))
	for i, r := range runs {
		out[i] = TransitionSummary{Transition: r.snapshot(false), Counts: r.counts()}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Abort signals a transition to stop: tasks not yet sent to a BMC fail as
// aborted. A completed transition cannot be aborted (ErrInvalid).
func (s *Service) Abort(ctx context.Context, id string) error {
	r := s.lookup(id)
	if r == nil {
		return problem.NotFoundf("Key /transition/%s does not exist", id)
	}
	if !r.signalAbort() {
		return problem.Invalidf("Transition is already finished and cannot be aborted.")
	}
	status, tasks := r.takeDirty()
	return s.store.Save(ctx, id, status, tasks)
}

// Wait blocks until transition id has ended (tests, CAPMC).
func (s *Service) Wait(ctx context.Context, id string) error {
	r := s.lookup(id)
	if r == nil {
		return problem.NotFoundf("Key /transition/%s does not exist", id)
	}
	return r.wait(ctx)
}

func (s *Service) lookup(id string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// Run resumes the stored unfinished transitions, runs the queued ones,
// samples power states and expires old transitions, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	s.mu.Lock()
	for _, r := range s.runs {
		select {
		case <-r.done:
		default:
			s.log.InfoContext(ctx, "transition_resumed", "transition_id", r.tr.ID)
			g.Go(func() error { s.runTransition(ctx, r); return nil })
		}
	}
	s.mu.Unlock()
	g.Go(func() error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case r := <-s.queue:
				g.Go(func() error { s.runTransition(ctx, r); return nil })
			case t := <-s.capQueue:
				g.Go(func() error { s.runCap(ctx, t); return nil })
			}
		}
	})
	g.Go(func() error { return s.sampleLoop(ctx) })
	g.Go(func() error { return s.reports.run(ctx) })
	g.Go(func() error { return s.expireLoop(ctx) })
	return g.Wait()
}
