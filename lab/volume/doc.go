// Package volume is the lab's cloud block volume (EBS, Persistent Disk, Cloud SQL's storage): a
// real file system on a loop device whose image persistlab serves through FUSE, so that every I/O
// passes a Model of the type's published limits (IOPS and throughput in the provider's billing
// units, burst credits, the instance's caps, a service time) and is counted as the provider
// bills it. Start makes one from a Config, which ConfigFromOptions reads from the options the
// volume backend and `persistlab lab volume` share. Beside it: the catalog of types with the
// sources of their figures, list prices, the model's table for package provenance, the rate a
// steady job should get (Expect), what this machine can give each type (Reach), and ProbeDirect,
// which measures what a file system here moves with direct I/O.
package volume
