package txn

import "unicode/utf16"

// Topic is the internal topic holding the coordinators' records.
const Topic = "__transaction_state"

// PartitionFor is the __transaction_state partition that holds
// transactionalID among n partitions: Kafka's
// Utils.abs(transactionalId.hashCode()) % n, with Java's
// String.hashCode over UTF-16 code units.
func PartitionFor(transactionalID string, n int) int32 {
	if n <= 0 {
		return 0
	}
	var h int32
	for _, u := range utf16.Encode([]rune(transactionalID)) {
		h = 31*h + int32(u)
	}
	if h == -1<<31 {
		return 0 // Utils.abs(Integer.MIN_VALUE) is 0
	}
	if h < 0 {
		h = -h
	}
	return h % int32(n)
}

// TopicPartition names a partition taking part in a transaction.
type TopicPartition struct {
	Topic     string
	Partition int32
}
