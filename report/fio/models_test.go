package fio

// The report reads volume models and gcsfuse's file cache option through the backend registry
// and fitted figures through the provenance tables; its tests link the packages that fill them,
// as the command does.
import (
	_ "persistlab/backend/gcsfuse"
	_ "persistlab/backend/volume"
	_ "persistlab/lab/bucket"
)
