package fio

// The report reads volume models through the backend registry and fitted figures through the
// provenance tables; its tests link the packages that fill them, as the command does.
import (
	_ "persistlab/backend/volume"
	_ "persistlab/lab/bucket"
)
