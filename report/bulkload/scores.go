package bulkload

import (
	"fmt"

	"persistlab/report"
	"persistlab/results"
)

// Seed 001's figures beyond its write operations (seed001WriteOps): the second loader's gain,
// as the seed states it per disk size, and pages written per write operation at 50 GB.
var seed001SecondLoader = map[int]struct {
	gain float64
	note string
}{
	50:  {1, `pattern 2: "almost the same as pattern 1"`},
	100: {1, `pattern 4: "IO metrics unchanged from pattern 3"`},
	400: {2800.0 / 2500, "pattern 7: 2,800 against pattern 6's 2,500 write ops/s"},
}

// seed001Scores: the growth of write operations per doubling of the disk, the second loader's
// gain, pages written per write operation, and the CPU in use, as seed 001 states them.
func seed001Scores(r *results.Results) []report.Score {
	rows := bulkRows(r)
	ops := map[int]map[string]float64{} // disk GB, loaders: write ops/s
	var cpu, pages, writes float64
	for _, row := range rows {
		if row.gib == 0 || row.m["volume_write_ops_per_s"] <= 0 {
			continue
		}
		if ops[row.gib] == nil {
			ops[row.gib] = map[string]float64{}
		}
		loaders := row.loaders
		if loaders == "" {
			loaders = "1"
		}
		ops[row.gib][loaders] = row.m["volume_write_ops_per_s"]
		if row.gib == 50 && loaders == "1" {
			cpu, pages, writes = row.m["server_cpu_util"], row.m["pages_written_per_s"], row.m["volume_write_ops_per_s"]
		}
	}
	var out []report.Score
	steps := [][2]int{{50, 100}, {100, 200}, {200, 400}, {400, 600}}
	for _, st := range steps {
		a, b := st[0], st[1]
		s := report.Score{Figure: fmt.Sprintf("write ops/s, %d GB over %d GB", b, a)}
		if x, y := seed001WriteOps[a], seed001WriteOps[b]; x > 0 && y > 0 {
			s.Seed = y / x
		} else if a == seed001StatedSameFrom && b == 600 {
			s.Seed, s.Note = 1, `seed: "almost the same result as pattern 6"`
		}
		if x, y := ops[a]["1"], ops[b]["1"]; x > 0 && y > 0 {
			s.Ours, s.Measured = y/x, true
		}
		out = append(out, s)
	}
	for _, gb := range []int{50, 100, 400} {
		st := seed001SecondLoader[gb]
		s := report.Score{Figure: fmt.Sprintf("write ops/s, two loaders over one, %d GB", gb), Seed: st.gain, Note: "seed: " + st.note}
		if x, y := ops[gb]["1"], ops[gb]["2"]; x > 0 && y > 0 {
			s.Ours, s.Measured = y/x, true
		}
		out = append(out, s)
	}
	out = append(out, report.Score{Figure: "InnoDB pages written per write op, 50 GB", Seed: 480.0 / 600, Ours: pages / writes, Measured: writes > 0 && pages > 0},
		report.Score{Figure: "server CPUs in use, 50 GB (a different CPU)", Seed: seed001CPUShare * seed001VCPUs, Ours: cpu, Measured: cpu > 0,
			Note:     fmt.Sprintf("seed: about %.0f%% of %d vCPUs", 100*seed001CPUShare, seed001VCPUs),
			Reported: "an absolute level, set by the speed of the CPU the server runs on and by how much it loads (the seed's whole instance loading 43 GB, mariadbd here loading 2 GB per loader)"})
	return out
}
