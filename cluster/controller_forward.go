package cluster

// Admin operations in a cluster whose metadata lives in the controller
// quorum. A broker never writes metadata itself there: it validates what
// it can locally (names, configurations, quotas), forwards the change to
// the active controller as Kafka's own request (KIP-590: any broker
// accepts admin requests), and answers once its own metadata image shows
// the result, so that a client's next Metadata request to this broker
// sees what it created. The partitions' directories are made by the
// replica manager as it follows the image, never here.
//
// A single node (no controller.quorum.voters) keeps its metadata file
// and none of this applies: b.ctrl is nil.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
)

// controllerChannel reaches the active controller (quorum.Client
// satisfies it): it retries NOT_CONTROLLER and lost connections until
// ctx ends.
type controllerChannel interface {
	Do(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// controllerTimeout bounds one forwarded change, from sending it to
// seeing it in this broker's image (Kafka's request.timeout.ms default
// for the forwarding channel is 30 s; admin clients time out at 60 s).
const controllerTimeout = 30 * time.Second

func (b *Broker) controllerContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	go func() {
		select {
		case <-b.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// awaitImage waits until this broker's image satisfies done, or ctx
// ends.
func (b *Broker) awaitImage(ctx context.Context, done func(*metadata.Image) bool) (*metadata.Image, error) {
	for {
		ch := b.meta.pub.Wait()
		img := b.meta.image()
		if done(img) {
			return img, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return img, fmt.Errorf("%w: the controller's change did not reach this broker: %v", kerr.RequestTimedOut, ctx.Err())
		}
	}
}

// forwardCreateTopics creates topics through the controller. specs are
// already checked (defaults filled); errs holds each one's local verdict
// and gets the controller's.
func (b *Broker) forwardCreateTopics(specs []topicSpec, errs []error, validateOnly bool, q quotaCheck) []*metadata.Topic {
	topics := make([]*metadata.Topic, len(specs))
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.ValidateOnly, req.TimeoutMillis = 7, validateOnly, int32(controllerTimeout/time.Millisecond)
	var sent []int
	for i, s := range specs {
		if errs[i] == nil && !validateOnly {
			errs[i] = q.admit(s.partitions)
		}
		if errs[i] != nil {
			continue
		}
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = s.name, s.partitions, s.rf
		if len(s.assignments) > 0 {
			t.NumPartitions, t.ReplicationFactor = -1, -1
			for _, a := range s.assignments {
				ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				ra.Partition, ra.Replicas = a.Partition, a.Replicas
				t.ReplicaAssignment = append(t.ReplicaAssignment, ra)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.configs)) {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			v := s.configs[k]
			c.Name, c.Value = k, &v
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return topics
	}
	ctx, cancel := b.controllerContext()
	defer cancel()
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		for _, i := range sent {
			errs[i] = fmt.Errorf("%w: %v", kerr.RequestTimedOut, err)
		}
		return topics
	}
	resp := kresp.(*kmsg.CreateTopicsResponse)
	created := map[string]metadata.TopicID{}
	for _, rt := range resp.Topics {
		i := slices.IndexFunc(sent, func(i int) bool { return specs[i].name == rt.Topic })
		if i < 0 {
			continue
		}
		idx := sent[i]
		if rt.ErrorCode != 0 {
			errs[idx] = controllerError(rt.ErrorCode, rt.ErrorMessage)
			continue
		}
		if validateOnly {
			topics[idx] = &metadata.Topic{Name: rt.Topic, ID: rt.TopicID, Partitions: make([]metadata.Partition, specs[idx].partitions)}
			continue
		}
		created[rt.Topic] = rt.TopicID
	}
	img, err := b.awaitImage(ctx, func(img *metadata.Image) bool {
		for name, id := range created {
			if t, ok := img.Topic(name); !ok || (id != metadata.TopicID{} && t.ID != id) {
				return false
			}
		}
		return true
	})
	for _, idx := range sent {
		if _, ok := created[specs[idx].name]; !ok {
			continue
		}
		if t, ok := img.Topic(specs[idx].name); ok {
			topics[idx] = t
			b.forgetTopicConfig(specs[idx].name)
			b.log.Info("topic created", "topic", specs[idx].name, "partitions", specs[idx].partitions,
				"replication_factor", specs[idx].rf, "configs", specs[idx].configs)
		} else {
			errs[idx] = err
		}
	}
	return topics
}

// forwardDeleteTopics deletes topics through the controller; the
// replica manager deletes their partitions as the image drops them.
func (b *Broker) forwardDeleteTopics(names []string, errs []error) {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version, req.TimeoutMillis = 6, int32(controllerTimeout/time.Millisecond)
	var sent []int
	for i, n := range names {
		if errs[i] != nil {
			continue
		}
		t := kmsg.NewDeleteTopicsRequestTopic()
		name := n
		t.Topic = &name
		req.Topics = append(req.Topics, t)
		req.TopicNames = append(req.TopicNames, n)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return
	}
	ctx, cancel := b.controllerContext()
	defer cancel()
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		for _, i := range sent {
			errs[i] = fmt.Errorf("%w: %v", kerr.RequestTimedOut, err)
		}
		return
	}
	gone := map[string]metadata.TopicID{}
	img := b.meta.image()
	for _, rt := range kresp.(*kmsg.DeleteTopicsResponse).Topics {
		if rt.Topic == nil {
			continue
		}
		i := slices.Index(names, *rt.Topic)
		if i < 0 {
			continue
		}
		if rt.ErrorCode != 0 {
			errs[i] = controllerError(rt.ErrorCode, rt.ErrorMessage)
			continue
		}
		if t, ok := img.Topic(*rt.Topic); ok {
			gone[t.Name] = t.ID
		}
	}
	_, err = b.awaitImage(ctx, func(img *metadata.Image) bool {
		for name, id := range gone {
			if t, ok := img.Topic(name); ok && t.ID == id {
				return false
			}
		}
		return true
	})
	for name := range gone {
		b.forgetTopicConfig(name)
		if err != nil {
			errs[slices.Index(names, name)] = err
		} else {
			b.log.Info("topic deleted", "topic", name)
		}
	}
}

// forwardCreatePartitions grows a topic through the controller.
func (b *Broker) forwardCreatePartitions(name string, count int32, assignments [][]int32, validateOnly bool) error {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version, req.ValidateOnly, req.TimeoutMillis = 3, validateOnly, int32(controllerTimeout/time.Millisecond)
	t := kmsg.NewCreatePartitionsRequestTopic()
	t.Topic, t.Count = name, count
	for _, replicas := range assignments {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = replicas
		t.Assignment = append(t.Assignment, a)
	}
	req.Topics = append(req.Topics, t)
	ctx, cancel := b.controllerContext()
	defer cancel()
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		return fmt.Errorf("%w: %v", kerr.RequestTimedOut, err)
	}
	resp := kresp.(*kmsg.CreatePartitionsResponse)
	if len(resp.Topics) != 1 {
		return fmt.Errorf("%w: the controller answered %d topics for 1", kerr.UnknownServerError, len(resp.Topics))
	}
	if c := resp.Topics[0].ErrorCode; c != 0 {
		return controllerError(c, resp.Topics[0].ErrorMessage)
	}
	if validateOnly {
		return nil
	}
	_, err = b.awaitImage(ctx, func(img *metadata.Image) bool {
		t, ok := img.Topic(name)
		return !ok || int32(len(t.Partitions)) >= count
	})
	return err
}

// forwardAlterConfigs sets (value) or deletes (nil) a topic's
// overrides through the controller.
func (b *Broker) forwardAlterConfigs(topic string, id metadata.TopicID, changes map[string]*string) error {
	ctx, cancel := b.controllerContext()
	defer cancel()
	if err := b.sendConfigChanges(ctx, kmsg.ConfigResourceTypeTopic, topic, changes); err != nil {
		return err
	}
	_, err := b.awaitImage(ctx, func(img *metadata.Image) bool {
		t, ok := img.Topic(topic)
		if !ok || t.ID != id {
			return true // deleted meanwhile: nothing to wait for
		}
		for k, v := range changes {
			cur, set := t.Configs[k]
			if (v == nil && set) || (v != nil && (!set || cur != *v)) {
				return false
			}
		}
		return true
	})
	return err
}

// allocateProducerIDs asks the controller for the next block of
// producer ids (Kafka's AllocateProducerIds, KIP-730).
func (b *Broker) allocateProducerIDs(brokerEpoch int64) (first, count int64, err error) {
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = b.nodeID, brokerEpoch
	ctx, cancel := b.controllerContext()
	defer cancel()
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", kerr.CoordinatorNotAvailable, err)
	}
	resp := kresp.(*kmsg.AllocateProducerIDsResponse)
	if resp.ErrorCode != 0 {
		return 0, 0, controllerError(resp.ErrorCode, nil)
	}
	return resp.ProducerIDStart, int64(resp.ProducerIDLen), nil
}

// controllerError is the kerr error for a controller's answer, with its
// message.
func controllerError(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// controllerPIDs is this broker's current block of producer ids from
// the controller (Kafka's RPCProducerIdManager): handed out one by one,
// a new block asked for when it runs out.
type controllerPIDs struct {
	mu        sync.Mutex
	next, end int64 // REQUIRES mu
}

// nextProducerID hands out a producer id: from the metadata file on a
// single node, from controller-allocated blocks in a cluster.
func (b *Broker) nextProducerID() (int64, error) {
	if b.ctrl == nil {
		return b.meta.nextProducerID()
	}
	p := &b.pids
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= p.end {
		first, n, err := b.allocateProducerIDs(b.brokerEpoch())
		if err != nil {
			return 0, err
		}
		p.next, p.end = first, first+n
	}
	id := p.next
	p.next++
	return id, nil
}

// sendConfigChanges sends one resource's changes (a value sets, nil
// deletes) to the active controller as an IncrementalAlterConfigs, and
// returns the controller's error for it. The caller waits for the image
// it needs.
func (b *Broker) sendConfigChanges(ctx context.Context, typ kmsg.ConfigResourceType, name string, changes map[string]*string) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = typ, name
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value, c.Op = k, changes[k], kmsg.IncrementalAlterConfigOpSet
		if changes[k] == nil {
			c.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources = append(req.Resources, rr)
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		return fmt.Errorf("%w: %v", kerr.RequestTimedOut, err)
	}
	resp := kresp.(*kmsg.IncrementalAlterConfigsResponse)
	if len(resp.Resources) != 1 {
		return fmt.Errorf("%w: the controller answered %d resources for 1", kerr.UnknownServerError, len(resp.Resources))
	}
	if c := resp.Resources[0].ErrorCode; c != 0 {
		return controllerError(c, resp.Resources[0].ErrorMessage)
	}
	return nil
}
