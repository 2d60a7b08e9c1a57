package volume

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// ImageName is the one file the FUSE server serves: the block device's contents.
const ImageName = "disk.img"

// timing is what each block I/O passes on its way: the model, or nothing (model off, or while the
// volume is being formatted, which is not the workload's I/O).
type timing interface {
	Schedule(now time.Time, op Op) time.Time
	Flush(now time.Time) time.Time
}

// image serves a sparse file on this machine's disk as the volume's contents. Every read and
// write is done at once and answered when the model says the cloud volume would have completed
// it; after freeze every I/O fails, as the disk of a lost instance does.
type image struct {
	fs.Inode
	file  *os.File
	size  int64
	model atomic.Pointer[timing]
	// modelSet is closed when the model is next set: an I/O waiting out the old model's time is
	// answered at once (a model turned off for a stop or a set-up does not wait out the queue the
	// old one built, which on a dry HDD is minutes).
	modelSet atomic.Pointer[chan struct{}]
	frozen   atomic.Bool
	// overhead is what the path from the device to this server and back costs on this machine
	// (loop, FUSE, scheduling), measured at start: each I/O sleeps that much less, so the model's
	// service time is what a workload sees, not the model's plus the emulator's.
	overhead time.Duration
	pool     sync.Pool // *readResult
	// inFlight counts the I/Os received and not yet answered (none once the queue has drained),
	// deepest the most at once; served counts the reads and writes received (not flushes, which
	// reach the server in passthrough too).
	inFlight, deepest, served atomic.Int64
	// passthrough: each open hands the image's file to the kernel (Config.Passthrough).
	passthrough bool
}

// backed is an open image whose reads and writes the kernel does on the file itself.
type backed struct{ fd int }

func (b *backed) PassthroughFd() (int, bool) { return b.fd, true }

var (
	_ fs.NodeOpener          = (*image)(nil)
	_ fs.NodeReader          = (*image)(nil)
	_ fs.NodeWriter          = (*image)(nil)
	_ fs.NodeGetattrer       = (*image)(nil)
	_ fs.NodeSetattrer       = (*image)(nil)
	_ fs.NodeFsyncer         = (*image)(nil)
	_ fs.NodeFlusher         = (*image)(nil)
	_ fs.NodeAllocater       = (*image)(nil)
	_ fs.NodeOnAdder         = (*root)(nil)
	_ fs.NodeGetattrer       = (*root)(nil)
	_ fs.NodeStatfser        = (*root)(nil)
	_ fuse.ReadResult        = (*readResult)(nil)
	_ fs.FilePassthroughFder = (*backed)(nil)
)

func (im *image) setModel(t timing) {
	if t == nil {
		im.model.Store(nil)
	} else {
		im.model.Store(&t)
	}
	next := make(chan struct{})
	if old := im.modelSet.Swap(&next); old != nil {
		close(*old)
	}
}

// arrive counts an I/O in flight until leave.
func (im *image) arrive() {
	n := im.inFlight.Add(1)
	for d := im.deepest.Load(); n > d && !im.deepest.CompareAndSwap(d, n); d = im.deepest.Load() {
	}
}

func (im *image) leave() { im.inFlight.Add(-1) }

// wait sleeps until the model's completion time for op, measured from its arrival at.
func (im *image) wait(arrived time.Time, op Op) {
	set := im.modelSet.Load()
	if p := im.model.Load(); p != nil {
		d := time.Until((*p).Schedule(arrived, op)) - im.overhead
		if set == nil {
			sleep(d)
		} else {
			sleepUnless(d, *set)
		}
	}
}

func (im *image) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if im.frozen.Load() {
		return nil, 0, syscall.EIO
	}
	if im.passthrough {
		// Not FOPEN_DIRECT_IO: the kernel lets it override passthrough (fs/fuse/file.c). The
		// loop device opens with O_DIRECT, which the backing file then honours.
		return &backed{fd: int(im.file.Fd())}, 0, 0
	}
	// Direct I/O: the kernel keeps no page cache of the image, so every block I/O reaches us.
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (im *image) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	arrived := time.Now()
	im.arrive()
	defer im.leave()
	im.served.Add(1)
	if im.frozen.Load() {
		return nil, syscall.EIO
	}
	n, err := im.file.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, syscall.EIO
	}
	im.wait(arrived, Op{Off: off, Len: int64(n)})
	r, _ := im.pool.Get().(*readResult)
	if r == nil {
		r = &readResult{pool: &im.pool}
	}
	r.data = dest[:n]
	return r, 0
}

