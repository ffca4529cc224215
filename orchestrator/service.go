package orchestrator

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// HSM is what bos asks HSM: nodes by ID, role or group, and their state.
type HSM interface {
	Components(ctx context.Context, query url.Values) ([]hsm.Component, error)
	QueryComponents(ctx context.Context, ids []string) ([]hsm.Component, error)
	Ready(ctx context.Context) error
}

// BSS is what bos asks BSS: set a node's boot parameters (answering the
// referral token) and when nodes last fetched their boot script.
type BSS interface {
	PutBootParamsToken(ctx context.Context, bp bss.BootParams) (string, error)
	EndpointHistory(ctx context.Context, name string) ([]bss.EndpointAccess, error)
}

// PCS is what bos asks PCS: power transitions, how they went, and power
// status.
type PCS interface {
	StartTransition(ctx context.Context, op pcs.Operation, deadline int, locs []pcs.Location) (pcs.Created, error)
	Transition(ctx context.Context, id string) (pcs.Transition, error)
	Transitions(ctx context.Context) ([]pcs.Transition, error)
	PowerStatus(ctx context.Context, req pcs.PowerStatusRequest) ([]pcs.PowerStatus, error)
}

// Config tunes a Service; zero fields take the defaults in brackets.
type Config struct {
	// Now is the clock [time.Now].
	Now func() time.Time
	// Manifests fetches image manifests [http.DefaultClient].
	Manifests *http.Client
	// S3 is the store s3://bucket/key paths are read from [none: s3://
	// paths cannot be read].
	S3 S3
	// CFS configures nodes (-cfs-url) [none: configuration is skipped and
	// a node that boots its image counts as configured].
	CFS Configurer
	// Command configures nodes by running a site command
	// (-config-command) instead of CFS [none].
	Command *CommandConfig
	// FallbackPoll is how often the operators run at least while HSM sends
	// SCNs (polling_frequency applies until it does) [1 min].
	FallbackPoll time.Duration
	// TransitionPoll is how soon bos first checks a PCS transition it
	// started; later checks back off (see transitionPollMax) [500 ms].
	TransitionPoll time.Duration
	// TransitionGiveUp is how long PCS may go without answering about a
	// transition (TransitionGiveUpChecks checks in a row at least) before
	// bos gives up on it and its components' power operator decides again
	// (-transition-give-up) [2 min].
	TransitionGiveUp time.Duration
	// TransitionGiveUpChecks is how many checks of a transition in a row
	// PCS must leave unanswered, over TransitionGiveUp at least, before bos
	// gives up on it (-transition-give-up-checks) [5].
	TransitionGiveUpChecks int
	// After times the transition checks [time.After], SubscriptionAfter
	// those of bos's HSM subscription [time.After]; tests inject their
	// own. Two clocks: a test that fires the transition checks' timer must
	// not have a subscription check take its tick (an operator then slept
	// through a transition's end).
	After, SubscriptionAfter func(time.Duration) <-chan time.Time
	Log                      *slog.Logger
}

// Service holds BOS's records and runs its operators. Components live in
// memory (written through to the store), since every operator pass reads
// all of them.
type Service struct {
	store *Store
	hsm   HSM
	bss   BSS
	pcs   PCS
	cfs   Configurer
	// cmd is the configuration command's runner (also cfs), if any.
	cmd  *commandRunner
	cfg  Config
	log  *slog.Logger
	wake chan struct{}
	// retries paces the setup of sessions whose setup failed.
	retries backoff
	// subscribed is set once HSM holds bos's SCN subscription.
	subscribed atomic.Bool
	// tracked are the PCS transitions bos waits on.
	tracked tracker

	mu            sync.Mutex
	comps         map[string]*Component
	opts          map[string]any
	lastDiscovery time.Time
	// observed is the status operator's last reading, for the power operators.
	observed map[string]observation
	// overdue are components whose action's wait ended early, by the
	// action it applies to: the PCS transition it started was given up.
	overdue map[string]LastAction
}

// New loads the stored components and options.
func New(ctx context.Context, store *Store, h HSM, b BSS, p PCS, cfg Config) (*Service, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Manifests == nil {
		cfg.Manifests = http.DefaultClient
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.FallbackPoll <= 0 {
		cfg.FallbackPoll = time.Minute
	}
	if cfg.TransitionPoll <= 0 {
		cfg.TransitionPoll = 500 * time.Millisecond
	}
	if cfg.TransitionGiveUp <= 0 {
		cfg.TransitionGiveUp = DefaultTransitionGiveUp
	}
	if cfg.TransitionGiveUpChecks <= 0 {
		cfg.TransitionGiveUpChecks = DefaultTransitionGiveUpChecks
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.SubscriptionAfter == nil {
		cfg.SubscriptionAfter = time.After
	}
	s := &Service{store: store, hsm: h, bss: b, pcs: p, cfs: cfg.CFS, cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1),
		comps: map[string]*Component{}, tracked: newTracker(), overdue: map[string]LastAction{}}
	if cfg.Command != nil {
		s.cmd = newCommandRunner(*cfg.Command, store, cfg.After, s.Wake, cfg.Log)
		s.cfs = s.cmd
		if err := s.cmd.load(ctx); err != nil {
			return nil, err
		}
	}
	comps, err := store.Components(ctx)
	if err != nil {
		return nil, err
	}
	for i := range comps {
		s.comps[comps[i].ID] = &comps[i]
	}
	stored, err := store.Options(ctx)
	if err != nil {
		return nil, err
	}
	s.opts = mergeOptions(stored)
	return s, nil
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// Wake asks the operators for a pass now rather than at the next poll.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Options returns every option, defaults included.
func (s *Service) Options() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]any, len(s.opts))
	for k, v := range s.opts {
		out[k] = v
	}
	return out
}

func (s *Service) options() Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return typedOptions(s.opts)
}

// PatchOptions checks and stores a patch of the options.
func (s *Service) PatchOptions(ctx context.Context, p map[string]any) (map[string]any, error) {
	if err := validateOptions(p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	next := make(map[string]any, len(s.opts))
	for k, v := range s.opts {
		next[k] = v
	}
	for k, v := range p {
		next[k] = v
	}
	if err := s.store.PutOptions(ctx, next); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	s.opts = next
	s.mu.Unlock()
	s.Wake()
	return s.Options(), nil
}
