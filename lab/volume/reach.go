package volume

import "sort"

// Largest is the volume of type typ and size gib with the most its provider lets one provision
// (io1 and io2: the most IOPS per GiB, up to the cap; gp3: the most IOPS and throughput): the
// published maximum of that size. Types whose limits follow from their size take none.
func Largest(typ string, gib int) Spec {
	s := Spec{Type: typ, SizeBytes: int64(gib) << 30}
	switch typ {
	case "io1", "io2":
		perGiB := IO1IOPSPerGiB
		if typ == "io2" {
			perGiB = IO2IOPSPerGiB
		}
		s.ProvisionedIOPS = min(IOMaxIOPS, perGiB*float64(gib))
	case "gp3": // below 6 GiB no IOPS beyond the baseline can be provisioned: 0 keeps it
		if iops := min(GP3MaxIOPS, GP3IOPSPerGiB*float64(gib)); iops > GP3BaseIOPS {
			s.ProvisionedIOPS = iops
		}
		s.ProvisionedMiBps = min(GP3MaxMiBps, GP3MiBpsPerIOPS*max(s.ProvisionedIOPS, GP3BaseIOPS))
	}
	return s
}

// SizeRange is the smallest and largest size of a type, in GiB, as its provider sells it now.
func SizeRange(typ string) (minGiB, maxGiB int) { return sizeRange(Spec{Type: typ}) }

// PeakWrite is the most a volume with these limits writes: billing units per second (one per
// 4 KiB write) and MiB per second, at its burst where it has one.
func (l Limits) PeakWrite() (iops, mibps float64) {
	iops = max(l.BaseIOPS, l.BurstIOPS)
	if l.WriteIOPS > 0 {
		iops = l.WriteIOPS
	}
	mibps = max(l.BaseMiBps, l.BurstMiBps)
	if l.WriteMiBps > 0 {
		mibps = l.WriteMiBps
	}
	return iops, mibps
}

// PeakWriteOn is PeakWrite within the caps of the instance the volume is attached to: the most
// the instance can write to it (io1's 25,000 IOPS on a c4.large give 4,000).
func (l Limits) PeakWriteOn() (iops, mibps float64) {
	iops, mibps = l.PeakWrite()
	if c := l.Instance.IOPS; c > 0 {
		iops = min(iops, c)
	}
	for _, c := range []float64{l.Instance.MiBps, l.Instance.WriteMiBps} {
		if c > 0 {
			mibps = min(mibps, c)
		}
	}
	return iops, mibps
}

// Reach is what the emulator can give a type on a machine whose own ceiling (model off) is
// ceilIOPS 4 KiB writes and ceilMiBps MiB/s of writes, using at most share of either.
type Reach struct {
	Type            string
	Max             Spec    // the published maximum: the largest size, the most provisioned
	MaxIOPS, MaxMiB float64 // its peak writes
	AtMax           bool    // the emulator reaches the published maximum here
	// Upto is the largest size whose published maximum the emulator reaches (UptoOK false: not
	// even the smallest), with its peak writes.
	Upto               Spec
	UptoOK             bool
	UptoIOPS, UptoMiB  float64
	CeilIOPS, CeilMiBs float64
}

// Reaches says, for every type, whether the emulator can give its published maximum on this
// machine and, if not, up to which size it can. Every type's peak writes grow with its size.
func Reaches(ceilIOPS, ceilMiBps, share float64) []Reach {
	fits := func(s Spec) (bool, float64, float64) {
		iops, mib := s.Limits().PeakWrite()
		return iops < share*ceilIOPS && mib < share*ceilMiBps, iops, mib
	}
	var out []Reach
	for _, t := range Types() {
		lo, hi := SizeRange(t.Name)
		r := Reach{Type: t.Name, Max: Largest(t.Name, hi), CeilIOPS: ceilIOPS, CeilMiBs: ceilMiBps}
		r.AtMax, r.MaxIOPS, r.MaxMiB = fits(r.Max)
		// The largest size that fits: sizes lo..hi, the first that does not fit found by bisection.
		n := sort.Search(hi-lo+1, func(i int) bool { ok, _, _ := fits(Largest(t.Name, lo+i)); return !ok })
		if n > 0 {
			r.Upto, r.UptoOK = Largest(t.Name, lo+n-1), true
			_, r.UptoIOPS, r.UptoMiB = fits(r.Upto)
		}
		out = append(out, r)
	}
	return out
}
