//go:build !unix

package notify

import (
	"errors"
	"io/fs"
	"os"
)

// writeOver is writeover_unix.go's (which says what it does and why),
// through the os package.
func writeOver(path string, data []byte, fresh bool) error {
	var f *os.File
	var err error
	if fresh {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		fresh = !errors.Is(err, fs.ErrExist)
	}
	if !fresh {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
		if errors.Is(err, fs.ErrPermission) && os.Remove(path) == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && !fresh {
		var st fs.FileInfo
		if st, err = f.Stat(); err == nil && st.Size() > int64(len(data)) {
			err = f.Truncate(int64(len(data)))
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
