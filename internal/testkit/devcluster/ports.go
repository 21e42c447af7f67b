package devcluster

import (
	"fmt"
	"net"
)

// freePorts asks the kernel for n distinct unused loopback ports. They are released before the components
// bind them, so another process could take one in between; on a developer machine or CI runner that race has
// not been seen, and a lost race shows up as a component crash with "address already in use" in its log.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
