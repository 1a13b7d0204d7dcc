package cluster

// SetRecordValidation switches produce validation for the benchmark that
// measures its cost.
func SetRecordValidation(on bool) { skipRecordValidation.Store(!on) }
