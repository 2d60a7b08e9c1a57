package volume

import "persistlab/internal/mounts"

// Mounted says whether the volume's file system is still mounted (a busy one refuses to go).
func (v *Volume) Mounted() bool {
	return v.Dir != "" && mounts.Mounted(v.Dir)
}
