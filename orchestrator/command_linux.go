package orchestrator

import "syscall"

// procAttr puts a configuration run in a process group of its own (a
// timeout or bos's stop kills the group) and has Linux send its shell
// SIGTERM when bos dies (killed, crashed), which its trap turns into the
// end of the whole group (see wrap).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
