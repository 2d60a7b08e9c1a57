package backend

import "persistlab/lab"

// VolumeModeler describes an entry of a backend from its options; false when the entry has no
// volume model in effect (the model off).
type VolumeModeler func(options map[string]string) (lab.VolumeModel, bool)

// VolumeModelOf is the volume model of an entry of backend with options, if it has one in effect.
func VolumeModelOf(backend string, options map[string]string) (lab.VolumeModel, bool) {
	info, ok := backends.Get(backend)
	if !ok || info.VolumeModel == nil {
		return lab.VolumeModel{}, false
	}
	return info.VolumeModel(options)
}
