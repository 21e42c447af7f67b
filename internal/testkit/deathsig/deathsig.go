// Package deathsig starts child processes that die with the program that started them.
package deathsig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
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

// Alive is false for processes that are gone or zombies: a zombie whose parent is still running (a test binary that
// started it) holds its pid but no longer any port or file.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Format: pid (comm) state ...; comm may contain spaces and parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
