package localproc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort is a TCP port free on 127.0.0.1 when asked.
func FreePort() (int, error) {
	return FreePortOn("127.0.0.1")
}

// FreePortOn is a TCP port free on ip when asked.
func FreePortOn(ip string) (int, error) {
	ports, err := freePortsOn(ip, 1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts are n distinct TCP ports free on 127.0.0.1 when asked, all held open until the last is found so that none
// is handed out twice.
func FreePorts(n int) ([]int, error) {
	return freePortsOn("127.0.0.1", n)
}

// lowestPort is where the ports handed out start: above the ports services commonly listen on.
const lowestPort = 10000

// freePortsOn finds the ports by binding them, and releases them before their user binds them. They are taken below
// the kernel's ephemeral range when there is room: a port from that range (what binding port 0 gives) can meanwhile
// become the source port of any outgoing connection on the machine, and the user's bind then fails with "address
// already in use" (seen once: a kube-scheduler's port taken by the loopback traffic of a busy run). Below the range
// only a process that binds that very port can take it.
func freePortsOn(ip string, n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	top := ephemeralStart() - 1
	ports := make([]int, 0, n)
	for range n {
		l := listenBelowEphemeral(ip, top)
		var err error
		if l == nil {
			l, err = net.Listen("tcp", net.JoinHostPort(ip, "0"))
		}
		if err != nil {
			return nil, fmt.Errorf("finding a free port on %s: %w", ip, err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// listenBelowEphemeral listens on a random free port between lowestPort and top; nil when none was found in a few
// tries (or there is no such room).
func listenBelowEphemeral(ip string, top int) net.Listener {
	if top-lowestPort < 1000 {
		return nil
	}
	for range 50 {
		port := lowestPort + rand.IntN(top-lowestPort+1)
		if l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port))); err == nil {
			return l
		}
	}
	return nil
}

// ephemeralStart is the first port of the kernel's ephemeral range (Linux's default when it cannot be read).
func ephemeralStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 32768
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return start
}
