package bustest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/bus"
)

// Wait bounds every wait in the suite. It is generous because a real broker
// on a loaded machine needs seconds to form a consumer group.
const Wait = 90 * time.Second

// Conformance checks the contract every bus.Bus shares: order per key, a new
// group starting at the oldest retained message, redelivery of a failed batch,
// commits that survive a member's departure, and members of one group sharing
// a topic through joins and leaves without losing a message. newBus returns a
// fresh, empty bus for each subtest and arranges its own cleanup.
func Conformance(t *testing.T, newBus func(t *testing.T) bus.Bus) {
	t.Run("KeyOrder", func(t *testing.T) { testKeyOrder(t, newBus(t)) })
	t.Run("LateGroupStartsAtOldest", func(t *testing.T) { testLateGroup(t, newBus(t)) })
	t.Run("EveryGroupSeesEverything", func(t *testing.T) { testTwoGroups(t, newBus(t)) })
	t.Run("RedeliversFailedBatch", func(t *testing.T) { testRedeliver(t, newBus(t)) })
	t.Run("FailedBatchOutlivesOtherGroups", func(t *testing.T) { testRedeliverPastOtherGroup(t, newBus(t)) })
	t.Run("CommittedNotRedelivered", func(t *testing.T) { testCommitted(t, newBus(t)) })
	t.Run("MembersJoinAndLeaveMidStream", func(t *testing.T) { testMembers(t, newBus(t)) })
}

// Messages returns n messages over keys xnames (x0c0s<k>b0n0), each key's
// values numbered in order: "<key>/<seq>". They are interleaved across keys.
func Messages(keys, n int) []bus.Message {
	out := make([]bus.Message, n)
	for i := range out {
		k := fmt.Sprintf("x0c0s%db0n0", i%keys)
		out[i] = bus.Message{Key: []byte(k), Value: fmt.Appendf(nil, "%s/%d", k, i/keys)}
	}
	return out
}

// Publish sends msgs in chunks of at most chunk messages, failing the test on error.
func Publish(t testing.TB, b bus.Publisher, topic string, msgs []bus.Message, chunk int) {
	t.Helper()
	for c := range slices.Chunk(msgs, chunk) {
		if err := b.Publish(t.Context(), topic, c...); err != nil {
			t.Fatalf("publish %d messages to %s: %v", len(c), topic, err)
		}
	}
}

// Recorder collects what a Handler was given and lets a test wait until a
// number of distinct values has arrived. The zero value is not usable: use
// NewRecorder.
type Recorder struct {
	mu   sync.Mutex
	msgs []bus.Message
	seen map[string]bool
	want int
	full chan struct{}
}

// NewRecorder returns a Recorder whose Wait returns once want distinct values
// have been recorded.
func NewRecorder(want int) *Recorder {
	return &Recorder{seen: map[string]bool{}, want: want, full: make(chan struct{})}
}

// Handle records msgs and returns nil; it is a bus.Handler.
func (r *Recorder) Handle(_ context.Context, msgs []bus.Message) error {
	r.Add(msgs)
	return nil
}

// Add records msgs.
func (r *Recorder) Add(msgs []bus.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := len(r.seen)
	for _, m := range msgs {
		r.msgs = append(r.msgs, m)
		r.seen[string(m.Value)] = true
	}
	if before < r.want && len(r.seen) >= r.want {
		close(r.full)
	}
}

// Wait blocks until the wanted number of distinct values arrived, failing the
// test after the suite's Wait bound.
func (r *Recorder) Wait(t testing.TB) {
	t.Helper()
	select {
	case <-r.full:
	case <-time.After(Wait):
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("after %v: %d of %d distinct messages arrived", Wait, len(r.seen), r.want)
	}
}

// Messages returns a copy of everything recorded, in arrival order.
func (r *Recorder) Messages() []bus.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// Values returns the recorded values as strings, in arrival order.
func (r *Recorder) Values() []string {
	var out []string
	for _, m := range r.Messages() {
		out = append(out, string(m.Value))
	}
	return out
}

// Member is one running Consume call.
type Member struct {
	cancel context.CancelFunc
	done   chan error
}

// StartMember runs b.Consume(topic, group, h) in a goroutine until Stop or
// the end of the test.
func StartMember(t testing.TB, b bus.Consumer, topic, group string, h bus.Handler) *Member {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	m := &Member{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- b.Consume(ctx, topic, group, h) }()
	t.Cleanup(func() { m.Stop(t) })
	return m
}

