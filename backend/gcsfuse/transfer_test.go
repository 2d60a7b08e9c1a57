package gcsfuse

import (
	"testing"
	"time"

	"persistlab/backend"
	"persistlab/lab/bucket"
)

// What an entry's bucket model allows its files, for plan estimates: the model's bandwidth per
// request and per-object limit, as its options set them; a bucket of the user's has no model.
func TestTransferIsTheBucketModels(t *testing.T) {
	d := bucket.DefaultModel()
	got, ok := backend.TransferOf(Name, map[string]string{"defaults": EraV24})
	if !ok || !got.WriteBack || got.WriteMiBps != d.StreamBytesPerSecond/(1<<20) || got.ObjectWriteInterval != time.Second || got.ObjectWriteBurst != d.ObjectUpdateBurst {
		t.Errorf("default model: %+v", got)
	}
	if got, _ := backend.TransferOf(Name, map[string]string{"stream_mib_s": "10", "object_update_interval": "2s"}); got.WriteMiBps != 10 || got.ObjectWriteInterval != 2*time.Second {
		t.Errorf("stream_mib_s 10, object_update_interval 2s: %+v", got)
	}
	if got, _ := backend.TransferOf(Name, map[string]string{"model": "off"}); got.WriteMiBps != 0 || got.ObjectWriteInterval != 0 || !got.WriteBack {
		t.Errorf("model off: %+v", got)
	}
	if got, ok := backend.TransferOf(Name, map[string]string{"endpoint": "http://127.0.0.1:1"}); !ok || got.WriteMiBps != 0 || !got.WriteBack {
		t.Errorf("a bucket of the user's: %+v", got)
	}
	if _, ok := backend.TransferOf(Name, map[string]string{"stream_mib_s": "fast"}); ok {
		t.Error("options the backend refuses give a model")
	}
}