func (im *image) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	arrived := time.Now()
	im.arrive()
	defer im.leave()
	im.served.Add(1)
	if im.frozen.Load() {
		return 0, syscall.EIO
	}
	if off+int64(len(data)) > im.size {
		return 0, syscall.ENOSPC
	}
	n, err := writeAt(im.file, data, off)
	if err != nil {
		return uint32(n), syscall.EIO
	}
	im.wait(arrived, Op{Write: true, Off: off, Len: int64(n)})
	return uint32(n), 0
}

// imageChunk bounds the pieces the image is written in: each ends on a multiple of it. A single
// large write lets the host's file system cache the image in large folios (ext4 does on Linux
// 6.x), and every later 4 KiB write into such a folio costs several times a small folio's (9.2
// against 3.0 µs here: BenchmarkSmallWriteAfterLargeWrites); a block device's random writes
// then run at a fraction of their rate after any sequential pass.
const imageChunk = 64 << 10

// writeAt writes data at off in pieces that end on imageChunk boundaries.
func writeAt(f io.WriterAt, data []byte, off int64) (int, error) {
	done := 0
	for done < len(data) {
		end := (off+int64(done))/imageChunk*imageChunk + imageChunk
		piece := min(int64(len(data)-done), end-(off+int64(done)))
		n, err := f.WriteAt(data[done:done+int(piece)], off+int64(done))
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Fsync is a flush of the volume: what the model charges for it. The image itself needs no fsync
// on this machine: the emulated instance is lost, never this machine.
func (im *image) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	arrived := time.Now()
	im.arrive()
	defer im.leave()
	if im.frozen.Load() {
		return syscall.EIO
	}
	if p := im.model.Load(); p != nil {
		sleep(time.Until((*p).Flush(arrived)) - im.overhead)
	}
	return 0
}

func (im *image) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno { return 0 }

// Allocate passes fallocate through (the loop device's discards punch holes in the image).
func (im *image) Allocate(ctx context.Context, f fs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	if im.frozen.Load() {
		return syscall.EIO
	}
	if err := unix.Fallocate(int(im.file.Fd()), mode, int64(off), int64(size)); err != nil {
		return fs.ToErrno(err)
	}
	return 0
}

func (im *image) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o600
	out.Size = uint64(im.size)
	out.Blocks = uint64(im.size) / 512
	out.Blksize = 4096
	return 0
}

// Setattr refuses a change of size: a volume's size is set when it is made.
func (im *image) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok && int64(sz) != im.size {
		return syscall.EPERM
	}
	return im.Getattr(ctx, f, out)
}

// readResult hands a read's bytes to go-fuse and returns to its pool when sent, so a read
// allocates nothing of ours.
type readResult struct {
	data []byte
	pool *sync.Pool
}

func (r *readResult) Bytes(buf []byte) ([]byte, fuse.Status) { return r.data, fuse.OK }
func (r *readResult) Size() int                              { return len(r.data) }
func (r *readResult) Done() {
	r.data = nil
	r.pool.Put(r)
}

// root is the FUSE mount's directory, holding the image alone.
type root struct {
	fs.Inode
	img *image
}

func (r *root) OnAdd(ctx context.Context) {
	child := r.NewPersistentInode(ctx, r.img, fs.StableAttr{Mode: syscall.S_IFREG, Ino: 2})
	r.AddChild(ImageName, child, false)
}

func (r *root) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR | 0o700
	return 0
}

func (r *root) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize, out.Frsize = 4096, 4096
	out.Blocks = uint64(r.img.size) / 4096
	return 0
}

// serve mounts the FUSE file system holding the image at dir.
func serve(dir string, img *image) (*fuse.Server, error) {
	to := time.Hour // the image never changes behind the kernel's back
	return fs.Mount(dir, &root{img: img}, &fs.Options{
		EntryTimeout: &to, AttrTimeout: &to,
		MountOptions: fuse.MountOptions{
			FsName: "persistlab-volume", Name: "persistlab", DirectMount: true,
			DisableSplice: true,    // a 1 MiB write and its header exceed a pipe: copy instead
			MaxWrite:      1 << 20, // a 1 MiB I/O arrives whole where the kernel allows it
			// Deep queues of asynchronous direct I/O, as fio's iodepth asks: the kernel's default
			// of 12 in flight would cap every volume's queue depth.
			MaxBackground:     1024,
			ExtraCapabilities: fuse.CAP_ASYNC_DIO,
		},
	})
}
