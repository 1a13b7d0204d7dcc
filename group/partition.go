package group

import "unicode/utf16"

// OffsetsTopic is the internal topic holding groups and their offsets.
const OffsetsTopic = "__consumer_offsets"

// PartitionFor is the __consumer_offsets partition that holds groupID
// among n partitions: Kafka's Utils.abs(groupId.hashCode()) % n, with
// Java's String.hashCode over UTF-16 code units (invalid UTF-8 counts
// as U+FFFD per bad byte, as Go decodes it).
func PartitionFor(groupID string, n int) int32 {
	if n <= 0 {
		return 0
	}
	h := javaHashCode(groupID)
	if h == -1<<31 {
		h = 0 // Utils.abs(Integer.MIN_VALUE) is 0
	} else if h < 0 {
		h = -h
	}
	return h % int32(n)
}

func javaHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}
