package advise

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"persistlab/cost"
	"persistlab/lab/volume"
	"persistlab/param"
	"persistlab/scenario"
)

// Platform is where the app runs: Cloud Run, or a VM type of the volume catalogue.
type Platform struct {
	Kind     string // "cloudrun", "gce" or "ec2"
	Instance string // the VM type ("" on Cloud Run)
	CPUs     float64
	Memory   int64 // bytes
	// Bucket is the object store a bucket design writes to, a price list of package cost (GCS, S3
	// or R2): the platform's own cloud's unless --bucket names another ("": GCS).
	Bucket string
	// CloudSQLRTT is the network's round trip between the app's instance and a Cloud SQL server,
	// added to each exchange with it (0: none added; no published figure).
	CloudSQLRTT time.Duration
	// Instances are the Cloud Run instances serving at once, the load split between them (0 or 1:
	// one).
	Instances int
}

// MaxInstances is the most instances advise runs at once: the runner's bound on instances of the
// system under test sharing one backend.
const MaxInstances = 8

// WithInstances sets the instances serving at once (--instances): on Cloud Run, which scales a
// service out, 1 to MaxInstances.
func (p Platform) WithInstances(n int) (Platform, error) {
	switch {
	case n < 1 || n > MaxInstances:
		return p, &param.FieldError{Field: "--instances", Value: fmt.Sprint(n), Allowed: fmt.Sprintf("1 to %d instances serving at once", MaxInstances)}
	case n > 1 && p.Kind != "cloudrun":
		return p, &param.FieldError{Field: "--instances", Value: fmt.Sprint(n), Allowed: "1 on a VM (" + p.Instance + "); several with --platform cloudrun, which scales a service out"}
	}
	p.Instances = n
	return p, nil
}

// instances is how many instances serve at once: at least one.
func (p Platform) instances() int { return max(1, p.Instances) }

// WithBucket sets the bucket a bucket design writes to, by --bucket's word ("": the platform's
// own cloud's: S3 on EC2, else GCS).
func (p Platform) WithBucket(word string) (Platform, error) {
	if word == "" {
		p.Bucket = "GCS"
		if p.Kind == "ec2" {
			p.Bucket = "S3"
		}
		return p, nil
	}
	var words []string
	for _, b := range cost.Buckets { // --bucket's word is the price list's name in lower case
		if strings.EqualFold(word, b.Ops.Name) {
			p.Bucket = b.Ops.Name
			return p, nil
		}
		words = append(words, strings.ToLower(b.Ops.Name))
	}
	return p, &param.FieldError{Field: "--bucket", Value: word, Allowed: strings.Join(words, ", ") + " (unset: the platform's own cloud's)"}
}

// bucket is the platform's bucket's price list.
func (p Platform) bucket() string {
	if p.Bucket == "" {
		return "GCS"
	}
	return p.Bucket
}

// network is whose network the platform's traffic leaves, and bucketNetwork the bucket's.
func (p Platform) network() cost.Network {
	if p.Kind == "ec2" {
		return cost.NetworkAWS
	}
	return cost.NetworkGCP
}

func (p Platform) bucketNetwork() cost.Network {
	b, err := cost.BucketNamed(p.bucket())
	if err != nil {
		return cost.NetworkGCP // WithBucket takes only a price list's name
	}
	return b.Network
}

// Cloud Run's defaults and bounds (cloud.google.com/run/docs/configuring/services/cpu and
// .../memory-limits, as recorded 2026-11-28, not re-read: 1 vCPU and 512 MiB by default; up to 8
// vCPUs and 32 GiB).
const (
	CloudRunDefaultCPUs   = 1.0
	CloudRunDefaultMemory = 512 << 20
	CloudRunMaxCPUs       = 8.0
	CloudRunMaxMemory     = 32 << 30
)

