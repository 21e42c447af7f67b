// Package deathsig starts child processes that die with the program that started them.
package deathsig

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// The parent-death signal is sent when the thread that forked the child exits, not the process. Go may run
// cmd.Start on any thread; starting every child from one thread that is locked and never exits ties the signal to
// the exit of the process.
var (
	spawnerOnce sync.Once
	spawnerWork chan func()
)

// Start starts cmd so that the kernel sends it sig when this program exits, however it exits (a test binary killed by
// -timeout or SIGKILL included). It sets cmd.SysProcAttr.Pdeathsig, keeping the rest of SysProcAttr.
func Start(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	return StartOnSpawnerThread(cmd)
}

// StartOnSpawnerThread starts cmd from the one thread that never exits, whatever its SysProcAttr says.
func StartOnSpawnerThread(cmd *exec.Cmd) error {
	spawnerOnce.Do(func() {
		spawnerWork = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked, so this thread lives as long as the process
			for f := range spawnerWork {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnerWork <- func() { errc <- cmd.Start() }
	return <-errc
}
