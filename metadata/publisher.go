package metadata

import "sync/atomic"

// Publisher holds the current image. Readers take it with Image, which
// is one atomic load: they never wait for a change being made. A source
// of images (the metadata file of a single node, the controller's log)
// publishes each new image whole, after it is durable.
type Publisher struct {
	cur atomic.Pointer[Image]
}

// NewPublisher publishes img as the first image.
func NewPublisher(img *Image) *Publisher {
	p := &Publisher{}
	p.cur.Store(img)
	return p
}

// Image returns the current image.
func (p *Publisher) Image() *Image { return p.cur.Load() }

// Publish makes img the current image.
func (p *Publisher) Publish(img *Image) { p.cur.Store(img) }
