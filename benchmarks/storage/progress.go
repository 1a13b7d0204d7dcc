package storage

// Progress is told about each workload as it runs, so a command can show a
// progress bar. Start is called once per workload, from the goroutine that
// runs the suite; the Task it returns is used by that goroutine only.
type Progress interface {
	// Start announces a workload of total units (bytes, or milliseconds
	// for workloads bounded by time).
	Start(name string, total int64) Task
}

// Task is one workload's progress.
type Task interface {
	// SetCurrent reports how many units are done.
	SetCurrent(done int64)
	// Done says the workload finished (or failed).
	Done()
}

// nopProgress shows nothing.
type nopProgress struct{}

func (nopProgress) Start(string, int64) Task { return nopTask{} }

type nopTask struct{}

func (nopTask) SetCurrent(int64) {}
func (nopTask) Done()            {}
