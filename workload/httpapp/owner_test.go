package httpapp

import (
	"net/netip"
	"testing"
)

// Addresses are read from /proc/net/tcp as the kernel prints them: words of this machine's order.
func TestProcNetAddressesAreRead(t *testing.T) {
	for hexAddr, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:0016": "[::1]:22",
		"00000000000000000000000000000000:0016": "[::]:22",
		"0000000000000000FFFF00000100007F:0016": "[::ffff:127.0.0.1]:22",
	} {
		got, ok := parseAddr(hexAddr)
		if !ok || got.String() != want {
			t.Errorf("%s: %v %v, want %s", hexAddr, got, ok, want)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1": true, "127.9.9.9": true, "::1": true, "::ffff:127.0.0.1": true, "0.0.0.0": false, "::": false, "10.0.0.1": false, "::ffff:10.0.0.1": false} {
		if got := loopback(netip.MustParseAddr(addr)); got != want {
			t.Errorf("loopback(%s) = %v", addr, got)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007F:XYZ", "01007F:0050", "zz00007F:0050"} {
		if _, ok := parseAddr(bad); ok {
			t.Errorf("%q read as an address", bad)
		}
	}
}
