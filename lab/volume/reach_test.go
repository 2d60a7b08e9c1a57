package volume

import (
	"math"
	"testing"
)

// Largest is the catalog's own maximum: its rules accept it, and refuse a GiB or an IOPS more.
func TestLargestIsThePublishedMaximum(t *testing.T) {
	for _, ty := range Types() {
		lo, hi := SizeRange(ty.Name)
		for _, gib := range []int{lo, hi} {
			if err := Largest(ty.Name, gib).Validate(); err != nil {
				t.Errorf("%s at %d GiB: %v", ty.Name, gib, err)
			}
		}
		if err := Largest(ty.Name, hi+1).Validate(); err == nil {
			t.Errorf("%s: %d GiB accepted, above the largest", ty.Name, hi+1)
		}
		if s := Largest(ty.Name, hi); s.ProvisionedIOPS > 0 {
			s.ProvisionedIOPS++
			if err := s.Validate(); err == nil {
				t.Errorf("%s: %v IOPS accepted, above the most provisionable", ty.Name, s.ProvisionedIOPS)
			}
		}
	}
}

// Reaches finds, for every type, the largest size whose published maximum stays under the
// emulator's ceiling, and the next size up does not.
func TestReachesIsTheLargestSizeUnderTheCeiling(t *testing.T) {
	const share = 0.8
	for _, ceil := range []struct{ iops, mib float64 }{{20000, 300}, {60000, 3000}, {1000, 50}} {
		for _, r := range Reaches(ceil.iops, ceil.mib, share) {
			under := func(s Spec) bool {
				iops, mib := s.Limits().PeakWrite()
				return iops < share*ceil.iops && mib < share*ceil.mib
			}
			_, hi := SizeRange(r.Type)
			if r.AtMax != under(r.Max) {
				t.Errorf("%s at %v: at its maximum %v, yet %v", r.Type, ceil, r.AtMax, under(r.Max))
			}
			if !r.UptoOK {
				lo, _ := SizeRange(r.Type)
				if under(Largest(r.Type, lo)) {
					t.Errorf("%s at %v: the smallest fits, yet none found", r.Type, ceil)
				}
				continue
			}
			gib := int(r.Upto.SizeBytes >> 30)
			if !under(r.Upto) || (gib < hi && under(Largest(r.Type, gib+1))) || r.AtMax != (gib == hi) {
				t.Errorf("%s at %v: up to %d GiB (at max %v)", r.Type, ceil, gib, r.AtMax)
			}
		}
	}
	for _, r := range Reaches(math.Inf(1), math.Inf(1), share) {
		if !r.AtMax {
			t.Errorf("%s: an unbounded emulator does not reach its maximum", r.Type)
		}
	}
}

// A volume attached to an instance writes no faster than the instance's caps let it, however much
// the volume itself takes; without an instance it writes at its own peak.
func TestPeakWriteOnAnInstanceIsWithinItsCaps(t *testing.T) {
	spec := Spec{Type: "io1", SizeBytes: 500 << 30, ProvisionedIOPS: 25000}
	alone := spec.Limits()
	ownIOPS, ownMiB := alone.PeakWrite()
	if iops, mib := alone.PeakWriteOn(); iops != ownIOPS || mib != ownMiB {
		t.Errorf("no instance: %v IOPS, %v MiB/s, want the volume's own %v, %v", iops, mib, ownIOPS, ownMiB)
	}
	spec.Instance, spec.Era = "c4.large", "2018"
	on := spec.Limits()
	iops, mib := on.PeakWriteOn()
	if on.Instance.IOPS <= 0 || iops != min(ownIOPS, on.Instance.IOPS) || iops >= ownIOPS || mib > on.Instance.MiBps {
		t.Errorf("on %s (%+v): %v IOPS, %v MiB/s; the volume alone %v, %v", spec.Instance, on.Instance, iops, mib, ownIOPS, ownMiB)
	}
}
