package kafkabench

import (
	"context"
	"testing"
)

// BenchmarkProduceKfake produces b.N 200-byte records (acks=all,
// idempotent, client batching freely) to an in-process kfake cluster:
// the reference point issue 7 names, as a testing.B figure.
func BenchmarkProduceKfake(b *testing.B) {
	k, err := StartKfake(1)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	ctx := context.Background()
	if _, err := EnsureTopic(ctx, k.Addrs, "b", 1, 1); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(200)
	b.ResetTimer()
	if _, err := Produce(ctx, ProduceConfig{Brokers: k.Addrs, Topic: "b", Records: int64(b.N), RecordSize: 200}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConsumeKfake consumes b.N 200-byte records from kfake; the
// fill is untimed.
func BenchmarkConsumeKfake(b *testing.B) {
	k, err := StartKfake(1)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	ctx := context.Background()
	if _, err := EnsureTopic(ctx, k.Addrs, "b", 1, 1); err != nil {
		b.Fatal(err)
	}
	fill := ProduceConfig{Brokers: k.Addrs, Topic: "b", RecordSize: 200}
	if _, err := fill0(ctx, k, b.N, fill); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(200)
	b.ResetTimer()
	if _, err := Consume(ctx, ConsumeConfig{Brokers: k.Addrs, Topic: "b", Records: int64(b.N)}); err != nil {
		b.Fatal(err)
	}
}

func fill0(ctx context.Context, k *Kfake, n int, pc ProduceConfig) (*ProduceResult, error) {
	pc.Records = int64(n)
	return Produce(ctx, pc)
}
