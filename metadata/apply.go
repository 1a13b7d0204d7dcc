package metadata

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Errors of records that do not apply to an image.
var (
	ErrUnknownTopic     = errors.New("unknown topic")
	ErrTopicExists      = errors.New("topic already exists")
	ErrUnknownPartition = errors.New("unknown partition")
	ErrInvalidRecord    = errors.New("invalid metadata record")
)

// Apply replays recs over img and returns the next image; img itself
// never changes. The list applies whole or not at all: a record that
// does not apply (a topic named twice, a partition of an unknown topic,
// partitions out of order) fails it and no image is returned.
//
// The next image shares with img every topic the records leave alone;
// a changed topic is copied once per Apply, however many records touch
// it. Kafka's rule for PartitionChangeRecord holds: a record naming a
// leader bumps the leader epoch, and every change bumps the partition
// epoch.
func Apply(img *Image, recs ...Record) (*Image, error) {
	d := delta{base: img, next: *img, owned: map[TopicID]bool{}}
	for i, r := range recs {
		if err := d.replay(r); err != nil {
			return nil, fmt.Errorf("metadata record %d (%T): %w", i, r, err)
		}
	}
	for _, r := range recs {
		if !IsControl(r) {
			d.next.version++
		}
	}
	d.finishSorted()
	return &d.next, nil
}

// delta builds the next image. Maps of the base image are copied on
// their first write; topics are copied on their first change.
type delta struct {
	base               *Image
	next               Image
	brokersOwned       bool
	topicsOwned        bool
	scramOwned         bool
	quotasOwned        bool
	brokerConfigsOwned bool
	owned              map[TopicID]bool // topics copied (or created) by this delta
	resort             bool             // a topic was created or removed
	aclsOwned          bool             // next.acls is this delta's copy
}

func (d *delta) replay(r Record) error {
	switch r := r.(type) {
	case RegisterBrokerRecord:
		return d.registerBroker(r)
	case BrokerRegistrationChangeRecord:
		return d.changeBroker(r)
	case FenceBrokerRecord:
		return d.changeBroker(BrokerRegistrationChangeRecord{BrokerID: r.BrokerID, BrokerEpoch: r.BrokerEpoch, Fenced: FenceBroker})
	case UnfenceBrokerRecord:
		return d.changeBroker(BrokerRegistrationChangeRecord{BrokerID: r.BrokerID, BrokerEpoch: r.BrokerEpoch, Fenced: UnfenceBroker})
	case TopicRecord:
		return d.createTopic(r)
	case PartitionRecord:
		return d.createPartition(r)
	case PartitionChangeRecord:
		return d.changePartition(r)
	case RemoveTopicRecord:
		return d.removeTopic(r)
	case ConfigRecord:
		return d.config(r)
	case ProducerIdsRecord:
		return d.producerIDs(r)
	case FeatureLevelRecord:
		return d.featureLevel(r)
	case UserScramCredentialRecord:
		return d.scramCredential(r)
	case RemoveUserScramCredentialRecord:
		return d.removeScramCredential(r)
	case ClientQuotaRecord:
		return d.clientQuota(r)
	case AccessControlEntryRecord:
		return d.addACL(r)
	case RemoveAccessControlEntryRecord:
		return d.removeACL(r)
	case NoOpRecord, BeginTransactionRecord, EndTransactionRecord, AbortTransactionRecord:
		return nil // they frame changes; the reader of the log applies them (IsControl)
	}
	return fmt.Errorf("%w: unknown record type %T", ErrInvalidRecord, r)
}

func (d *delta) registerBroker(r RegisterBrokerRecord) error {
	if r.BrokerID < 0 {
		return fmt.Errorf("%w: broker id %d", ErrInvalidRecord, r.BrokerID)
	}
	if !d.brokersOwned {
		d.next.brokers, d.brokersOwned = maps.Clone(d.base.brokers), true
	}
	d.next.brokers[r.BrokerID] = &Broker{ID: r.BrokerID, IncarnationID: r.IncarnationID, Epoch: r.BrokerEpoch,
		Endpoints: slices.Clone(r.Endpoints), Rack: r.Rack, Fenced: r.Fenced, InControlledShutdown: r.InControlledShutdown}
	return nil
}

