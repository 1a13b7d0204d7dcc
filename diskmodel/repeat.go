package diskmodel

import (
	"context"
	"time"
)

// repeat calls once until it has minN results and budget has passed since
// the first call, or until it has maxN results, and returns the results.
// It checks ctx before every call.
func repeat(ctx context.Context, budget time.Duration, minN, maxN int, once func() (float64, error)) ([]float64, error) {
	start := time.Now()
	out := make([]float64, 0, minN)
	for len(out) < maxN && (len(out) < minN || time.Since(start) < budget) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, err := once()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
