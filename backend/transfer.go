package backend

import "time"

// Transfer is what an entry's cloud model says of moving a file's bytes through it, for a plan's
// estimate before anything runs: the least time the model allows, not what this machine does.
type Transfer struct {
	// WriteMiBps is the most one writer moves, in MiB/s (a bucket's per-request bandwidth, a
	// volume's published throughput); 0: the model sets none.
	WriteMiBps float64
	// Source says where WriteMiBps comes from, for the plan line: "the bucket model's stream_mib_s".
	Source string
	// WriteBack: each close of a handle that wrote a file uploads the whole file, and a later
	// handle's write reads it back whole first (gcsfuse stages a file's whole content locally).
	WriteBack bool
	// One write per object per ObjectWriteInterval after ObjectWriteBurst at once (a bucket's
	// published limit); 0: none.
	ObjectWriteInterval time.Duration
	ObjectWriteBurst    int
}

// Transferer describes an entry of a backend from its options; false when the entry has no model
// of its transfers in effect.
type Transferer func(options map[string]string) (Transfer, bool)

// TransferOf is what an entry of backend with options says of its transfers: its Info.Transfer,
// else its volume model's most written MiB/s; false when neither is in effect.
func TransferOf(backend string, options map[string]string) (Transfer, bool) {
	if info, ok := backends.Get(backend); ok && info.Transfer != nil {
		return info.Transfer(options)
	}
	if m, ok := VolumeModelOf(backend, options); ok && m.WriteMiBps > 0 {
		return Transfer{WriteMiBps: m.WriteMiBps, Source: m.Type + "'s published throughput"}, true
	}
	return Transfer{}, false
}