// changeBroker replays a change of a registration. As Kafka's
// ClusterControlManager, it refuses a change naming another epoch than
// the registration's: the record is about a registration that is gone.
func (d *delta) changeBroker(r BrokerRegistrationChangeRecord) error {
	b, ok := d.next.brokers[r.BrokerID]
	switch {
	case !ok:
		return fmt.Errorf("%w: change of unregistered broker %d", ErrInvalidRecord, r.BrokerID)
	case b.Epoch != r.BrokerEpoch:
		return fmt.Errorf("%w: change of broker %d epoch %d, registered with epoch %d", ErrInvalidRecord, r.BrokerID, r.BrokerEpoch, b.Epoch)
	case r.Fenced < UnfenceBroker || r.Fenced > FenceBroker:
		return fmt.Errorf("%w: broker %d fencing change %d", ErrInvalidRecord, r.BrokerID, r.Fenced)
	}
	if !d.brokersOwned {
		d.next.brokers, d.brokersOwned = maps.Clone(d.base.brokers), true
	}
	c := *b
	switch r.Fenced {
	case FenceBroker:
		c.Fenced = true
	case UnfenceBroker:
		c.Fenced = false
	}
	c.InControlledShutdown = c.InControlledShutdown || r.InControlledShutdown
	d.next.brokers[r.BrokerID] = &c
	return nil
}

func (d *delta) ownTopics() {
	if !d.topicsOwned {
		d.next.topics, d.next.byID = maps.Clone(d.base.topics), maps.Clone(d.base.byID)
		d.topicsOwned = true
	}
}

func (d *delta) createTopic(r TopicRecord) error {
	switch {
	case r.Name == "" || r.TopicID == (TopicID{}):
		return fmt.Errorf("%w: topic %q with id %x", ErrInvalidRecord, r.Name, r.TopicID)
	case d.next.topics[r.Name] != nil:
		return fmt.Errorf("%w: %s", ErrTopicExists, r.Name)
	case d.next.byID[r.TopicID] != nil:
		return fmt.Errorf("%w: id %x", ErrTopicExists, r.TopicID)
	}
	d.ownTopics()
	t := &Topic{Name: r.Name, ID: r.TopicID}
	d.next.topics[t.Name], d.next.byID[t.ID] = t, t
	d.owned[t.ID], d.resort = true, true
	return nil
}

// topic returns a topic this delta may change, copying it first.
func (d *delta) topic(id TopicID) (*Topic, error) {
	t, ok := d.next.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: id %x", ErrUnknownTopic, id)
	}
	if d.owned[id] {
		return t, nil
	}
	d.ownTopics()
	c := *t
	c.Partitions = slices.Clone(t.Partitions)
	d.next.topics[c.Name], d.next.byID[c.ID] = &c, &c
	d.owned[id] = true
	return &c, nil
}

func (d *delta) createPartition(r PartitionRecord) error {
	t, err := d.topic(r.TopicID)
	if err != nil {
		return err
	}
	if int(r.PartitionID) != len(t.Partitions) {
		return fmt.Errorf("%w: %s partition %d recorded after %d partitions", ErrInvalidRecord, t.Name, r.PartitionID, len(t.Partitions))
	}
	t.Partitions = append(t.Partitions, Partition{
		Replicas: slices.Clone(r.Replicas), ISR: slices.Clone(r.ISR), Leader: r.Leader,
		RemovingReplicas: cloneOrNil(r.RemovingReplicas), AddingReplicas: cloneOrNil(r.AddingReplicas),
		LeaderRecovery: r.LeaderRecovery, LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.PartitionEpoch,
	})
	return nil
}

