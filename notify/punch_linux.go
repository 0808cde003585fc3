package notify

import (
	"os"
	"syscall"
)

// fallocate(2)'s modes (linux/falloc.h).
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
)

// punchHole frees the disk under n bytes of f from off; reading them
// afterwards gives zeros. Not every file system can (EOPNOTSUPP).
func punchHole(f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var perr error
	if err := c.Control(func(fd uintptr) {
		perr = syscall.Fallocate(int(fd), fallocPunchHole|fallocKeepSize, off, n)
	}); err != nil {
		return err
	}
	return perr
}
