package discovery

import "context"

// batcher group-commits calls to do: one is in flight at a time, and the
// items that arrive meanwhile go together in the next (up to max). A lone
// item waits for nothing; a burst costs its peer a few calls, not one per
// item. do returns one result per item, in order.
type batcher[T, R any] struct {
	max int
	do  func(ctx context.Context, items []T) []R
	in  chan batchItem[T, R]
}

type batchItem[T, R any] struct {
	v    T
	done chan R
}

func newBatcher[T, R any](max int, do func(context.Context, []T) []R) *batcher[T, R] {
	return &batcher[T, R]{max: max, do: do, in: make(chan batchItem[T, R])}
}

// call hands v to the running batcher and returns its result; the error is
// ctx's, when it ends first.
func (b *batcher[T, R]) call(ctx context.Context, v T) (R, error) {
	it := batchItem[T, R]{v: v, done: make(chan R, 1)}
	var zero R
	select {
	case b.in <- it:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case r := <-it.done:
		return r, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// run serves calls until ctx ends.
func (b *batcher[T, R]) run(ctx context.Context) {
	for {
		var batch []batchItem[T, R]
		select {
		case <-ctx.Done():
			return
		case it := <-b.in:
			batch = append(batch, it)
		}
	more:
		for len(batch) < b.max {
			select {
			case it := <-b.in:
				batch = append(batch, it)
			default:
				break more
			}
		}
		vs := make([]T, len(batch))
		for i, it := range batch {
			vs[i] = it.v
		}
		for i, r := range b.do(ctx, vs) {
			batch[i].done <- r
		}
	}
}
