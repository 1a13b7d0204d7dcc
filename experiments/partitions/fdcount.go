package main

import (
	"os"
	"strings"
)

// countLines is the number of lines of a file, -1 if unreadable.
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), "\n")
}
