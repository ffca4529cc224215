package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestMemoryDeliversInOrderToEachGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		ctx, cancel := context.WithCancel(t.Context())
		got := map[string][]string{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, g := range []string{"a", "b"} {
			wg.Go(func() {
				_ = m.Consume(ctx, "t", g, func(_ context.Context, msgs []Message) error {
					mu.Lock()
					defer mu.Unlock()
					for _, msg := range msgs {
						got[g] = append(got[g], string(msg.Value))
					}
					return nil
				})
			})
		}
		synctest.Wait() // both groups have joined before anything is published
		for i := range 5 {
			if err := m.Publish(ctx, "t", Message{Value: fmt.Appendf(nil, "%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		cancel()
		wg.Wait()
		for _, g := range []string{"a", "b"} {
			if fmt.Sprint(got[g]) != "[0 1 2 3 4]" {
				t.Errorf("group %s got %v", g, got[g])
			}
		}
	})
}

func TestMemoryRedeliversFailedBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		ctx, cancel := context.WithCancel(t.Context())
		_ = m.Publish(ctx, "t", Message{Value: []byte("x")}, Message{Value: []byte("y")})
		var seen []string
		fails := 2
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = m.Consume(ctx, "t", "g", func(_ context.Context, msgs []Message) error {
				if fails > 0 {
					fails--
					return errors.New("not yet")
				}
				for _, msg := range msgs {
					seen = append(seen, string(msg.Value))
				}
				return nil
			})
		}()
		time.Sleep(time.Minute) // fake clock: lets the backoff elapse
		synctest.Wait()
		cancel()
		<-done
		if fmt.Sprint(seen) != "[x y]" {
			t.Fatalf("seen %v, want [x y] once after two failures", seen)
		}
	})
}

func TestMemoryRetentionDropsOldest(t *testing.T) {
	m := NewMemory()
	m.Retention = 3
	for i := range 5 {
		_ = m.Publish(t.Context(), "t", Message{Value: fmt.Appendf(nil, "%d", i)})
	}
	if d := m.Dropped("t"); d != 2 {
		t.Fatalf("dropped = %d, want 2", d)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var first string
	_ = m.Consume(ctx, "t", "late", func(_ context.Context, msgs []Message) error {
		first = string(msgs[0].Value)
		cancel()
		return nil
	})
	if first != "2" {
		t.Fatalf("first retained = %q, want 2", first)
	}
}

func TestMemoryCloseStopsConsumersAndPublishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory()
		errc := make(chan error, 1)
		go func() {
			errc <- m.Consume(t.Context(), "t", "g", func(context.Context, []Message) error { return nil })
		}()
		synctest.Wait()
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("Consume after Close = %v, want ErrClosed", err)
		}
		if err := m.Publish(t.Context(), "t", Message{}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Publish after Close = %v, want ErrClosed", err)
		}
	})
}

func TestMemoryNoBatchAfterCancel(t *testing.T) {
	m := NewMemory()
	_ = m.Publish(t.Context(), "t", Message{Value: []byte("x")})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	called := false
	if err := m.Consume(ctx, "t", "g", func(context.Context, []Message) error { called = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if called {
		t.Fatal("handler called after the context was cancelled")
	}
}