// Stop cancels the member and waits for Consume to return; Consume must
// return nil. Stop may be called more than once.
func (m *Member) Stop(t testing.TB) {
	t.Helper()
	m.cancel()
	select {
	case err, ok := <-m.done:
		if ok && err != nil {
			t.Errorf("Consume returned %v after cancellation, want nil", err)
		}
		if ok {
			close(m.done)
		}
	case <-time.After(Wait):
		t.Errorf("Consume did not return within %v of cancellation", Wait)
	}
}

func values(msgs []bus.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Value)
	}
	return out
}

// ByKey groups the values of msgs per key, in order.
func ByKey(msgs []bus.Message) map[string][]string {
	out := map[string][]string{}
	for _, m := range msgs {
		out[string(m.Key)] = append(out[string(m.Key)], string(m.Value))
	}
	return out
}

func testKeyOrder(t *testing.T, b bus.Bus) {
	const topic = "conformance-order"
	want := Messages(20, 1000)
	r := NewRecorder(len(want))
	StartMember(t, b, topic, "g", r.Handle)
	Publish(t, b, topic, want, 137)
	r.Wait(t)
	got := r.Messages()
	for _, m := range got {
		if m.Topic != topic {
			t.Fatalf("message %q has Topic %q, want %q", m.Value, m.Topic, topic)
		}
	}
	if diff := cmp.Diff(ByKey(want), ByKey(got)); diff != "" {
		t.Errorf("per-key delivery differs from publish order (-published +delivered):\n%s", diff)
	}
}

func testLateGroup(t *testing.T, b bus.Bus) {
	const topic = "conformance-late"
	want := Messages(3, 30)
	Publish(t, b, topic, want, 10)
	r := NewRecorder(len(want))
	StartMember(t, b, topic, "late", r.Handle)
	r.Wait(t)
	if diff := cmp.Diff(ByKey(want), ByKey(r.Messages())); diff != "" {
		t.Errorf("a group joining after publication (-published +delivered):\n%s", diff)
	}
}

// testTwoGroups starts two groups, publishes probes until both have seen one
// (the Memory bus only keeps messages for groups it knows), then checks that
// each group gets every message.
func testTwoGroups(t *testing.T, b bus.Bus) {
	const topic = "conformance-groups"
	want := Messages(5, 200)
	for _, g := range []string{"a", "b"} {
		probes, data := NewRecorder(1), NewRecorder(len(want))
		StartMember(t, b, topic, g, func(_ context.Context, msgs []bus.Message) error {
			data.Add(slices.DeleteFunc(slices.Clone(msgs), isProbe))
			probes.Add(slices.DeleteFunc(slices.Clone(msgs), func(m bus.Message) bool { return !isProbe(m) }))
			return nil
		})
		t.Cleanup(func() {
			if diff := cmp.Diff(ByKey(want), ByKey(data.Messages())); diff != "" {
				t.Errorf("group %s (-published +delivered):\n%s", g, diff)
			}
		})
		defer data.Wait(t) // after the publication below
		probeUntil(t, b, topic, probes)
	}
	Publish(t, b, topic, want, 50)
}

// probeUntil publishes a probe message every tick until r has one.
func probeUntil(t *testing.T, b bus.Publisher, topic string, r *Recorder) {
	t.Helper()
	probe := bus.Message{Key: []byte("probe"), Value: []byte("probe")}
	deadline := time.Now().Add(Wait)
	for len(r.Messages()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no probe arrived within %v", Wait)
		}
		Publish(t, b, topic, []bus.Message{probe}, 1)
		waitTick()
	}
}

func isProbe(m bus.Message) bool { return string(m.Key) == "probe" }

// waitTick paces polling loops that wait on a real network broker.
func waitTick() { <-time.After(20 * time.Millisecond) }

