package volume

import (
	"math"
	"testing"
)

func TestEveryTypeHasAListPrice(t *testing.T) {
	for _, typ := range TypeNames() {
		s := Spec{Type: typ, SizeBytes: 500 << 30}
		if typ == "io1" || typ == "io2" {
			s.ProvisionedIOPS = 1000
		}
		usd, basis := s.MonthlyUSD()
		if usd <= 0 || basis == "" {
			t.Errorf("%s 500 GiB: $%v (%s)", typ, usd, basis)
		}
	}
	// Seed 004's volumes: 500 GiB each, io1 at 25,000 IOPS; the IOPS cost most of io1's bill.
	io1, _ := Spec{Type: "io1", SizeBytes: 500 << 30, ProvisionedIOPS: 25000}.MonthlyUSD()
	gp2, _ := Spec{Type: "gp2", SizeBytes: 500 << 30}.MonthlyUSD()
	st1, _ := Spec{Type: "st1", SizeBytes: 500 << 30}.MonthlyUSD()
	sc1, _ := Spec{Type: "sc1", SizeBytes: 500 << 30}.MonthlyUSD()
	want := []float64{500*PriceIOPerGiBMonth + 25000*PriceIOPerIOPSMonth, 500 * PriceGP2PerGiBMonth, 500 * PriceST1PerGiBMonth, 500 * PriceSC1PerGiBMonth}
	for i, got := range []float64{io1, gp2, st1, sc1} {
		if math.Abs(got-want[i]) > 1e-9 {
			t.Errorf("volume %d: $%.2f, want $%.2f", i, got, want[i])
		}
	}
	if !(io1 > gp2 && gp2 > st1 && st1 > sc1) {
		t.Errorf("io1 $%.2f, gp2 $%.2f, st1 $%.2f, sc1 $%.2f: want that order", io1, gp2, st1, sc1)
	}
	gp3, _ := Spec{Type: "gp3", SizeBytes: 100 << 30, ProvisionedIOPS: 4000, ProvisionedMiBps: 225}.MonthlyUSD()
	if w := 100*PriceGP3PerGiBMonth + 1000*PriceGP3PerIOPSMonth + 100*PriceGP3PerMiBpsMonth; math.Abs(gp3-w) > 1e-9 {
		t.Errorf("gp3 with 1,000 IOPS and 100 MiB/s above the base: $%.2f, want $%.2f", gp3, w)
	}
}
