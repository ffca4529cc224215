//go:build !linux

package orchestrator

import "syscall"

// procAttr puts a configuration run in a process group of its own. Only
// Linux can end it when bos dies; elsewhere a killed bos's restart kills
// what is left of it (killOrphans finds nothing without /proc).
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