func testRedeliver(t *testing.T, b bus.Bus) {
	const topic = "conformance-redeliver"
	want := Messages(1, 10)
	Publish(t, b, topic, want, 10)
	var mu sync.Mutex
	var firsts []string // first value of every Handler call
	fails := 2
	r := NewRecorder(len(want))
	StartMember(t, b, topic, "g", func(ctx context.Context, msgs []bus.Message) error {
		mu.Lock()
		defer mu.Unlock()
		firsts = append(firsts, string(msgs[0].Value))
		if fails > 0 {
			fails--
			return errors.New("handler not ready")
		}
		return r.Handle(ctx, msgs)
	})
	r.Wait(t)
	if diff := cmp.Diff(values(want), r.Values()); diff != "" {
		t.Errorf("successfully handled (-published +handled):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(firsts) < 3 || firsts[0] != string(want[0].Value) || firsts[1] != firsts[0] || firsts[2] != firsts[0] {
		t.Errorf("first message of each call = %q, want the failed batch (%q) handed over again twice", firsts, want[0].Value)
	}
}

// testRedeliverPastOtherGroup: while one group's handler is failing a
// batch, another group consumes everything; the failed batch must still be
// handed over again (an in-memory log must not have trimmed it).
func testRedeliverPastOtherGroup(t *testing.T, b bus.Bus) {
	const topic = "conformance-redeliver-other"
	want := Messages(1, 10) // one key: one partition, one order
	Publish(t, b, topic, want, 10)
	release := make(chan struct{})
	failing := make(chan struct{})
	r := NewRecorder(len(want))
	var once sync.Once
	StartMember(t, b, topic, "slow", func(ctx context.Context, msgs []bus.Message) error {
		fail := false
		once.Do(func() { fail = true })
		if fail {
			close(failing)
			<-release
			return errors.New("handler not ready")
		}
		return r.Handle(ctx, msgs)
	})
	<-failing
	other := NewRecorder(len(want))
	StartMember(t, b, topic, "other", other.Handle)
	other.Wait(t) // the other group has everything while the batch is out
	close(release)
	r.Wait(t)
	if diff := cmp.Diff(values(want), r.Values()); diff != "" {
		t.Errorf("after a failed batch (-published +handled):\n%s", diff)
	}
}

// testCommitted stops a member right after it handled one batch; another
// member of the group must get exactly the rest.
func testCommitted(t *testing.T, b bus.Bus) {
	const topic = "conformance-commit"
	want := Messages(7, 3000)
	Publish(t, b, topic, want, 500)
	first := NewRecorder(1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- b.Consume(ctx, topic, "g", func(ctx context.Context, msgs []bus.Message) error {
			if ctx.Err() != nil {
				return ctx.Err() // stopped: leave the batch for the next member
			}
			first.Add(msgs)
			cancel()
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("first member: Consume = %v, want nil", err)
		}
	case <-time.After(Wait):
		t.Fatalf("first member did not stop within %v", Wait)
	}
	handled := first.Messages()
	if len(handled) == 0 || len(handled) >= len(want) {
		t.Fatalf("first member handled %d messages, want one batch of a %d-message backlog", len(handled), len(want))
	}
	rest := NewRecorder(len(want) - len(handled))
	StartMember(t, b, topic, "g", rest.Handle)
	rest.Wait(t)
	all := append(handled, rest.Messages()...)
	if diff := cmp.Diff(ByKey(want), ByKey(all)); diff != "" {
		t.Errorf("first member then second (-published +delivered; a duplicate means a committed batch came back):\n%s", diff)
	}
}

// testMembers runs a group through a leave and a join while messages flow
// and checks that every message was handled at least once. (Order per key
// across members is not part of the contract: Memory hands successive batches
// to different members.)
func testMembers(t *testing.T, b bus.Bus) {
	const topic = "conformance-members"
	want := Messages(50, 4000)
	all := NewRecorder(len(want))
	leaver := NewRecorder(1)
	m1 := StartMember(t, b, topic, "g", func(ctx context.Context, msgs []bus.Message) error {
		leaver.Add(msgs)
		return all.Handle(ctx, msgs)
	})
	Publish(t, b, topic, want[:1000], 100)
	leaver.Wait(t) // the first member is working
	StartMember(t, b, topic, "g", all.Handle)
	Publish(t, b, topic, want[1000:2000], 100)
	m1.Stop(t)
	Publish(t, b, topic, want[2000:3000], 100)
	joiner := StartMember(t, b, topic, "g", all.Handle)
	Publish(t, b, topic, want[3000:], 100)
	all.Wait(t)
	joiner.Stop(t)
	got := dedupe(all.Values())
	slices.Sort(got)
	wantVals := values(want)
	slices.Sort(wantVals)
	if diff := cmp.Diff(wantVals, got); diff != "" {
		t.Errorf("distinct values handled by the group (-published +handled):\n%s", diff)
	}
}

// dedupe drops values already seen, keeping first arrivals in order.
func dedupe(vals []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