// ParsePlatform reads --platform: "cloudrun", or a VM type of the volume catalogue (n1-standard-2
// on GCE, c4.large on EC2). cpus and memory size a Cloud Run instance (0: its defaults).
func ParsePlatform(name string, cpus float64, memory int64) (Platform, error) {
	vms := VMTypes()
	allowed := "cloudrun, or a VM type: " + strings.Join(vms, ", ")
	switch {
	case name == "cloudrun":
		if cpus == 0 {
			cpus = CloudRunDefaultCPUs
		}
		// Cloud Run takes 0.08 to 1 vCPU, or whole vCPUs up to 8; below 1 it requires
		// request-based billing, concurrency 1 and the first-generation environment
		// (cloud.google.com/run/docs/configuring/services/cpu, read 2026-12-01), which the
		// candidates' always-on instance and open loop do not model: whole vCPUs only.
		if math.IsNaN(cpus) || cpus < 1 || cpus > CloudRunMaxCPUs || cpus != math.Trunc(cpus) {
			return Platform{}, &param.FieldError{Field: "--cpus", Value: fmt.Sprint(cpus), Allowed: fmt.Sprintf("whole vCPUs, 1 to %g (below 1 vCPU Cloud Run requires request-based billing and concurrency 1, which advise does not model)", CloudRunMaxCPUs)}
		}
		least, most := cloudRunMemory(cpus)
		if memory == 0 {
			memory = max(CloudRunDefaultMemory, least)
		}
		if memory < least || memory > most {
			return Platform{}, &param.FieldError{Field: "--memory", Value: fmt.Sprint(memory), Allowed: fmt.Sprintf("Cloud Run's memory for %g vCPU, %s to %s", cpus, sizeText(least), sizeText(most))}
		}
		return Platform{Kind: "cloudrun", CPUs: cpus, Memory: memory}, nil
	case slices.Contains(vms, name):
		if cpus != 0 || memory != 0 {
			return Platform{}, &param.FieldError{Field: "--cpus/--memory", Value: name, Allowed: "only with --platform cloudrun: a VM type has its own"}
		}
		kind := "gce"
		if !strings.HasPrefix(name, "n1-") {
			kind = "ec2"
		}
		in := slices.IndexFunc(volume.Instances, func(i volume.Instance) bool { return i.Name == name })
		return Platform{Kind: kind, Instance: name, CPUs: vmCPUs(name), Memory: volume.Instances[in].MemoryBytes}, nil
	}
	return Platform{}, &param.FieldError{Field: "--platform", Value: name, Allowed: allowed}
}

// cloudRunMemory is the memory Cloud Run allows an instance of cpus whole vCPUs: up to 4 GiB a
// vCPU, and at least 2 GiB from 4 vCPUs, 4 GiB from 6 (the services page's vCPU and memory
// table: 1 vCPU up to 4 GiB, 2 up to 8, 4 from 2 to 16, 6 from 4 to 24, 8 from 4 to 32;
// cloud.google.com/run/docs/configuring/services/cpu, read 2026-12-01 in a stored copy).
func cloudRunMemory(cpus float64) (least, most int64) {
	least = 128 << 20
	switch {
	case cpus >= 6:
		least = 4 << 30
	case cpus >= 4:
		least = 2 << 30
	}
	return least, min(CloudRunMaxMemory, int64(cpus)*4<<30)
}

// VMTypes are the VM types a platform may name: the volume catalogue's instances.
func VMTypes() []string {
	var vms []string
	for _, in := range volume.Instances {
		if in.Name != "none" && !strings.HasPrefix(in.Name, "db-") {
			vms = append(vms, in.Name)
		}
	}
	return vms
}

// vmCPUs is a catalogue VM's vCPUs, from its name (n1-standard-N; c4.large has 2).
func vmCPUs(name string) float64 {
	var n float64
	if _, err := fmt.Sscanf(name, "n1-standard-%g", &n); err == nil {
		return n
	}
	return 2 // c4.large
}

// String says the platform in plain words.
func (p Platform) String() string {
	if p.Kind == "cloudrun" && p.instances() > 1 {
		return fmt.Sprintf("%d Cloud Run instances (%g vCPU, %s each)", p.instances(), p.CPUs, sizeText(p.Memory))
	}
	if p.Kind == "cloudrun" {
		return fmt.Sprintf("Cloud Run (%g vCPU, %s)", p.CPUs, sizeText(p.Memory))
	}
	return fmt.Sprintf("a %s VM (%s)", p.Instance, map[string]string{"gce": "GCE", "ec2": "EC2"}[p.Kind])
}

