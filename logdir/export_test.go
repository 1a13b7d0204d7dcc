package logdir

import "github.com/varve/varve/segment"

// SetMoveHook makes every later move call f after each of its steps; f
// returning false stops the move there, leaving its files as a crash
// would.
func (m *Manager) SetMoveHook(f func(tp segment.TopicPartition, step MoveStep) bool) { m.moveHook = f }
