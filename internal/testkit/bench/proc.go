package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSSMiB is a process's peak resident memory (the kernel's VmHWM) in MiB, 0 once it is gone: the figure of a
// controller run out of process, whose memory is its own.
func PeakRSSMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// CPUSeconds is a process's user and system CPU time so far, from /proc (0 when it is gone); sampled before and
// after a measurement, the difference is what the measurement cost it.
func CPUSeconds(pid int) float64 {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	// utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name; the kernel counts in clock
	// ticks, 100 per second on Linux whatever the hardware.
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}
