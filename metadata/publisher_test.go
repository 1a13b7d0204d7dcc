package metadata

import (
	"sync"
	"testing"
)

// Readers of a Publisher see whole images only: every image a reader
// loads has as many partitions in topic t as its version says, while a
// writer publishes new ones. Run with -race.
func TestPublisherReadersSeeWholeImages(t *testing.T) {
	id := TopicID{15: 1}
	img, err := Apply(New("c"), TopicRecord{Name: "t", TopicID: id})
	if err != nil {
		t.Fatal(err)
	}
	pub := NewPublisher(img)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cur := pub.Image()
				tp, _ := cur.Topic("t")
				if int64(len(tp.Partitions)) != cur.Version()-1 {
					t.Errorf("version %d with %d partitions", cur.Version(), len(tp.Partitions))
					return
				}
			}
		}()
	}
	for p := int32(0); p < 500; p++ {
		next, err := Apply(pub.Image(), PartitionRecord{TopicID: id, PartitionID: p, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1})
		if err != nil {
			t.Fatal(err)
		}
		pub.Publish(next)
	}
	close(stop)
	wg.Wait()
}

// A subscriber that takes Wait before Image sees every publish, and
// publishes while it is busy coalesce into the newest image.
func TestPublisherWait(t *testing.T) {
	p := NewPublisher(New("c"))
	ch := p.Wait()
	select {
	case <-ch:
		t.Fatal("Wait fired before any Publish")
	default:
	}
	if p.Wait() != ch {
		t.Fatal("two waits before a publish got different channels")
	}
	img2, err := Apply(p.Image(), FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 1})
	if err != nil {
		t.Fatal(err)
	}
	img3, err := Apply(img2, FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 2})
	if err != nil {
		t.Fatal(err)
	}
	p.Publish(img2)
	p.Publish(img3)
	select {
	case <-ch:
	default:
		t.Fatal("Wait did not fire after Publish")
	}
	if got := p.Image(); got != img3 {
		t.Fatal("subscriber did not see the newest image")
	}
	if p.Wait() == ch {
		t.Fatal("a fired channel was handed out again")
	}
}
