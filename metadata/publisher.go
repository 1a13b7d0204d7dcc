package metadata

import (
	"sync"
	"sync/atomic"
)

// Publisher holds the current image. Readers take it with Image, which
// is one atomic load: they never wait for a change being made. A source
// of images (the metadata file of a single node, the controller's log)
// publishes each new image whole, after it is durable.
//
// Components that act on changes (the replica manager making partitions
// leaders or followers, the group coordinator following its partitions)
// sleep on Wait and read the newest image when it fires: images published
// while they were busy are coalesced, so a slow subscriber never holds up
// the source, and every subscriber reaches the newest image.
type Publisher struct {
	cur atomic.Pointer[Image]

	mu   sync.Mutex
	next chan struct{} // closed at the next Publish; nil until Wait
}

// NewPublisher publishes img as the first image.
func NewPublisher(img *Image) *Publisher {
	p := &Publisher{}
	p.cur.Store(img)
	return p
}

// Image returns the current image.
func (p *Publisher) Image() *Image { return p.cur.Load() }

// Publish makes img the current image and wakes every waiter.
func (p *Publisher) Publish(img *Image) {
	p.cur.Store(img)
	p.mu.Lock()
	if p.next != nil {
		close(p.next)
		p.next = nil
	}
	p.mu.Unlock()
}

// Wait returns a channel closed at the next Publish. A subscriber takes
// Wait before Image, so that an image published in between is not
// missed:
//
//	for {
//		ch := pub.Wait()
//		apply(pub.Image())
//		<-ch
//	}
func (p *Publisher) Wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == nil {
		p.next = make(chan struct{})
	}
	return p.next
}
