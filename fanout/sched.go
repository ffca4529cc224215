package fanout

import (
	"context"
	"sync"
)

// sched runs senders on a fixed pool of workers (Config.MaxInFlight of
// them), so that the number of goroutines does not grow with the number of
// subscribers. A sender with work is put in the ready queue once; a worker
// takes it, sends its next batch and puts it back at the tail if more is
// queued, so 10,000 subscribers of one SCN share the workers in turn. Before,
// every subscriber URL had its own goroutine and they queued for a
// MaxInFlight semaphore: one SCN to 10,000 subscribers woke 10,000
// goroutines to contend for 64 slots, and the scheduler churn cost about
// as much CPU as the deliveries themselves (issue 20).
type sched struct {
	mu     sync.Mutex
	cond   *sync.Cond
	q      []*sender
	head   int
	closed bool
}

func newSched() *sched {
	s := &sched{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// add puts sd at the tail of the ready queue. The caller has marked sd
// scheduled, so it is in the queue at most once.
func (s *sched) add(sd *sender) {
	s.mu.Lock()
	s.q = append(s.q, sd)
	s.mu.Unlock()
	s.cond.Signal()
}

// addAll puts senders at the tail of the ready queue, as add does, under
// one lock: one SCN may wake 10,000 of them.
func (s *sched) addAll(sds []*sender) {
	if len(sds) == 0 {
		return
	}
	s.mu.Lock()
	s.q = append(s.q, sds...)
	s.mu.Unlock()
	s.cond.Broadcast()
}

// next waits for a ready sender; nil once the scheduler is closed.
func (s *sched) next() *sender {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.head == len(s.q) && !s.closed {
		s.cond.Wait()
	}
	if s.closed {
		return nil
	}
	sd := s.q[s.head]
	s.q[s.head] = nil
	s.head++
	if s.head == len(s.q) {
		s.q, s.head = s.q[:0], 0
	} else if s.head > 1024 && s.head*2 > len(s.q) {
		s.q = append(s.q[:0], s.q[s.head:]...)
		s.head = 0
	}
	return sd
}

func (s *sched) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

// run starts n workers and returns when ctx is cancelled and they stopped.
// stopping is called once ctx is cancelled, before waiting for the workers
// (it ends requests in flight).
func (s *sched) run(ctx context.Context, n int, stopping func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for sd := s.next(); sd != nil; sd = s.next() {
				sd.step(ctx)
			}
		})
	}
	<-ctx.Done()
	stopping()
	s.close()
	wg.Wait()
}
