package mcp

import (
	"bytes"
	"sync"
)

// DefinitionProblems exposes the tool definition problems to the tests.
func DefinitionProblems() []string {
	tools()
	return definitionProblems
}

// SyncBuffer is a bytes.Buffer safe for a writer and a reader in
// different goroutines (a process's stderr, a logger).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
