package localproc

import "testing"

// The ports handed out are distinct, free, and below the kernel's ephemeral range (where no outgoing connection can
// take one before its user binds it).
func TestFreePortsAreBelowTheEphemeralRange(t *testing.T) {
	ports, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	start := ephemeralStart()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
		if start-lowestPort >= 1000 && (p < lowestPort || p >= start) {
			t.Errorf("port %d outside [%d, %d)", p, lowestPort, start)
		}
	}
}
