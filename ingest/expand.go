package ingest

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/leakmap/leakmap/errs"
)

// expand turns files, folders and globs into a sorted list of files per
// argument, each file once (by its resolved path). Folders are walked with
// hidden entries skipped and symbolic links followed, as in Kubernetes'
// /var/log/containers, where every log is a link into /var/log/pods; a
// folder reached twice (a link loop, or two links to one folder) is walked
// once. An argument that yields no file at all is an errs.Input naming it: a
// case that silently loaded nothing would draft notices saying no one was
// affected.
func expand(paths []string, logger *slog.Logger) ([]string, []Skipped, error) {
	if len(paths) == 0 {
		return nil, nil, errs.Usage("no log files given")
	}
	var out []string
	var skipped []Skipped
	seen := map[string]bool{} // resolved paths
	for _, arg := range paths {
		matches := []string{arg}
		if strings.ContainsAny(arg, "*?[") {
			var err error
			if matches, err = filepath.Glob(arg); err != nil {
				return nil, nil, errs.Usage("%s: bad pattern: %w", arg, err)
			}
			if len(matches) == 0 {
				return nil, nil, errs.Input("%s: no file matches", arg)
			}
			sort.Strings(matches)
		}
		found := 0
		for _, p := range matches {
			st, err := os.Stat(p) // follows a link
			if err != nil {
				return nil, nil, errs.Input("%s: %w", p, err)
			}
			var files []string
			switch {
			case st.IsDir():
				w := walker{visited: map[string]bool{}, logger: logger}
				if err := w.walk(p); err != nil {
					return nil, nil, errs.Input("%s: %w", p, err)
				}
				sort.Strings(w.found)
				files, skipped = w.found, append(skipped, w.skipped...)
			case st.Mode().IsRegular():
				files = []string{p}
			default:
				return nil, nil, errs.Input("%s: not a regular file", p)
			}
			found += len(files)
			for _, f := range files {
				f = filepath.Clean(f)
				real, err := filepath.EvalSymlinks(f)
				if err != nil {
					return nil, nil, errs.Input("%s: %w", f, err)
				}
				if seen[real] {
					logger.Debug("the same file reached twice (a link), loaded once", "path", f, "file", real)
					continue
				}
				seen[real] = true
				out = append(out, f)
			}
		}
		if found == 0 {
			return nil, nil, errs.Input("%s: no log file found there (an empty folder, or only hidden or skipped entries); nothing would be loaded", arg)
		}
	}
	return out, skipped, nil
}

// walker gathers the files under a folder, following symbolic links.
type walker struct {
	visited map[string]bool // resolved folder paths
	found   []string
	skipped []Skipped
	logger  *slog.Logger
}

func (w *walker) walk(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if w.visited[real] {
		w.logger.Warn("folder reached again through a symbolic link (a loop, or two links to one folder): walked once",
			"folder", dir, "target", real)
		return nil
	}
	w.visited[real] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			if err != nil {
				w.skip(p, fmt.Sprintf("symbolic link to nothing readable: %v", err))
				continue
			}
			mode = st.Mode().Type()
		}
		switch {
		case mode.IsDir():
			if err := w.walk(p); err != nil {
				return err
			}
		case mode.IsRegular():
			w.found = append(w.found, p)
		default:
			w.skip(p, "not a regular file")
		}
	}
	return nil
}

func (w *walker) skip(path, reason string) {
	w.logger.Warn("skipped", "path", path, "reason", reason)
	w.skipped = append(w.skipped, Skipped{Path: path, Reason: reason})
}
