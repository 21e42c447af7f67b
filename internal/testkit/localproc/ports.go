package localproc

import (
	"fmt"
	"net"
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

// freePortsOn asks the kernel for the ports and releases them before their user binds them: another process may take
// one in between. On developer machines and CI that race has not been seen; lost, it shows as "address already in use"
// in the user's log.
func freePortsOn(ip string, n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port on %s: %w", ip, err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