func (d *delta) changePartition(r PartitionChangeRecord) error {
	t, err := d.topic(r.TopicID)
	if err != nil {
		return err
	}
	if r.PartitionID < 0 || int(r.PartitionID) >= len(t.Partitions) {
		return fmt.Errorf("%w: %s-%d", ErrUnknownPartition, t.Name, r.PartitionID)
	}
	p := &t.Partitions[r.PartitionID]
	if r.Leader != NoLeaderChange {
		p.Leader = r.Leader
		p.LeaderEpoch++
	}
	if r.ISR != nil {
		p.ISR = slices.Clone(r.ISR)
	}
	if r.Replicas != nil {
		p.Replicas = slices.Clone(r.Replicas)
	}
	if r.RemovingReplicas != nil {
		p.RemovingReplicas = cloneOrNil(r.RemovingReplicas)
	}
	if r.AddingReplicas != nil {
		p.AddingReplicas = cloneOrNil(r.AddingReplicas)
	}
	if r.LeaderRecovery != nil {
		p.LeaderRecovery = *r.LeaderRecovery
	}
	p.PartitionEpoch++
	return nil
}

func (d *delta) removeTopic(r RemoveTopicRecord) error {
	t, ok := d.next.byID[r.TopicID]
	if !ok {
		return fmt.Errorf("%w: id %x", ErrUnknownTopic, r.TopicID)
	}
	d.ownTopics()
	delete(d.next.topics, t.Name)
	delete(d.next.byID, t.ID)
	delete(d.owned, t.ID)
	d.resort = true
	return nil
}

func (d *delta) config(r ConfigRecord) error {
	if r.ResourceType == ConfigResourceBroker {
		return d.brokerConfig(r)
	}
	if r.ResourceType != ConfigResourceTopic {
		return fmt.Errorf("%w: config of resource type %d", ErrInvalidRecord, r.ResourceType)
	}
	named, ok := d.next.topics[r.ResourceName]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownTopic, r.ResourceName)
	}
	t, err := d.topic(named.ID)
	if err != nil {
		return err
	}
	c := maps.Clone(t.Configs)
	if r.Value != nil {
		if c == nil {
			c = map[string]string{}
		}
		c[r.Name] = *r.Value
	} else {
		delete(c, r.Name)
	}
	if len(c) == 0 {
		c = nil
	}
	t.Configs = c
	return nil
}

func (d *delta) producerIDs(r ProducerIdsRecord) error {
	if r.NextProducerID < d.next.producerIDs.NextProducerID {
		return fmt.Errorf("%w: producer id block going back from %d to %d", ErrInvalidRecord, d.next.producerIDs.NextProducerID, r.NextProducerID)
	}
	d.next.producerIDs = ProducerIDs{BrokerID: r.BrokerID, NextProducerID: r.NextProducerID}
	return nil
}

// featureLevel sets or (level 0) removes a finalized feature level.
// Kafka's FeatureControlManager replays it so.
func (d *delta) featureLevel(r FeatureLevelRecord) error {
	if r.Name == "" || r.FeatureLevel < 0 {
		return fmt.Errorf("%w: feature %q level %d", ErrInvalidRecord, r.Name, r.FeatureLevel)
	}
	f := maps.Clone(d.next.features)
	if f == nil {
		f = map[string]int16{}
	}
	if r.FeatureLevel == 0 {
		delete(f, r.Name)
	} else {
		f[r.Name] = r.FeatureLevel
	}
	d.next.features = f
	return nil
}

// finishSorted brings the name-ordered list up to date: rebuilt when
// topics came or went, otherwise copied with the changed topics put in
// their places.
func (d *delta) finishSorted() {
	if d.resort {
		d.next.sorted = slices.SortedFunc(maps.Values(d.next.topics), byName)
		return
	}
	if len(d.owned) == 0 {
		return
	}
	d.next.sorted = slices.Clone(d.base.sorted)
	for id := range d.owned {
		t := d.next.byID[id]
		i, _ := slices.BinarySearchFunc(d.next.sorted, t, byName)
		d.next.sorted[i] = t
	}
}

// cloneOrNil copies s; an empty s gives nil, so that an image holds one
// spelling of "none".
func cloneOrNil(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

func byName(a, b *Topic) int { return strings.Compare(a.Name, b.Name) }