func sizeText(b int64) string {
	if b%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", b>>30)
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

// App is the system under test: a workload section, and what it can keep its data in.
type App struct {
	Name     string
	Workload scenario.Workload
	SQLite   bool // keeps one SQLite database (Litestream can replicate it)
	Pragmas  bool // takes its SQLite pragmas from the scenario (the counter's pragmas section)
	// Crashable: its workload says what it acknowledged and how to read what persisted, so a crash
	// run can count what was lost.
	Crashable bool
	MySQL     bool              // can use a MySQL server instead
	Metrics   map[string]string // the workload's metrics, by unit
	Kind      string            // KindRequests or KindChanges
	// K6Script is the user's k6 script that drives the steady runs (its own mix of requests, each
	// iteration of its default function started at the rate); the crash runs keep persistlab's
	// driver, which reads every acknowledgement. "" for persistlab's driver throughout.
	K6Script string
}

// CrashRequest is the request persistlab's driver sends in crash runs: the workload's method and
// path (a list of requests, where it has one, is said as such).
func (a App) CrashRequest() string {
	if _, ok := a.Workload.Sections["requests"]; ok {
		return "the workload's list of requests"
	}
	method, path := a.Workload.Params["method"], a.Workload.Params["path"]
	if method == "" {
		method = "GET"
	}
	if path == "" {
		path = "/"
	}
	return method + " " + path
}

// perIteration says what one unit of the rate is: a request, or an iteration of the user's k6
// script, which may make several.
func (a App) perIteration() bool { return a.K6Script != "" }

// Candidate is one storage design: a backend entry, in plain words, or why the app or the
// platform cannot use it.
type Candidate struct {
	Name     string            `json:"name"`
	Backend  string            `json:"backend"`
	Options  map[string]string `json:"options,omitempty"`
	What     string            `json:"what"`
	Excluded string            `json:"excluded,omitempty"`
	// Pragmas replace the app's SQLite pragmas of the same names (synchronous=FULL).
	Pragmas []string `json:"pragmas,omitempty"`
	// Volume is the block volume a volume candidate sizes, for its bill; Sizing says where its size
	// is not the one that sustains the rate (none does, or that one breaks the budget).
	Volume *volume.Spec `json:"-"`
	Sizing string       `json:"sizing,omitempty"`
	// Params are the workload parameters this design sets (git's core.fsync).
	Params map[string]string `json:"params,omitempty"`
	// Dominated says why a candidate runs only when named: another costs less and does at least as
	// much by the published figures.
	Dominated string `json:"dominated,omitempty"`
	// CrashFrom names the candidate whose crash runs stand for this one's ("": its own).
	CrashFrom string `json:"crash_from,omitempty"`
	// Bucket is what the design keeps in a bucket, which its bill prices: BucketNone, BucketData or
	// BucketReplica.
	Bucket string `json:"bucket,omitempty"`
	// Machine is a managed server's machine (Cloud SQL's), which its bill prices; "" for none.
	Machine string `json:"machine,omitempty"`
}

// What a design keeps in a bucket.
const (
	BucketNone = ""
	// BucketData: the data itself (gcsfuse): the instance holds none of it, so it may be billed
	// only while it serves.
	BucketData = "data"
	// BucketReplica: a copy (Litestream): the data lives on the instance, which must stay up.
	BucketReplica = "replica"
)

// runnable says whether the candidate is measured: not excluded, and not dominated.
func (c Candidate) runnable() bool { return c.Excluded == "" && c.Dominated == "" }

// SyncFull is the pragma that makes SQLite fsync at every commit: on storage that persists what
// is fsynced (a volume; gcsfuse, which uploads at fsync), no acknowledged write is lost, for a
// slower commit. Rails, and the counter like it, default to NORMAL, which syncs only at a
// checkpoint in WAL mode.
const SyncFull = "synchronous=FULL"

// StagedWrites is the gcsfuse flag under which an fsync uploads the file. gcsfuse 3's default,
// streaming writes, uploads a new file written in order as it goes, and "the fsync operation will
// not finalize the object" (gcsfuse v2.9.1's release notes, which introduced them): SQLite's WAL
// fsynced at every commit still vanishes with the instance (measured on 3.11.4 with
// synchronous=FULL: every acknowledged write lost in 3 crashes of 3; with staged writes none, at
// 0.8 commits a second: docs/runs/gcsfuse-fsync-a2fae25).
const StagedWrites = "--enable-streaming-writes=false"

// withSyncFull is c's variant with every commit fsynced, where the app takes its pragmas; on
// gcsfuse, with staged writes, so that the fsync reaches the bucket.
func withSyncFull(c Candidate) Candidate {
	c.Name += "-sync-full"
	c.Pragmas = []string{SyncFull}
	c.What += "; SQLite fsyncs every commit (synchronous=FULL, instead of the app's default)"
	if c.Backend == "gcsfuse" {
		c.Options = map[string]string{"flags": StagedWrites}
		c.What += ", and gcsfuse stages writes (" + StagedWrites + ") so that an fsync uploads the file"
	}
	return c
}

// bucketWords names a bucket of a price list in a sentence: "a bucket" on GCS, as before other
// stores were offered.
func bucketWords(list string) string {
	if list == "GCS" {
		return "a bucket"
	}
	return "an " + list + " bucket"
}

// LitestreamIntervals are the sync intervals offered: what a lost instance can cost, against
// the bucket writes each interval costs.
var LitestreamIntervals = []string{"1s", "10s", "60s"}

// AssumedIOsPerRequest is the volume I/Os one write request makes, for sizing a volume before
// anything is measured: SQLite's WAL append and its fsync, which ext4 turns into a journal
// commit (data and journal blocks). Assumed, not published: a volume sized by it that throttles
// shows it in the run's throttled time, and the bill of a larger size is a line away.
const AssumedIOsPerRequest = 4

// Candidates are the designs for app on platform at rate requests/s (changes/s for git) with a
// database of dbBytes, each either runnable or excluded with why; maxUSD (0: none) is the budget a
// git volume's size keeps to.
func Candidates(app App, p Platform, rate float64, dbBytes int64, maxUSD float64) []Candidate {
	if app.Kind == KindChanges {
		return gitCandidates(p, rate, dbBytes, maxUSD)
	}
	var out []Candidate
	ephemeral := "the instance's own disk"
	switch p.Kind {
	case "cloudrun":
		ephemeral += " (Cloud Run's in-memory file system, counted in its memory)"
	case "gce":
		ephemeral += " (a local SSD, whose price is not in the bill)"
	}
	local := Candidate{Name: "local", Backend: "local", What: "SQLite on " + ephemeral + ": everything on it is lost with the instance"}
	if p.Kind == "ec2" {
		// "Not every instance type provides instance store volumes" (docs.aws.amazon.com/AWSEC2/
		// latest/UserGuide/InstanceStorage.html, read 2026-11-28), and C4, the only EC2 type of the
		// catalogue, has none (aws.amazon.com/ec2/instance-types/c4: "EBS-Only"; as recorded, not
		// re-read).
		local.Excluded = "a " + p.Instance + " has no instance store (EBS only)"
	}
	gcsfuse := Candidate{Name: "gcsfuse", Backend: "gcsfuse", Bucket: BucketData, What: "SQLite on a Cloud Storage FUSE mount of a bucket (gcsfuse, as Cloud Run mounts one)"}
	inMemory := memoryExcluded(p, dbBytes)
	if local.Excluded == "" {
		local.Excluded = inMemory
	}
	gcsfuse.Excluded = inMemory
	if p.bucket() != "GCS" {
		gcsfuse.Excluded = "gcsfuse mounts Cloud Storage buckets only (--bucket " + strings.ToLower(p.bucket()) + "): a FUSE mount of " + p.bucket() + " is another program, not measured here"
	}
	out = append(out, local, gcsfuse)
	if app.Pragmas {
		out = append(out, withSyncFull(gcsfuse))
	}
	for _, iv := range LitestreamIntervals {
		c := Candidate{Name: "litestream-" + iv, Backend: "litestream", Bucket: BucketReplica, Options: map[string]string{"sync_interval": iv},
			What: "SQLite on the instance's disk, replicated by Litestream to " + bucketWords(p.bucket()) + " every " + iv}
		if !app.SQLite {
			c.Excluded = "Litestream replicates one SQLite database; this app keeps none"
		} else {
			c.Excluded = inMemory
		}
		out = append(out, c)
	}
	if !app.SQLite {
		out[0].What = strings.Replace(out[0].What, "SQLite on", "the app's files on", 1)
		out[1].What = strings.Replace(out[1].What, "SQLite on", "the app's files on", 1)
	}
	for _, t := range volumeTypes {
		c := Candidate{Name: t.name, Backend: "volume", What: t.what, Excluded: volumeExcluded(p, t.cloud)}
		if c.Excluded == "" {
			spec := SizeVolume(t.name, dbBytes, 2*rate*AssumedIOsPerRequest)
			spec.Instance = p.Instance
			c.Volume = &spec
			c.Options = map[string]string{"type": spec.Type, "size": fmt.Sprintf("%dGiB", spec.SizeBytes>>30), "instance": p.Instance}
			if spec.ProvisionedIOPS > 0 {
				c.Options["iops"] = fmt.Sprintf("%.0f", spec.ProvisionedIOPS)
			}
			c.Name = fmt.Sprintf("%s-%dg", t.name, spec.SizeBytes>>30)
			c.What += fmt.Sprintf(", %d GiB", spec.SizeBytes>>30)
		}
		out = append(out, c)
		if app.Pragmas && c.Excluded == "" {
			out = append(out, withSyncFull(c))
		}
	}
	out = append(out, cloudSQL(app, p, dbBytes))
	if n := p.instances(); n > 1 {
		for i := range out {
			if out[i].Excluded == "" {
				out[i].Excluded = unshared(out[i], n)
			}
		}
	}
	return out
}

// unshared says why a design cannot serve n instances at once ("": it can). Only a server is one
// place every instance writes to; each other design keeps its data where one instance alone
// writes it.
func unshared(c Candidate, n int) string {
	switch c.Backend {
	case "cloudsql":
		return ""
	case "local":
		return fmt.Sprintf("each of %d instances would keep a database of its own on its own disk: they would not share their data", n)
	case "gcsfuse":
		return fmt.Sprintf("%d instances on one SQLite database on gcsfuse lose updates (no lock spans the mounts; docs/findings.md, two instances on one gcsfuse database)", n)
	case "litestream":
		return fmt.Sprintf("Litestream replicates one writer's database: %d instances would each write and replicate their own", n)
	}
	return fmt.Sprintf("a volume attaches read-write to one machine: %d instances cannot share it", n)
}

// CloudSQLMachine is the machine the cloud-sql candidate runs: Cloud SQL's smallest dedicated-core
// one (1 vCPU, 3.75 GB), the lab volume catalogue's, which bounds the server's memory.
const CloudSQLMachine = "db-custom-1-3840"

// cloudSQL is the managed MySQL design: the app's data on a Cloud SQL server (the lab's: the real
// MariaDB on an emulated Cloud SQL disk), the app's instance keeping none of it. Its disk holds
// the database twice over, at least Cloud SQL's 10 GB.
func cloudSQL(app App, p Platform, dbBytes int64) Candidate {
	c := Candidate{Name: "cloud-sql", Backend: "cloudsql", Machine: CloudSQLMachine}
	gib := max(int64(volume.CloudSQLMinGiB), (2*dbBytes+(1<<30)-1)>>30)
	spec := volume.Spec{Type: "cloudsql-ssd", SizeBytes: gib << 30, Instance: CloudSQLMachine}
	c.Volume, c.Options = &spec, map[string]string{"machine": CloudSQLMachine, "size": fmt.Sprintf("%dGiB", gib)}
	if p.CloudSQLRTT > 0 {
		c.Options["network_rtt"] = p.CloudSQLRTT.String()
	}
	c.What = fmt.Sprintf("the app's data on a managed MySQL server (Cloud SQL %s, %d GiB SSD), the instance keeping none of it", CloudSQLMachine, gib)
	switch {
	case !app.MySQL && app.Pragmas:
		c.Excluded = "the app sets SQLite's pragmas (workload.pragmas), which a MySQL server has none of"
	case !app.MySQL:
		c.Excluded = "the app names no MySQL server: a MySQL server serves only an app that speaks MySQL (an http app's workload.mysql_env gives it the server's address)"
	case p.Kind == "ec2":
		c.Excluded = "Cloud SQL is Google's: an EC2 app's managed MySQL is RDS, which is not modelled"
	}
	return c
}

// cloudSQLSize is a Cloud SQL custom machine's vCPUs and memory, from its name
// (db-custom-CPUS-MiB), as Cloud SQL bills them.
func cloudSQLSize(machine string) (vcpus, gib float64, ok bool) {
	var cpus, mib float64
	if _, err := fmt.Sscanf(machine, "db-custom-%g-%g", &cpus, &mib); err != nil {
		return 0, 0, false
	}
	return cpus, mib / 1024, true
}

// offInstance says the design keeps none of the data on the app's instance (a bucket's data, a
// server's): the instance may be billed only while it serves.
func (c Candidate) offInstance() bool { return c.Bucket == BucketData || c.Backend == "cloudsql" }

// memoryExcluded says why a database of dbBytes on a Cloud Run instance's disk or its gcsfuse
// mount cannot run ("": it can). Cloud Run's own file system is in memory, and a Cloud Storage
// volume mount stages "the entire file" it writes "in Cloud Run memory before the file is written
// to Cloud Storage" (cloud.google.com/run/docs/configuring/services/cloud-storage-volume-mounts,
// read 2026-12-01 in a stored copy): a database as large as the instance's memory leaves the app
// none.
func memoryExcluded(p Platform, dbBytes int64) string {
	if p.Kind != "cloudrun" || dbBytes < p.Memory {
		return ""
	}
	return fmt.Sprintf("the database (%s) fills the instance's memory (%s): Cloud Run keeps its disk, and what gcsfuse stages of a file it writes, in memory (--memory above the database's size, or a smaller --db-size)", sizeText(dbBytes), sizeText(p.Memory))
}

// volumeExcluded says why a volume of a cloud cannot attach on the platform ("": it can).
func volumeExcluded(p Platform, cloud string) string {
	switch {
	case p.Kind == "cloudrun":
		return "Cloud Run attaches no block volumes (only buckets, NFS and in-memory volumes)"
	case p.Kind != cloud:
		return fmt.Sprintf("a %s volume attaches only to a %s VM", strings.ToUpper(cloud), strings.ToUpper(cloud))
	}
	return ""
}

// volumeTypes are the block volumes offered on a VM of their cloud.
var volumeTypes = []struct{ name, cloud, what string }{
	{"pd-balanced", "gce", "SQLite on a Persistent Disk, balanced"},
	{"pd-ssd", "gce", "SQLite on a Persistent Disk, SSD"},
	{"gp3", "ec2", "SQLite on an EBS gp3 volume"},
	{"gp2", "ec2", "SQLite on an EBS gp2 volume"},
	{"io2", "ec2", "SQLite on an EBS io2 volume"},
}

// MinVolumeGiB is the smallest volume offered: room for the database twice over (a VACUUM's copy)
// and the file system's own, whatever the type allows.
const MinVolumeGiB = 10

// SizeVolume is the smallest volume of the type that holds the database twice over and whose
// sustained IOPS meet iops (provisioned where the type takes it), within the type's range.
func SizeVolume(typ string, dbBytes int64, iops float64) volume.Spec {
	minGiB, _ := volume.SizeRange(typ)
	gib := max(int64(MinVolumeGiB), int64(minGiB), (2*dbBytes+(1<<30)-1)>>30)
	s := volume.Spec{Type: typ, SizeBytes: gib << 30}
	switch typ {
	case "io1", "io2":
		perGiB := volume.IO2IOPSPerGiB
		if typ == "io1" {
			perGiB = volume.IO1IOPSPerGiB
		}
		s.ProvisionedIOPS = math.Ceil(max(volume.IOMinIOPS, iops))
		s.SizeBytes = max(s.SizeBytes, int64(math.Ceil(s.ProvisionedIOPS/perGiB))<<30)
		return s
	case "gp3":
		if iops > volume.GP3BaseIOPS {
			s.ProvisionedIOPS = math.Ceil(min(iops, volume.GP3MaxIOPS))
			s.SizeBytes = max(s.SizeBytes, int64(math.Ceil(s.ProvisionedIOPS/volume.GP3IOPSPerGiB))<<30)
		}
		return s
	}
	if sustainedIOPS(s) >= iops {
		return s
	}
	// The smallest whole GiB that sustains iops, by bisection between the floor and the type's
	// largest valid size (sustained IOPS grow with size on these types).
	lo, hi := gib, gib
	for next := (s.SizeBytes >> 30) * 2; ; next *= 2 {
		t := s
		t.SizeBytes = next << 30
		if t.Validate() != nil {
			break
		}
		hi = next
		if sustainedIOPS(t) >= iops {
			break
		}
	}
	for lo < hi {
		mid := (lo + hi) / 2
		t := s
		t.SizeBytes = mid << 30
		if sustainedIOPS(t) >= iops {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	s.SizeBytes = hi << 30
	return s
}

// sustainedIOPS is what a volume sustains without burst credits: writes, where reads and writes
// have limits of their own; on HDD, units of 1 MiB, which its throughput bounds before its IOPS;
// within the instance's caps.
func sustainedIOPS(s volume.Spec) float64 {
	l := s.Limits()
	iops := l.BaseIOPS
	if l.WriteIOPS > 0 {
		iops = l.WriteIOPS
	}
	if l.HDD {
		iops = min(iops, l.BaseMiBps)
		if l.Instance.MiBps > 0 {
			iops = min(iops, l.Instance.MiBps)
		}
	}
	if l.Instance.IOPS > 0 {
		iops = min(iops, l.Instance.IOPS)
	}
	return iops
}
