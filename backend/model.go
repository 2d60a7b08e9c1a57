package backend

import (
	"persistlab/internal/registry"
	"persistlab/lab"
)

// VolumeModeler describes an entry of a backend from its options; false when the entry has no
// volume model in effect (the model off).
type VolumeModeler func(options map[string]string) (lab.VolumeModel, bool)

var volumeModels = registry.New[VolumeModeler]("backend: volume model of")

// RegisterVolumeModel says how a backend's entries describe their volume model; backends call it
// from init, beside Register. A second registration of one backend panics.
func RegisterVolumeModel(backend string, m VolumeModeler) { volumeModels.Register(backend, m) }

// VolumeModelOf is the volume model of an entry of backend with options, if it has one in effect.
func VolumeModelOf(backend string, options map[string]string) (lab.VolumeModel, bool) {
	m, ok := volumeModels.Get(backend)
	if !ok {
		return lab.VolumeModel{}, false
	}
	return m(options)
}
